#include "codelets/softmax_xent.h"
#include "codelets/support/cuda_support.h"

#include <algorithm>

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

// Each warp sums its rows in double, the block adds its warps' sums in shared memory, and one
// thread adds the block's total into the float stats: at most kMaxForwardBlocks float additions
// into the running total, so rounding stays small even over hundreds of thousands of rows.
constexpr unsigned kMaxForwardBlocks = 1024;

__global__ void softmax_xent_forward_kernel(const float *z, const int32_t *labels, float *stats,
                                            SoftmaxXentShape shape) {
  __shared__ double warp_loss[kRowsPerBlock], warp_correct[kRowsPerBlock];
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  double loss_sum = 0.0, correct = 0.0;
  // Rows are strided by warps; every lane of a warp takes the same rows, so shuffles stay
  // converged.
  for (size_t i : grid_stride(shape.n, kWarp)) {
    const float *row = z + i * shape.classes;
    const RowSummary s = summarise_row(row, shape.classes, lane);
    const int32_t label = labels[i];
    const bool valid = valid_label(label, shape.classes);
    loss_sum += valid ? double(logf(s.exp_sum) - (row[label] - s.max)) : double(NAN);
    if (valid && s.argmax == uint32_t(label)) correct += 1.0;
  }
  if (lane == 0) warp_loss[warp] = loss_sum, warp_correct[warp] = correct;
  __syncthreads();
  if (threadIdx.x == 0) {
    double block_loss = 0.0, block_correct = 0.0;
    for (unsigned w = 0; w < kRowsPerBlock; ++w)
      block_loss += warp_loss[w], block_correct += warp_correct[w];
    if (block_loss != 0.0 || block_correct != 0.0) {
      atomicAdd(&stats[0], float(block_loss));
      atomicAdd(&stats[1], float(block_correct));
    }
  }
}

__global__ void softmax_xent_backward_kernel(const float *z, const int32_t *labels, float *dz,
                                             SoftmaxXentShape shape, float scale) {
  const unsigned lane = threadIdx.x % kWarp;
  for (size_t i : grid_stride(shape.n, kWarp)) {  // a row per warp, as above
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

unsigned row_blocks(uint32_t rows) {
  const unsigned blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return blocks == 0 ? 1 : (blocks < 65535 ? blocks : 65535);
}

}  // namespace

void softmax_xent_forward_cuda(const float *z, const int32_t *labels, float *stats,
                               const SoftmaxXentShape &shape, cudaStream_t stream) {
  const unsigned blocks = std::min(row_blocks(shape.n), kMaxForwardBlocks);
  softmax_xent_forward_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(z, labels, stats, shape);
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
