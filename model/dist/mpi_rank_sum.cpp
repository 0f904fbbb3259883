#include "model/dist/mpi_rank_sum.h"

#include "codelets/accumulate.h"

#include <mpi.h>
#include <starpu_mpi.h>

#include <stdexcept>
#include <string>

namespace starcnn {
namespace {

void check(int ret, const char *what) {
  if (ret != 0)
    throw std::runtime_error(std::string("StarPU-MPI: ") + what + " failed (error " +
                             std::to_string(ret) + ")");
}

}  // namespace

MpiRankSum::MpiRankSum(int rank, int size) : rank_(rank), size_(size) {}

MpiRankSum::~MpiRankSum() {
  for (auto &[handle, slot] : slots_)
    for (starpu_data_handle_t copy : slot.incoming) starpu_data_unregister_submit(copy);
}

MpiRankSum::Slot &MpiRankSum::slot(starpu_data_handle_t handle) {
  const auto found = slots_.find(handle);
  if (found != slots_.end()) return found->second;
  Slot slot;
  slot.tag = 2 * int64_t(slots_.size());
  slot.bytes = starpu_data_get_size(handle);
  if (rank_ == 0)
    for (int r = 1; r < size_; ++r) {
      starpu_data_handle_t copy = nullptr;
      starpu_data_register_same(&copy, handle);
      slot.incoming.push_back(copy);
    }
  return slots_.emplace(handle, std::move(slot)).first->second;
}

void MpiRankSum::sum_handle(starpu_data_handle_t handle) {
  const Slot &s = slot(handle);
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) {
      check(starpu_mpi_irecv_detached(s.incoming[size_t(r - 1)], r, s.tag, MPI_COMM_WORLD, nullptr,
                                      nullptr),
            "receiving a gradient");
      submit_add_into(handle, s.incoming[size_t(r - 1)]);
    }
    for (int r = 1; r < size_; ++r)
      check(starpu_mpi_isend_detached(handle, r, s.tag + 1, MPI_COMM_WORLD, nullptr, nullptr),
            "sending the summed gradient");
    sent_ += uint64_t(size_ - 1) * s.bytes;
    received_ += uint64_t(size_ - 1) * s.bytes;
  } else {
    check(starpu_mpi_isend_detached(handle, 0, s.tag, MPI_COMM_WORLD, nullptr, nullptr),
          "sending a gradient");
    check(starpu_mpi_irecv_detached(handle, 0, s.tag + 1, MPI_COMM_WORLD, nullptr, nullptr),
          "receiving the summed gradient");
    sent_ += s.bytes;
    received_ += s.bytes;
  }
}

void MpiRankSum::sum_gradients(ParameterSet &params) {
  for (const auto &param : params.all())
    for (size_t p = 0; p < param->part_count(); ++p) sum_handle(param->grad(p).handle());
}

void MpiRankSum::sum(const Tensor &tensor) {
  sum_handle(tensor.handle());
}

}  // namespace starcnn
