#include "model/nn/conv_layer.h"

#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv2d_prepare.h"
#include "codelets/conv2d/conv_block.h"
#include "codelets/maxpool.h"
#include "codelets/relu.h"
#include "partition/auto_plan.h"

#include <stdexcept>

namespace starcnn {

bool ConvLayer::is_whole_plan(const SplitPlan &plan, uint32_t batch) {
  return part_tasks(plan, batch).size() == 1;
}

ConvLayer::ConvLayer(const Conv2dShape &whole, Parameter &weight, Parameter &bias,
                     const SplitPlan &plan, ConvFusion fusion)
    : whole_(whole),
      weight_(weight),
      bias_(bias),
      plan_(plan),
      tasks_(part_tasks(plan, whole.n)),
      fusion_(fusion) {
  const int n = int(whole.n), h = int(whole.out_h()), w = int(whole.out_w());
  if (fusion != ConvFusion::none && !is_whole())
    throw std::invalid_argument(weight.name() + ": only a whole convolution takes in its ReLU");
  output_ = Tensor({n, int(whole.c_out), h, w}, weight.name() + ".out");
  if (fusion != ConvFusion::none) {
    col_ = std::make_unique<ColScratch>(whole);
    conv_out_grad_ = Tensor({n, int(whole.c_out), h, w}, weight.name() + ".dz");
  }
  if (fusion == ConvFusion::relu_pool) {
    conv_out_ = std::move(output_);
    output_ = Tensor({n, int(whole.c_out), h / 2, w / 2}, weight.name() + ".pool");
    argmax_ =
        Tensor({n, int(whole.c_out), h / 2, w / 2}, weight.name() + ".argmax", ElementType::i32);
  }
  input_grad_ = Tensor({n, int(whole.c_in), int(whole.h), int(whole.w)}, weight.name() + ".dx");
  // dX sums every task's contribution (STARPU_REDUX), and a whole layer just overwrites it. The
  // sum runs on the parts' kind of worker when they share one.
  Where parts_kind = kind_of(plan.parts.front().where);
  for (const SplitPart &part : plan.parts)
    if (kind_of(part.where) != parts_kind) parts_kind = Where::any;
  set_sum_reduction(input_grad_.handle(), parts_kind);
  // A blocked part's gradient sums its blocks, in whichever slot a network writes.
  for (size_t p = 0; p < plan.parts.size(); ++p)
    for (size_t slot = 0; blocked(p) && slot < weight.grad_slots(); ++slot) {
      set_sum_reduction(weight.grad(p, slot).handle(), plan.parts[p].where);
      set_sum_reduction(bias.grad(p, slot).handle(), plan.parts[p].where);
    }
  if (!is_whole()) {
    merge_ = merge_shape_of(tasks_, whole.n, whole.out_h() * whole.out_w(), whole.c_out);
    for (size_t t = 0; t < tasks_.size(); ++t) {
      const std::vector<int> shape{int(tasks_[t].samples), tasks_[t].filters, h, w};
      pieces_.emplace_back(shape, weight.name() + ".out" + std::to_string(t));
      piece_grads_.emplace_back(shape, weight.name() + ".dout" + std::to_string(t));
    }
  }
  for (const PartTask &task : tasks_) {
    prepare_conv2d(task_shape(task));
    if (fusion == ConvFusion::none)
      task_cols_.push_back(std::make_unique<ColScratch>(task_shape(task)));
  }
}

Conv2dShape ConvLayer::task_shape(const PartTask &task) const {
  Conv2dShape shape = whole_;
  shape.c_out = uint32_t(task.filters);
  shape.n = task.samples;
  return shape;
}

bool ConvLayer::blocked(size_t p) const {
  size_t count = 0;
  for (const PartTask &task : tasks_) count += task.part == p;
  return count > 1;
}

std::string ConvLayer::describe() const {
  const char *fused = fusion_ == ConvFusion::relu_pool ? "+relu+maxpool 2x2"
                      : fusion_ == ConvFusion::relu    ? "+relu"
                                                       : "";
  return "conv " + std::to_string(whole_.c_in) + "->" + std::to_string(whole_.c_out) + " " +
         std::to_string(whole_.k) + "x" + std::to_string(whole_.k) + fused + " parts " +
         plan_.describe();
}

namespace {

std::vector<starpu_data_handle_t> handles_of(const std::vector<Tensor> &tensors) {
  std::vector<starpu_data_handle_t> handles;
  for (const Tensor &t : tensors) handles.push_back(t.handle());
  return handles;
}

}  // namespace

void ConvLayer::forward(const Tensor &input) {
  if (fusion_ != ConvFusion::none) {
    const bool pool = fusion_ == ConvFusion::relu_pool;
    submit_conv_block_forward(input.handle(), weight_.value(0).handle(), bias_.value(0).handle(),
                              pool ? conv_out_.handle() : output_.handle(),
                              pool ? output_.handle() : nullptr, pool ? argmax_.handle() : nullptr,
                              col_->handle(), whole_, tasks_.front().where);
    return;
  }
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const PartTask &task = tasks_[t];
    submit_conv2d_forward(input.handle(), weight_.value(task.part).handle(),
                          bias_.value(task.part).handle(),
                          is_whole() ? output_.handle() : pieces_[t].handle(), task_shape(task),
                          task.where, 0, task.first_sample, task_cols_[t]->handle());
  }
  if (!is_whole()) submit_merge(handles_of(pieces_), output_.handle(), merge_, where_);
}

