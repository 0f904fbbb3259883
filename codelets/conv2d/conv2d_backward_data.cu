// cuDNN input gradient; host code only, run inside a CUDA task.
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/cudnn_context.h"

namespace starcnn {

void conv2d_backward_data_cuda(const Conv2dShape &shape, const float *w, const float *dy, float *dx,
                               bool accumulate) {
  CudnnWorkerContext &cudnn = this_worker_cudnn();
  const CudnnConv2dDescriptors &plan = this_worker_conv2d_descriptors(shape);
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check_cudnn(cudnnSetConvolutionMathType(plan.conv, plan.backward_data_math),
              "set backward data math");
  check_cudnn(cudnnConvolutionBackwardData(cudnn.handle, &one, plan.w, w, plan.y, dy, plan.conv,
                                           plan.backward_data_algo, cudnn.workspace,
                                           cudnn.workspace_size, &beta, plan.x, dx),
              "convolution backward data");
}

}  // namespace starcnn
