#include "model/train/evaluator.h"

#include "codelets/accumulate.h"
#include "model/data/batch_loader.h"

#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace starcnn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Softmax of one row and its argmax (first maximum on ties), in double for the sums.
int32_t softmax_row(const float *logits, float *probabilities, int classes) {
  int32_t best = 0;
  for (int c = 1; c < classes; ++c)
    if (logits[c] > logits[best]) best = c;
  double sum = 0;
  for (int c = 0; c < classes; ++c) sum += std::exp(double(logits[c]) - double(logits[best]));
  for (int c = 0; c < classes; ++c)
    probabilities[c] = float(std::exp(double(logits[c]) - double(logits[best])) / sum);
  return best;
}

}  // namespace

size_t default_evaluator_slots() {
  return std::clamp<size_t>(starpu_worker_get_count(), 2, 8);
}

Evaluator::Evaluator(const NetworkSpec &spec, ParameterSet &params, size_t batch, size_t slots)
    : spec_(spec),
      params_(params),
      batch_(batch),
      slot_count_(slots == 0 ? default_evaluator_slots() : slots) {
  if (batch == 0) throw std::invalid_argument("the evaluation batch size must be positive");
  slots_.reserve(slot_count_);
  stats_ = Tensor({int(kXentStatsSize)}, "eval_stats");
  set_sum_reduction(stats_.handle(), params_.home());  // where the loss tasks run
}

Evaluator::~Evaluator() {
  starpu_task_wait_for_all();
}

void Evaluator::check_fits(const Dataset &data) const {
  const ActivationShape &in = spec_.input;
  if (int(data.channels) != in.c || int(data.height) != in.h || int(data.width) != in.w)
    throw std::invalid_argument(spec_.source + " takes " + std::to_string(in.c) + "x" +
                                std::to_string(in.h) + "x" + std::to_string(in.w) +
                                " inputs, the data " + data.name + " has " +
                                std::to_string(data.channels) + "x" + std::to_string(data.height) +
                                "x" + std::to_string(data.width));
}

Evaluator::Slot &Evaluator::slot_for(size_t b, size_t batch_size, const Dataset &data) {
  Slot *slot = nullptr;
  if (batch_size == batch_) {
    const size_t i = b % slot_count_;
    if (slots_.size() <= i) slots_.resize(i + 1);
    slot = &slots_[i];
  } else {
    slot = &short_;
    if (slot->network && size_t(slot->network->batch()) != batch_size) {
      starpu_task_wait_for_all();  // the old short network's tasks may still run
      *slot = Slot{};
    }
  }
  if (!slot->network) {
    const std::string name = "eval" + std::to_string(slot == &short_ ? slots_.size() : b);
    slot->network = std::make_unique<Network>(spec_, params_, int(batch_size));
    slot->images = Tensor({int(batch_size), int(data.channels), int(data.height), int(data.width)},
                          name + "_images");
    slot->labels = Tensor({int(batch_size)}, name + "_labels", ElementType::i32);
  }
  return *slot;
}

Evaluation Evaluator::evaluate(const Dataset &data) {
  check_fits(data);
  Evaluation result;
  result.samples = data.count;
  if (data.count == 0) return result;
  const Batcher batcher(data, {batch_, false, 0, false});
  starpu_task_wait_for_all();
  submit_zero_fill(stats_.handle(), params_.home());
  const Clock::time_point start = Clock::now();
  for (size_t b = 0; b < batcher.batch_count(); ++b) {
    Slot &slot = slot_for(b, batcher.batch_size(b), data);
    submit_load_batch(batcher, b, slot.images, slot.labels);
    slot.network->forward(slot.images, slot.labels, stats_);
  }
  const std::vector<float> stats = stats_.read();  // waits for every batch's loss
  starpu_task_wait_for_all();
  result.seconds = seconds_since(start);
  result.loss = double(stats[0]) / double(data.count);
  result.accuracy = double(stats[1]) / double(data.count);
  result.images_per_s = double(data.count) / result.seconds;
  return result;
}

Classification Evaluator::classify(const Dataset &data) {
  check_fits(data);
  Classification result;
  result.samples = data.count;
  result.classes = int(spec_.output().size());
  const size_t classes = size_t(result.classes);
  result.predicted.resize(data.count);
  result.logits.resize(data.count * classes);
  result.probabilities.resize(data.count * classes);
  if (data.count == 0) return result;
  const Batcher batcher(data, {batch_, false, 0, false});
  starpu_task_wait_for_all();
  const Clock::time_point start = Clock::now();
  // A slot's logits are read just before the slot takes its next batch, so the other slots'
  // batches keep the workers busy while the host waits for this one.
  std::vector<size_t> pending;  // batches submitted and not read yet, oldest first
  auto read_batch = [&](size_t b) {
    const Slot &slot = batcher.batch_size(b) == batch_ ? slots_[b % slot_count_] : short_;
    const std::vector<float> logits = slot.network->logits().read();
    const size_t first = b * batch_;
    std::copy(logits.begin(), logits.end(), result.logits.begin() + long(first * classes));
    for (size_t i = 0; i < batcher.batch_size(b); ++i)
      result.predicted[first + i] = softmax_row(
          &logits[i * classes], &result.probabilities[(first + i) * classes], result.classes);
  };
  for (size_t b = 0; b < batcher.batch_count(); ++b) {
    if (b >= slot_count_) read_batch(b - slot_count_);
    Slot &slot = slot_for(b, batcher.batch_size(b), data);
    submit_load_batch(batcher, b, slot.images, slot.labels);
    slot.network->forward_logits(slot.images);
  }
  const size_t count = batcher.batch_count();
  for (size_t b = count > slot_count_ ? count - slot_count_ : 0; b < count; ++b) read_batch(b);
  starpu_task_wait_for_all();
  result.seconds = seconds_since(start);
  result.images_per_s = double(data.count) / result.seconds;
  return result;
}

}  // namespace starcnn
