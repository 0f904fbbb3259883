// RankSum over StarPU-MPI, by reduce and broadcast: every rank sends its copy to rank 0, which adds
// them into its own in rank order (so the result does not depend on arrival order), then sends the
// sum back. All of it is submitted without waiting: StarPU-MPI's detached requests take part in
// StarPU's data dependencies like tasks. Bytes per step and rank: (N-1) x the parameters on rank
// 0 each way, the parameters each way on the others.
#pragma once

#include "model/dist/rank_sum.h"

#include <starpu.h>

#include <cstdint>
#include <map>
#include <vector>

namespace starcnn {

class MpiRankSum : public RankSum {
 public:
  MpiRankSum(int rank, int size);
  ~MpiRankSum() override;
  void sum_gradients(ParameterSet &params) override;
  void sum(const Tensor &tensor) override;
  uint64_t bytes_sent() const override { return sent_; }
  uint64_t bytes_received() const override { return received_; }

 private:
  // What one summed handle needs: its MPI tags, and on rank 0 a receiving copy per other rank.
  struct Slot {
    int64_t tag = 0;  // tag: to rank 0; tag + 1: back from rank 0
    size_t bytes = 0;
    std::vector<starpu_data_handle_t> incoming;
  };
  Slot &slot(starpu_data_handle_t handle);
  void sum_handle(starpu_data_handle_t handle);

  int rank_, size_;
  // Slots are made in the order of the first sum of each handle, which is the same on every rank.
  std::map<starpu_data_handle_t, Slot> slots_;
  uint64_t sent_ = 0, received_ = 0;
};

}  // namespace starcnn
