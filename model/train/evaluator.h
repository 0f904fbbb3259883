// Forward-only passes over a data set with a trained ParameterSet: loss and accuracy of a whole
// data set, or the classes and probabilities of every sample. Batches are independent, so the
// evaluator keeps several Networks ("slots", each with its own input tensors) on the shared
// parameters and submits batch b to slot b % slots without waiting: StarPU runs the slots'
// batches at once on whichever CPU and CUDA workers are free, and orders a slot's next batch
// after its previous one. The short last batch gets a network of its own size.
#pragma once

#include "model/data/dataset.h"
#include "model/nn/network.h"
#include "model/nn/parameter_set.h"
#include "model/nn/tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace starcnn {

struct Evaluation {
  size_t samples = 0;
  double loss = 0, accuracy = 0, images_per_s = 0, seconds = 0;
};

struct Classification {
  size_t samples = 0;
  int classes = 0;
  std::vector<int32_t> predicted;    // [samples], argmax of the logits (first on ties)
  std::vector<float> logits;         // [samples, classes]
  std::vector<float> probabilities;  // [samples, classes], softmax of the logits
  double images_per_s = 0, seconds = 0;
};

// The slot count used when none is asked for: one per StarPU worker, at least 2, at most 8.
size_t default_evaluator_slots();

class Evaluator {
 public:
  // `batch` samples per batch (> 0); `slots` networks taking batches in turn (0: the default).
  // Needs StarPU started. Throws std::invalid_argument as Network does.
  Evaluator(const NetworkSpec &spec, ParameterSet &params, size_t batch, size_t slots = 0);
  ~Evaluator();
  Evaluator(const Evaluator &) = delete;
  Evaluator &operator=(const Evaluator &) = delete;

  size_t batch() const { return batch_; }
  size_t slots() const { return slot_count_; }

  // Mean softmax cross-entropy and accuracy over every sample of `data`, in data set order.
  // The data set's sample shape must be the network's input.
  Evaluation evaluate(const Dataset &data);
  // Logits, probabilities and predicted class of every sample of `data` (labels are ignored).
  Classification classify(const Dataset &data);

 private:
  struct Slot {
    std::unique_ptr<Network> network;
    Tensor images, labels;
  };
  Slot &slot_for(size_t b, size_t batch_size, const Dataset &data);
  void check_fits(const Dataset &data) const;

  const NetworkSpec &spec_;
  ParameterSet &params_;
  size_t batch_, slot_count_;
  std::vector<Slot> slots_;  // full-size batches, made as needed
  Slot short_;               // the last batch when it is shorter
  Tensor stats_;
};

}  // namespace starcnn
