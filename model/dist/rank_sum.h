// The cross-rank sum of a data-parallel run: after each rank's backward pass, every parameter
// gradient becomes the sum of all ranks' gradients on every rank, so that every rank applies the
// same SGD update; the loss statistics are summed the same way before the host reads them.
// The Trainer sees only this interface; model/dist/mpi_rank_sum.cpp does it with StarPU-MPI.
#pragma once

#include "model/nn/parameter_set.h"
#include "model/nn/tensor.h"

#include <cstdint>

namespace starcnn {

class RankSum {
 public:
  virtual ~RankSum() = default;
  // Submits, without waiting, the sum of every gradient part of `params` across ranks.
  virtual void sum_gradients(ParameterSet &params) = 0;
  // Submits, without waiting, the sum of `tensor` across ranks (the loss statistics).
  virtual void sum(const Tensor &tensor) = 0;
  // Bytes this rank has sent to and received from other ranks so far.
  virtual uint64_t bytes_sent() const = 0;
  virtual uint64_t bytes_received() const = 0;
};

}  // namespace starcnn
