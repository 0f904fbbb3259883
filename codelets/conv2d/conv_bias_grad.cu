#include "codelets/conv2d/conv_bias_grad.h"
#include "codelets/support/cuda_support.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace starcnn {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
// Enough blocks to fill an H200 (132 multiprocessors) twice over when channels are few.
constexpr uint32_t kTargetBlocks = 264;

// How many runs of samples each channel's sum is cut into.
uint32_t sample_runs(const Conv2dShape &s) {
  const uint32_t wanted = (kTargetBlocks + s.c_out - 1) / s.c_out;
  return std::max(1u, std::min(wanted, s.n));
}

// Block (run, channel): the sum of dY over its samples' planes of that channel, by a fixed order
// (each thread strides the run's elements, then a tree through the warps).
__global__ void bias_partial_kernel(const float *dy, float *partial, uint32_t samples,
                                    uint32_t channels, uint32_t plane, uint32_t runs) {
  const uint32_t run = blockIdx.x, c = blockIdx.y;
  const uint32_t per_run = (samples + runs - 1) / runs;
  const uint32_t first = run * per_run, last = min(samples, first + per_run);
  const size_t count = last > first ? size_t(last - first) * plane : 0;
  float sum = 0.0f;
  for (size_t j = threadIdx.x; j < count; j += blockDim.x) {
    const size_t n = first + j / plane, pixel = j % plane;
    sum += dy[(n * channels + c) * plane + pixel];
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(kFullMask, sum, offset);
  __shared__ float warp_sums[kThreadsPerBlock / 32];
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp != 0) return;
  sum = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(kFullMask, sum, offset);
  if (lane == 0) partial[size_t(c) * runs + run] = sum;
}

__global__ void bias_total_kernel(const float *partial, float *db, uint32_t channels, uint32_t runs,
                                  bool accumulate) {
  for (size_t c : grid_stride(channels)) {
    float sum = 0.0f;
    for (uint32_t r = 0; r < runs; ++r) sum += partial[c * runs + r];
    db[c] = accumulate ? db[c] + sum : sum;
  }
}

}  // namespace

bool use_conv_bias_grad_kernels() {
  static const bool enabled = [] {
    const char *value = std::getenv("STARCNN_BIAS_GRAD");
    return value == nullptr || std::string(value) != "cudnn";
  }();
  return enabled;
}

size_t conv_bias_grad_workspace_bytes(const Conv2dShape &s) {
  return size_t(s.c_out) * sample_runs(s) * sizeof(float);
}

void conv_bias_grad_cuda(const Conv2dShape &s, const float *dy, float *db, bool accumulate,
                         void *workspace, cudaStream_t stream) {
  if (s.c_out == 0) return;
  const uint32_t runs = sample_runs(s);
  float *partial = static_cast<float *>(workspace);
  bias_partial_kernel<<<dim3(runs, s.c_out), kThreadsPerBlock, 0, stream>>>(
      dy, partial, s.n, s.c_out, s.out_h() * s.out_w(), runs);
  check_launch("conv_bias_partial");
  bias_total_kernel<<<grid_for(s.c_out), kThreadsPerBlock, 0, stream>>>(partial, db, s.c_out, runs,
                                                                        accumulate);
  check_launch("conv_bias_total");
}

}  // namespace starcnn
