// cuDNN weight and bias gradients; host code only, run inside a CUDA task.
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv_bias_grad.h"
#include "codelets/conv2d/conv_gemm.h"
#include "codelets/conv2d/conv_math.h"
#include "codelets/conv2d/cudnn_context.h"
#include "codelets/support/cuda_op_timer.h"

#include <starpu_cublas_v2.h>

namespace starcnn {

void conv2d_backward_filter_cuda(const Conv2dShape &shape, const float *x, const float *dy,
                                 float *dw, float *db, bool accumulate) {
  CudnnWorkerContext &cudnn = this_worker_cudnn();
  const CudnnConv2dDescriptors &plan = this_worker_conv2d_descriptors(shape);
  cudaStream_t stream = starpu_cuda_get_local_stream();
  if (plan.gemm) {
    TimedPart part("weight+bias gradients (GEMM)", stream);
    gemm_conv_backward_filter(starpu_cublas_get_local_handle(), shape, x, dy, dw, db, accumulate,
                              cudnn.workspace, conv_math() == ConvMath::tf32, stream);
    return;
  }
  // beta = 0 overwrites without reading the old value; beta = 1 adds into it.
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  {
    TimedPart part("weight gradients", stream);
    check_cudnn(cudnnSetConvolutionMathType(plan.conv, plan.backward_filter_math),
                "set backward filter math");
    check_cudnn(cudnnConvolutionBackwardFilter(cudnn.handle, &one, plan.x, x, plan.y, dy, plan.conv,
                                               plan.backward_filter_algo, cudnn.workspace,
                                               cudnn.workspace_size, &beta, plan.w, dw),
                "convolution backward filter");
  }
  TimedPart part("bias gradients", stream);
  if (use_conv_bias_grad_kernels()) {
    conv_bias_grad_cuda(shape, dy, db, accumulate, cudnn.workspace, stream);
    return;
  }
  check_cudnn(cudnnConvolutionBackwardBias(cudnn.handle, &one, plan.y, dy, &beta, plan.bias, db),
              "convolution backward bias");
}

}  // namespace starcnn
