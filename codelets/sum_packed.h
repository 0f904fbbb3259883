// Several vectors summed into consecutive slices of one packed vector, in one CPU task: a sample
// split's CPU micro-batches hand their summed weight gradients to the GPU as one vector (one copy
// across the bus, not one per parameter), and the weights come back packed the same way (a group
// of one vector is a copy). Under the H200's MPS cap the ~20 small copies and sums a step took
// 1.5 ms of lenet b256's 3.0 ms samples:136 step (perf/results/h200-2026-12-04-a).
#pragma once

#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

// packed[offset(g) + i] = groups[g][0][i] + groups[g][1][i] + ..., where group g's slice starts
// after the slices of groups 0 .. g-1; every vector of a group has the group's length n[g].
// With `skip` and `length`, only elements [skip, skip + length) of that concatenation, written
// from packed[0] (a slice of the whole packed vector, whose first group starts `skip` before it).
// With `accumulate`, packed[...] += that sum instead.
void sum_packed_cpu(float *packed, const float *const *const *groups, size_t group_count,
                    size_t per_group, const size_t *n, size_t skip = 0, size_t length = SIZE_MAX,
                    bool accumulate = false);

#ifdef STARCNN_USE_CUDA
// The same on the GPU, with the same additions in the same order (the same bits): a sample
// split's GPU side packs its gradients for the CPU side's copy of the update.
void sum_packed_cuda(float *packed, const float *const *const *groups, size_t group_count,
                     size_t per_group, const size_t *n, cudaStream_t stream);
#endif

// R each group's vectors in turn, then W packed (or a slice of it: CPU only).
extern starpu_codelet sum_packed_codelet;

// One task on the workers of `where`: every group has the same number of vectors. Throws
// std::invalid_argument for no groups, groups of differing sizes or lengths, or a packed vector
// whose length is not the sum of the groups' lengths.
void submit_sum_packed(const std::vector<std::vector<starpu_data_handle_t>> &groups,
                       starpu_data_handle_t packed, Where where = Where::cpu, int priority = 0);

// One CPU task writing one slice of a packed vector: `groups` are the groups the slice overlaps,
// the first starting `skip` elements before the slice; slices of one vector sum side by side on
// several CPU workers (`where`: Where::cpu, or one CPU worker). Throws std::invalid_argument
// where the slice does not start inside the first group, runs past the last, or leaves the last
// group untouched, or for a `where` that is not the CPU's.
void submit_sum_packed_slice(const std::vector<std::vector<starpu_data_handle_t>> &groups,
                             starpu_data_handle_t slice, size_t skip, Where where = Where::cpu,
                             int priority = 0);

// packed += `vectors` packed (vector g into group g's slice), one CPU task with packed in
// STARPU_RW | STARPU_COMMUTE: each CPU chain of a sample split adds its gradients as soon as it
// ends, in whatever order the chains end, so only the last chain's add is left when the last
// chain ends. Throws std::invalid_argument for no vectors, a packed vector whose length is not
// theirs summed, or a `where` that is not the CPU's.
void submit_add_packed(const std::vector<starpu_data_handle_t> &vectors,
                       starpu_data_handle_t packed, Where where = Where::cpu, int priority = 0);

}  // namespace starcnn
