// The training settings of the tests that train a small network side by side in two ways: steps
// of 8 samples, a learning rate that moves the weights visibly, the loss read every step.
#pragma once

#include "model/nn/parameter_set.h"
#include "model/train/trainer.h"

#include <atomic>
#include <vector>

namespace starcnn::testing {

inline TrainConfig small_training_config() {
  TrainConfig config;
  config.batch = 8;
  config.lr = 0.05f;
  config.log_every = 1;
  return config;
}

// The losses read at every step of two epochs, then the weights and momentum buffers.
struct TrainedWeights {
  std::vector<double> losses;
  std::vector<NamedTensor> weights, momenta;
};

inline TrainedWeights train_two_epochs(Trainer &trainer, ParameterSet &params) {
  TrainedWeights run;
  const std::atomic<bool> stop{false};
  for (size_t epoch = 0; epoch < 2; ++epoch)
    trainer.train_epoch(
        epoch, [&](const Progress &p) { run.losses.push_back(p.loss); }, stop);
  run.weights = params.read(false);
  run.momenta = params.read(true);
  return run;
}

}  // namespace starcnn::testing
