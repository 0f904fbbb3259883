// Merge of filter slices along channels, Y_1..Y_k [n, c_p, H, W] -> Y [n, C, H, W] with
// C = sum of c_p, and its backward, split dY -> dY_1..dY_k. Any handle may hold a sub-batch.
#pragma once

#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

constexpr uint32_t kMaxMergeParts = 64;

// The task argument: fixed size, unused channel entries zero (the footprint hashes every byte).
struct MergeShape {
  uint32_t n = 1;                          // samples
  uint32_t hw = 1;                         // H * W
  uint32_t parts = 0;                      // k
  uint32_t channels[kMaxMergeParts] = {};  // c_p of each part, in channel order

  uint32_t total_channels() const;
  size_t part_count(uint32_t p) const { return size_t(n) * channels[p] * hw; }
  size_t whole_count() const { return size_t(n) * total_channels() * hw; }
};

// Throws std::invalid_argument for no parts, too many, or a zero-channel part.
MergeShape make_merge_shape(uint32_t n, uint32_t hw, const std::vector<uint32_t> &channels);

void merge_cpu(const MergeShape &shape, const float *const *parts, float *whole);
void split_cpu(const MergeShape &shape, const float *whole, float *const *parts);
#ifdef STARCNN_USE_CUDA
void merge_cuda(const MergeShape &shape, const float *const *parts, float *whole,
                cudaStream_t stream);
void split_cuda(const MergeShape &shape, const float *whole, float *const *parts,
                cudaStream_t stream);
#endif

extern starpu_codelet merge_codelet;  // buffers: parts (R)..., whole (W)
extern starpu_codelet split_codelet;  // buffers: whole (R), parts (W)...

void submit_merge(const std::vector<starpu_data_handle_t> &parts, starpu_data_handle_t whole,
                  const MergeShape &shape, Where where = Where::any, int priority = 0);
void submit_split(starpu_data_handle_t whole, const std::vector<starpu_data_handle_t> &parts,
                  const MergeShape &shape, Where where = Where::any, int priority = 0);

}  // namespace starcnn
