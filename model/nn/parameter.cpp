#include "model/nn/parameter.h"

#include <numeric>
#include <stdexcept>

namespace starcnn {
namespace {

std::vector<float> concatenate(const std::vector<Tensor> &parts) {
  std::vector<float> whole;
  for (const Tensor &part : parts) {
    const std::vector<float> values = part.read();
    whole.insert(whole.end(), values.begin(), values.end());
  }
  return whole;
}

void scatter(std::vector<Tensor> &parts, const std::vector<float> &whole, const std::string &name) {
  size_t total = 0;
  for (const Tensor &part : parts) total += part.size();
  if (whole.size() != total)
    throw std::invalid_argument(name + ": " + std::to_string(whole.size()) +
                                " values given, the parameter has " + std::to_string(total));
  size_t offset = 0;
  for (Tensor &part : parts) {
    part.write(std::vector<float>(whole.begin() + long(offset),
                                  whole.begin() + long(offset + part.size())));
    offset += part.size();
  }
}

}  // namespace

Parameter::Parameter(std::string name, std::vector<int> shape, std::vector<int> part_rows)
    : name_(std::move(name)), shape_(std::move(shape)), part_rows_(std::move(part_rows)) {
  if (part_rows_.empty()) part_rows_ = {shape_.at(0)};
  if (std::accumulate(part_rows_.begin(), part_rows_.end(), 0) != shape_.at(0))
    throw std::invalid_argument(name_ + ": parts do not add up to dimension 0");
  for (size_t p = 0; p < part_rows_.size(); ++p) {
    std::vector<int> part_shape = shape_;
    part_shape[0] = part_rows_[p];
    const std::string suffix = part_rows_.size() > 1 ? "[" + std::to_string(p) + "]" : "";
    values_.emplace_back(part_shape, name_ + suffix);
    grads_.emplace_back(part_shape, "d" + name_ + suffix);
    momenta_.emplace_back(part_shape, "m" + name_ + suffix);
  }
}

void Parameter::add_grad_slots(size_t count) {
  while (grad_slots() < count) {
    const std::string slot = "#" + std::to_string(grad_slots());
    std::vector<Tensor> grads;
    for (size_t p = 0; p < grads_.size(); ++p) {
      const std::string suffix = grads_.size() > 1 ? "[" + std::to_string(p) + "]" : "";
      grads.emplace_back(grads_[p].shape(), "d" + name_ + suffix + slot);
    }
    slot_grads_.push_back(std::move(grads));
  }
}

size_t Parameter::size() const {
  size_t n = 1;
  for (int d : shape_) n *= size_t(d);
  return n;
}

std::vector<float> Parameter::read() const {
  return concatenate(values_);
}
void Parameter::write(const std::vector<float> &values) {
  scatter(values_, values, name_);
}
std::vector<float> Parameter::read_momentum() const {
  return concatenate(momenta_);
}
void Parameter::write_momentum(const std::vector<float> &values) {
  scatter(momenta_, values, name_ + " momentum");
}

}  // namespace starcnn
