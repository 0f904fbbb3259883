// Merge and split on the GPU: one strided asynchronous copy per part on the worker's stream.
#include "codelets/merge.h"

namespace starcnn {
namespace {

// Copies rows x width bytes between two pitched layouts, device to device.
void copy_rows(float *dst, size_t dst_pitch, const float *src, size_t src_pitch, size_t width,
               size_t rows, cudaStream_t stream) {
  const cudaError_t status = cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows,
                                               cudaMemcpyDeviceToDevice, stream);
  if (status != cudaSuccess) STARPU_CUDA_REPORT_ERROR(status);
}

}  // namespace

void merge_cuda(const MergeShape &s, const float *const *parts, float *whole, cudaStream_t stream) {
  const size_t whole_sample = size_t(s.c) * s.hw;
  for (uint32_t p = 0; p < s.parts; ++p) {
    const size_t run = size_t(s.channels[p]) * s.hw;
    copy_rows(whole + s.first_sample[p] * whole_sample + size_t(s.first_channel[p]) * s.hw,
              whole_sample * sizeof(float), parts[p], run * sizeof(float), run * sizeof(float),
              s.samples[p], stream);
  }
}

void split_cuda(const MergeShape &s, const float *whole, float *const *parts, cudaStream_t stream) {
  const size_t whole_sample = size_t(s.c) * s.hw;
  for (uint32_t p = 0; p < s.parts; ++p) {
    const size_t run = size_t(s.channels[p]) * s.hw;
    copy_rows(parts[p], run * sizeof(float),
              whole + s.first_sample[p] * whole_sample + size_t(s.first_channel[p]) * s.hw,
              whole_sample * sizeof(float), run * sizeof(float), s.samples[p], stream);
  }
}

}  // namespace starcnn
