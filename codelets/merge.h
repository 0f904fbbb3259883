// Merge of the pieces of a split convolution's output, Y_1..Y_k -> Y [n, C, H, W], and its
// backward, split dY -> dY_1..dY_k. A piece holds channels [c0, c0 + c) of samples [s0, s0 + m),
// stored [m, c, H, W]: a filter part (all samples), or a sample block of one (a CPU part cut by
// samples). Any handle may hold a sub-batch.
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

// The task argument: fixed size, unused entries zero (the footprint hashes every byte).
struct MergeShape {
  uint32_t n = 1;                               // samples of the whole
  uint32_t hw = 1;                              // H * W
  uint32_t c = 0;                               // channels of the whole
  uint32_t parts = 0;                           // pieces, k
  uint32_t channels[kMaxMergeParts] = {};       // c of each piece
  uint32_t first_channel[kMaxMergeParts] = {};  // c0
  uint32_t samples[kMaxMergeParts] = {};        // m
  uint32_t first_sample[kMaxMergeParts] = {};   // s0

  uint32_t total_channels() const { return c; }
  size_t part_count(uint32_t p) const { return size_t(samples[p]) * channels[p] * hw; }
  size_t whole_count() const { return size_t(n) * c * hw; }
  bool operator==(const MergeShape &other) const;
};

// Filter parts of `channels` each (in channel order), every one holding all n samples. Throws
// std::invalid_argument for no parts, too many, or a zero-channel part.
MergeShape make_merge_shape(uint32_t n, uint32_t hw, const std::vector<uint32_t> &channels);

// One piece of a merge: channels [first_channel, +channels) of samples [first_sample, +samples).
struct MergePiece {
  uint32_t first_channel = 0, channels = 0, first_sample = 0, samples = 0;
};
// Pieces that tile the whole [n, c, H, W] exactly once; throws std::invalid_argument otherwise.
MergeShape make_merge_shape(uint32_t n, uint32_t hw, uint32_t c,
                            const std::vector<MergePiece> &pieces);

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
