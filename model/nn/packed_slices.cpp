#include "model/nn/packed_slices.h"

#include <stdexcept>
#include <string>

namespace starcnn {

PackedSlices::PackedSlices(starpu_data_handle_t whole, size_t slices) : whole_(whole) {
  const size_t n = starpu_vector_get_nx(whole);
  if (slices == 0 || slices > n)
    throw std::invalid_argument("cannot cut a vector of " + std::to_string(n) + " elements into " +
                                std::to_string(slices) + " slices");
  starpu_data_filter filter{};
  filter.filter_func = starpu_vector_filter_block;
  filter.nchildren = unsigned(slices);
  children_.resize(slices);
  starpu_data_partition_plan(whole, &filter, children_.data());
  first_.push_back(0);
  for (starpu_data_handle_t child : children_)
    first_.push_back(first_.back() + starpu_vector_get_nx(child));
}

PackedSlices::~PackedSlices() {
  starpu_data_partition_clean(whole_, unsigned(children_.size()), children_.data());
}

void PackedSlices::submit_cut() {
  starpu_data_partition_submit(whole_, unsigned(children_.size()), children_.data());
}

void PackedSlices::submit_join() {
  starpu_data_unpartition_submit(whole_, unsigned(children_.size()), children_.data(),
                                 STARPU_MAIN_RAM);
}

}  // namespace starcnn
