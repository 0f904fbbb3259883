// A convolution split by its plan (partition/split_plan.h) into parts of filters, each part's work
// cut by samples into tasks (PartTask), each task its own output piece:
//   forward   conv2d_forward[t](X, W_p, b_p) -> Y_t, then merge(Y_1..Y_k) -> Y
//   backward  split(dY) -> dY_t, conv2d_backward_filter[t](X, dY_t) -> dW_p, db_p (a part's
//             blocks summed by STARPU_REDUX), conv2d_backward_data[t](W_p, dY_t) summed into dX
//             by STARPU_REDUX
// A task reads only its samples of X: the im2col of each sample is made once. A whole layer (one
// part, one task) has no merge or split, and may take in the ReLU after it and the maxpool after
// that (ConvFusion): then its forward is one conv_block task (codelets/conv2d/conv_block.h), and
// so is its backward on CUDA; on CPU workers the backward stays the activation's, the filter's and
// the data's tasks, the last two side by side.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"
#include "codelets/conv2d/conv2d_task_support.h"
#include "codelets/merge.h"
#include "model/nn/layer.h"
#include "partition/split_plan.h"

#include <memory>

namespace starcnn {

// What a whole convolution takes in of the layers after it.
enum class ConvFusion { none, relu, relu_pool };

class ConvLayer : public Layer {
 public:
  // weight [C, C_in, K, K] and bias [C] are cut into the plan's parts (Parameter::part_rows()).
  // A fusion needs a whole layer (is_whole_plan()); output() is then the ReLU's or the pool's.
  ConvLayer(const Conv2dShape &whole, Parameter &weight, Parameter &bias, const SplitPlan &plan,
            ConvFusion fusion = ConvFusion::none);
  // Whether `plan` makes a whole layer of `batch` samples: one part, one task.
  static bool is_whole_plan(const SplitPlan &plan, uint32_t batch);

  std::string describe() const override;
  void forward(const Tensor &input) override;
  void backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) override;

 private:
  Conv2dShape task_shape(const PartTask &task) const;
  bool is_whole() const { return tasks_.size() == 1; }
  // Whether part p is cut into several sample blocks (its gradients then sum the blocks').
  bool blocked(size_t p) const;
  Conv2dShape whole_;
  Parameter &weight_, &bias_;
  SplitPlan plan_;
  std::vector<PartTask> tasks_;
  MergeShape merge_;
  std::vector<Tensor> pieces_, piece_grads_;
  ConvFusion fusion_ = ConvFusion::none;
  // A fused layer's: the convolution's output (before its pool), the pool's argmax, the gradient
  // of the convolution's output, and the im2col scratch its tasks share.
  Tensor conv_out_, argmax_, conv_out_grad_;
  std::unique_ptr<ColScratch> col_;
  // An unfused layer's: each task's im2col scratch, registered once (a scratch registered per
  // task cost StarPU an unregister and two acquire tasks each, and those count in the trainer's
  // window of submitted tasks).
  std::vector<std::unique_ptr<ColScratch>> task_cols_;
};

}  // namespace starcnn
