#include "codelets/sgd.h"
#include "codelets/support/cuda_support.h"

namespace starcnn {
namespace {

// Same float operations in the same order as sgd_update_cpu.
__global__ void sgd_update_kernel(float *w, const float *grad, float *momentum_buf, size_t n,
                                  SgdParams p) {
  const bool use_buffer = p.momentum != 0.0f;
  for (size_t i : grid_stride(n)) {
    const float g = __fadd_rn(grad[i], __fmul_rn(p.weight_decay, w[i]));
    float step = g;
    if (use_buffer) {
      step = p.first_step ? g : __fadd_rn(__fmul_rn(p.momentum, momentum_buf[i]), g);
      momentum_buf[i] = step;
    }
    w[i] = __fsub_rn(w[i], __fmul_rn(p.lr, step));
  }
}

}  // namespace

void sgd_update_cuda(float *w, const float *grad, float *momentum_buf, size_t n,
                     const SgdParams &params, cudaStream_t stream) {
  sgd_update_kernel<<<grid_for(n), kThreadsPerBlock, 0, stream>>>(w, grad, momentum_buf, n, params);
  check_launch("sgd_update");
}

}  // namespace starcnn
