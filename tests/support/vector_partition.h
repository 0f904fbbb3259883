// Cutting a registered vector into consecutive sub-handles (sub-batches, filter slices) for tests.
#pragma once

#include <starpu.h>

#include <cstdint>
#include <vector>

namespace starcnn::testing {

// Cuts a vector handle into consecutive pieces of the given element counts (e.g. sub-batches or
// filter slices). Undo with starpu_data_unpartition(handle, STARPU_MAIN_RAM).
inline std::vector<starpu_data_handle_t> partition_vector(starpu_data_handle_t handle,
                                                          std::vector<uint32_t> lengths) {
  starpu_data_filter filter{};
  filter.filter_func = starpu_vector_filter_list;
  filter.nchildren = unsigned(lengths.size());
  filter.filter_arg_ptr = lengths.data();
  starpu_data_partition(handle, &filter);
  std::vector<starpu_data_handle_t> parts;
  for (unsigned p = 0; p < lengths.size(); ++p)
    parts.push_back(starpu_data_get_sub_data(handle, 1, p));
  return parts;
}

// Cuts a handle of samples of `width` floats each into sub-batches of the given sample counts.
inline std::vector<starpu_data_handle_t> partition_samples(starpu_data_handle_t handle,
                                                           const std::vector<uint32_t> &samples,
                                                           uint32_t width) {
  std::vector<uint32_t> lengths;
  for (uint32_t count : samples) lengths.push_back(count * width);
  return partition_vector(handle, lengths);
}

}  // namespace starcnn::testing
