#include "codelets/cuda_support.h"
#include "codelets/softmax_xent.h"

namespace starcnn {
namespace {

// One warp per row: rows are short (classes), and a warp reduces them with shuffles alone.
constexpr unsigned kWarp = 32;
constexpr unsigned kRowsPerBlock = kThreadsPerBlock / kWarp;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr uint32_t kNone = 0xffffffffu;

struct RowSummary {
  float max;
  uint32_t argmax;  // the first index holding max, as on the CPU
  float exp_sum;    // sum(exp(z - max))
};

__device__ RowSummary summarise_row(const float *row, uint32_t classes, unsigned lane) {
  float best = -INFINITY;
  uint32_t at = kNone;
  for (uint32_t j = lane; j < classes; j += kWarp)
    if (at == kNone || row[j] > best) best = row[j], at = j;
  // Larger value wins, then the smaller index: the same order on every lane, so all agree.
  for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
    const float other_best = __shfl_xor_sync(kFullMask, best, offset);
    const uint32_t other_at = __shfl_xor_sync(kFullMask, at, offset);
    if (other_at != kNone &&
        (at == kNone || other_best > best || (other_best == best && other_at < at)))
      best = other_best, at = other_at;
  }
  float sum = 0.0f;
  for (uint32_t j = lane; j < classes; j += kWarp) sum += expf(row[j] - best);
  for (unsigned offset = kWarp / 2; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(kFullMask, sum, offset);
  return {best, at, sum};
}

__device__ bool valid_label(int32_t label, uint32_t classes) {
  return label >= 0 && uint32_t(label) < classes;
}

// Rows are strided by warps; every lane of a warp takes the same rows, so shuffles stay converged.
#define FOR_EACH_ROW_OF_THIS_WARP(i, n)                                             \
  for (size_t i = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) / kWarp; i < (n); \
       i += size_t(gridDim.x) * blockDim.x / kWarp)

// Each warp sums its rows in lane 0, which then adds them into the stats once (warps without
// rows add nothing): no host sync, and few atomics even when warps take several rows.
__global__ void softmax_xent_forward_kernel(const float *z, const int32_t *labels, float *stats,
                                            SoftmaxXentShape shape) {
  const unsigned lane = threadIdx.x % kWarp;
  float loss_sum = 0.0f, correct = 0.0f;
  FOR_EACH_ROW_OF_THIS_WARP(i, shape.n) {
    const float *row = z + i * shape.classes;
    const RowSummary s = summarise_row(row, shape.classes, lane);
    const int32_t label = labels[i];
    const bool valid = valid_label(label, shape.classes);
    loss_sum += valid ? logf(s.exp_sum) - (row[label] - s.max) : NAN;
    if (valid && s.argmax == uint32_t(label)) correct += 1.0f;
  }
  if (lane == 0 && (loss_sum != 0.0f || correct != 0.0f)) {
    atomicAdd(&stats[0], loss_sum);
    atomicAdd(&stats[1], correct);
  }
}

__global__ void softmax_xent_backward_kernel(const float *z, const int32_t *labels, float *dz,
                                             SoftmaxXentShape shape, float scale) {
  const unsigned lane = threadIdx.x % kWarp;
  FOR_EACH_ROW_OF_THIS_WARP(i, shape.n) {
    const float *row = z + i * shape.classes;
    float *drow = dz + i * shape.classes;
    const RowSummary s = summarise_row(row, shape.classes, lane);
    const int32_t label = labels[i];
    const float poison = valid_label(label, shape.classes) ? 0.0f : NAN;
    for (uint32_t j = lane; j < shape.classes; j += kWarp) {
      const float onehot = int32_t(j) == label ? 1.0f : 0.0f;
      drow[j] = (expf(row[j] - s.max) / s.exp_sum - onehot) * scale + poison;
    }
  }
}

#undef FOR_EACH_ROW_OF_THIS_WARP

unsigned row_blocks(uint32_t rows) {
  const unsigned blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return blocks == 0 ? 1 : (blocks < 65535 ? blocks : 65535);
}

}  // namespace

void softmax_xent_forward_cuda(const float *z, const int32_t *labels, float *stats,
                               const SoftmaxXentShape &shape, cudaStream_t stream) {
  softmax_xent_forward_kernel<<<row_blocks(shape.n), kThreadsPerBlock, 0, stream>>>(z, labels,
                                                                                    stats, shape);
  check_launch("softmax_xent_forward");
}

void softmax_xent_backward_cuda(const float *z, const int32_t *labels, float *dz,
                                const SoftmaxXentShape &shape, uint32_t batch_size,
                                cudaStream_t stream) {
  softmax_xent_backward_kernel<<<row_blocks(shape.n), kThreadsPerBlock, 0, stream>>>(
      z, labels, dz, shape, 1.0f / float(batch_size));
  check_launch("softmax_xent_backward");
}

}  // namespace starcnn