void ConvLayer::backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) {
  if (fusion_ != ConvFusion::none) {
    const bool pool = fusion_ == ConvFusion::relu_pool;
    const Where where = tasks_.front().where;
    if (kind_of(where) == Where::cuda) {
      submit_conv_block_backward(
          input.handle(), weight_.value(0).handle(), output_grad.handle(),
          pool ? argmax_.handle() : output_.handle(), pool, conv_out_grad_.handle(),
          weight_.grad(0, grad_slot_).handle(), bias_.grad(0, grad_slot_).handle(),
          need_input_grad ? input_grad_.handle() : nullptr, col_->handle(), whole_, where);
      return;
    }
    // On CPU workers the backward stays three tasks: its filter and data halves run side by side
    // (fused, wide's batch-256 CPU step took 380-397 ms against 275-318 separate; call r).
    if (pool)
      submit_maxpool_backward(output_grad.handle(), argmax_.handle(), conv_out_grad_.handle(),
                              conv_block_pool(whole_), where);
    else
      submit_relu_backward(output_.handle(), output_grad.handle(), conv_out_grad_.handle(), where);
    submit_conv2d_backward_filter(input.handle(), conv_out_grad_.handle(),
                                  weight_.grad(0, grad_slot_).handle(),
                                  bias_.grad(0, grad_slot_).handle(), whole_,
                                  GradientAccess::overwrite, where, 0, 0, col_->handle());
    if (need_input_grad)
      submit_conv2d_backward_data(weight_.value(0).handle(), conv_out_grad_.handle(),
                                  input_grad_.handle(), whole_, GradientAccess::overwrite, where, 0,
                                  0, col_->handle());
    return;
  }
  if (!is_whole()) submit_split(output_grad.handle(), handles_of(piece_grads_), merge_, where_);
  // The REDUX sums must start from nothing, not from the previous step's values.
  if (need_input_grad && !is_whole()) starpu_data_invalidate_submit(input_grad_.handle());
  for (size_t p = 0; p < plan_.parts.size(); ++p)
    if (blocked(p)) {
      starpu_data_invalidate_submit(weight_.grad(p, grad_slot_).handle());
      starpu_data_invalidate_submit(bias_.grad(p, grad_slot_).handle());
    }
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const PartTask &task = tasks_[t];
    const Tensor &dy = is_whole() ? output_grad : piece_grads_[t];
    const GradientAccess access =
        blocked(task.part) ? GradientAccess::accumulate : GradientAccess::overwrite;
    submit_conv2d_backward_filter(
        input.handle(), dy.handle(), weight_.grad(task.part, grad_slot_).handle(),
        bias_.grad(task.part, grad_slot_).handle(), task_shape(task), access, task.where, 0,
        task.first_sample, task_cols_[t]->handle());
    if (need_input_grad)
      submit_conv2d_backward_data(
          weight_.value(task.part).handle(), dy.handle(), input_grad_.handle(), task_shape(task),
          is_whole() ? GradientAccess::overwrite : GradientAccess::accumulate, task.where, 0,
          task.first_sample, task_cols_[t]->handle());
  }
}

}  // namespace starcnn
