#include "model/nn/conv_layer.h"

#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv2d_prepare.h"
#include "codelets/merge.h"

#include <algorithm>

namespace starcnn {

ConvParts parts_of(const SplitPlan &plan) {
  ConvParts parts;
  for (const SplitPart &part : plan.parts) {
    const int tasks = std::max(1, std::min(part.tasks, part.filters));
    for (int t = 0; t < tasks; ++t) {
      parts.filters.push_back(part.filters / tasks + (t < part.filters % tasks ? 1 : 0));
      parts.where.push_back(part.where);
    }
  }
  return parts;
}

ConvLayer::ConvLayer(const Conv2dShape &whole, Parameter &weight, Parameter &bias,
                     const std::vector<Where> &part_where)
    : whole_(whole), weight_(weight), bias_(bias), part_where_(part_where) {
  const int n = int(whole.n), h = int(whole.out_h()), w = int(whole.out_w());
  output_ = Tensor({n, int(whole.c_out), h, w}, weight.name() + ".out");
  input_grad_ = Tensor({n, int(whole.c_in), int(whole.h), int(whole.w)}, weight.name() + ".dx");
  // dX sums every part's contribution (STARPU_REDUX), and a whole layer just overwrites it.
  set_sum_reduction(input_grad_.handle());
  if (weight.part_count() > 1) {
    for (size_t p = 0; p < weight.part_count(); ++p) {
      const int c = weight.part_rows()[p];
      part_outputs_.emplace_back(std::vector<int>{n, c, h, w},
                                 weight.name() + ".out" + std::to_string(p));
      part_output_grads_.emplace_back(std::vector<int>{n, c, h, w},
                                      weight.name() + ".dout" + std::to_string(p));
    }
  }
  for (size_t p = 0; p < weight.part_count(); ++p) prepare_conv2d(part_shape(p));
}

Conv2dShape ConvLayer::part_shape(size_t p) const {
  Conv2dShape shape = whole_;
  shape.c_out = uint32_t(weight_.part_rows()[p]);
  return shape;
}

std::string ConvLayer::describe() const {
  std::string parts;
  for (size_t p = 0; p < part_where_.size(); ++p)
    parts += (p ? "," : "") + std::to_string(weight_.part_rows()[p]) + "@" +
             where_name(part_where_[p]);
  return "conv " + std::to_string(whole_.c_in) + "->" + std::to_string(whole_.c_out) + " " +
         std::to_string(whole_.k) + "x" + std::to_string(whole_.k) + " parts " + parts;
}

namespace {

std::vector<starpu_data_handle_t> handles_of(const std::vector<Tensor> &tensors) {
  std::vector<starpu_data_handle_t> handles;
  for (const Tensor &t : tensors) handles.push_back(t.handle());
  return handles;
}

std::vector<uint32_t> channels_of(const std::vector<int> &rows) {
  return std::vector<uint32_t>(rows.begin(), rows.end());
}

}  // namespace

void ConvLayer::forward(const Tensor &input) {
  const size_t parts = weight_.part_count();
  for (size_t p = 0; p < parts; ++p) {
    const Tensor &out = parts == 1 ? output_ : part_outputs_[p];
    submit_conv2d_forward(input.handle(), weight_.value(p).handle(), bias_.value(p).handle(),
                          out.handle(), part_shape(p), part_where_[p]);
  }
  if (parts > 1)
    submit_merge(handles_of(part_outputs_), output_.handle(),
                 make_merge_shape(whole_.n, whole_.out_h() * whole_.out_w(),
                                  channels_of(weight_.part_rows())),
                 where_);
}

void ConvLayer::backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) {
  const size_t parts = weight_.part_count();
  if (parts > 1)
    submit_split(output_grad.handle(), handles_of(part_output_grads_),
                 make_merge_shape(whole_.n, whole_.out_h() * whole_.out_w(),
                                  channels_of(weight_.part_rows())),
                 where_);
  // The REDUX sum must start from nothing, not from the previous step's dX.
  if (need_input_grad && parts > 1) starpu_data_invalidate_submit(input_grad_.handle());
  for (size_t p = 0; p < parts; ++p) {
    const Tensor &dy = parts == 1 ? output_grad : part_output_grads_[p];
    submit_conv2d_backward_filter(input.handle(), dy.handle(), weight_.grad(p).handle(),
                                  bias_.grad(p).handle(), part_shape(p), grad_access_,
                                  part_where_[p]);
    if (need_input_grad)
      submit_conv2d_backward_data(
          weight_.value(p).handle(), dy.handle(), input_grad_.handle(), part_shape(p),
          parts == 1 ? GradientAccess::overwrite : GradientAccess::accumulate,
          part_where_[p]);
  }
}

}  // namespace starcnn
