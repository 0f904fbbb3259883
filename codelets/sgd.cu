#include "codelets/sgd.h"
#include "codelets/support/cuda_support.h"

namespace starcnn {
namespace {

// Up to kMaxSgdVectorsPerLaunch vectors, passed by value as the kernel's argument (no device
// table to allocate inside a task). Vector v owns blocks [first_block[v], first_block[v + 1]).
struct SgdLaunchTable {
  float *w[kMaxSgdVectorsPerLaunch];
  const float *grad[kMaxSgdVectorsPerLaunch];
  float *momentum_buf[kMaxSgdVectorsPerLaunch];
  const float *extra_grad[kMaxSgdVectorsPerLaunch];  // may be null
  float *w_copy[kMaxSgdVectorsPerLaunch];            // may be null
  size_t n[kMaxSgdVectorsPerLaunch];
  unsigned first_block[kMaxSgdVectorsPerLaunch + 1];
  unsigned count;
};

// Same float operations in the same order as sgd_update_cpu.
__global__ void sgd_update_kernel(SgdLaunchTable t, SgdParams p) {
  unsigned v = 0;
  while (v + 1 < t.count && t.first_block[v + 1] <= blockIdx.x) ++v;
  const size_t blocks = t.first_block[v + 1] - t.first_block[v];
  const size_t step = blocks * blockDim.x;
  float *w = t.w[v], *momentum_buf = t.momentum_buf[v];
  const float *grad = t.grad[v], *extra = t.extra_grad[v];
  float *copy = t.w_copy[v];
  const bool use_buffer = p.momentum != 0.0f;
  for (size_t i = (blockIdx.x - t.first_block[v]) * size_t(blockDim.x) + threadIdx.x; i < t.n[v];
       i += step) {
    const float total = extra ? __fadd_rn(grad[i], extra[i]) : grad[i];
    const float g = __fadd_rn(total, __fmul_rn(p.weight_decay, w[i]));
    float s = g;
    if (use_buffer) {
      s = p.first_step ? g : __fadd_rn(__fmul_rn(p.momentum, momentum_buf[i]), g);
      momentum_buf[i] = s;
    }
    w[i] = __fsub_rn(w[i], __fmul_rn(p.lr, s));
    if (copy) copy[i] = w[i];
  }
}

}  // namespace

void sgd_update_cuda(const SgdVector *vectors, size_t count, const SgdParams &params,
                     cudaStream_t stream) {
  for (size_t first = 0; first < count; first += kMaxSgdVectorsPerLaunch) {
    SgdLaunchTable table{};
    table.count =
        unsigned(count - first < kMaxSgdVectorsPerLaunch ? count - first : kMaxSgdVectorsPerLaunch);
    for (unsigned v = 0; v < table.count; ++v) {
      const SgdVector &x = vectors[first + v];
      table.w[v] = x.w;
      table.grad[v] = x.grad;
      table.momentum_buf[v] = x.momentum_buf;
      table.extra_grad[v] = x.extra_grad;
      table.w_copy[v] = x.w_copy;
      table.n[v] = x.n;
      table.first_block[v + 1] = table.first_block[v] + grid_for(x.n);
    }
    sgd_update_kernel<<<table.first_block[table.count], kThreadsPerBlock, 0, stream>>>(table,
                                                                                       params);
    check_launch("sgd_update");
  }
}

}  // namespace starcnn
