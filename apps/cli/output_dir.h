// train --output-dir DIR: a run's checkpoints in one folder, as torchvision's reference training
// scripts keep them: epoch-001.safetensors, ... (one per completed epoch), last.safetensors
// (after every epoch, a stopped one too: what --resume takes) and best.safetensors (the completed
// epoch of best score so far in this run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace starcnn {

// Creates `dir` (and its parents) when missing and checks that checkpoints can be written there,
// before training starts; throws AtomicFileError naming the folder and the system's reason.
void prepare_output_dir(const std::string &dir);

// "DIR/epoch-007.safetensors" for the checkpoint after epoch 7 (counted from 1, as printed).
std::string epoch_checkpoint_path(const std::string &dir, int64_t epoch);
std::string last_checkpoint_path(const std::string &dir);
std::string best_checkpoint_path(const std::string &dir);

// The best epoch so far: the highest score (test accuracy, or minus the training loss where
// there is no evaluation); a tie keeps the earlier epoch.
class BestEpoch {
 public:
  // True when `score` beats every score offered before (the first always does).
  bool offer(double score);

 private:
  std::optional<double> best_;
};

}  // namespace starcnn
