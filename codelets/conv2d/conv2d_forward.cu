// cuDNN forward convolution plus bias; host code only, run inside a CUDA task.
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv_gemm.h"
#include "codelets/conv2d/conv_math.h"
#include "codelets/conv2d/cudnn_context.h"
#include "codelets/support/cuda_op_timer.h"

#include <starpu_cublas_v2.h>

namespace starcnn {

void conv2d_forward_cuda(const Conv2dShape &shape, const float *x, const float *w, const float *b,
                         float *y) {
  CudnnWorkerContext &cudnn = this_worker_cudnn();
  const CudnnConv2dDescriptors &plan = this_worker_conv2d_descriptors(shape);
  if (plan.gemm) {
    gemm_conv_forward(starpu_cublas_get_local_handle(), shape, x, w, b, y, cudnn.workspace,
                      conv_math() == ConvMath::tf32, starpu_cuda_get_local_stream());
    return;
  }
  const float one = 1.0f, zero = 0.0f;
  cudaStream_t stream = starpu_cuda_get_local_stream();
  {
    TimedPart part("convolution", stream);
    check_cudnn(cudnnSetConvolutionMathType(plan.conv, plan.forward_math), "set forward math");
    check_cudnn(cudnnConvolutionForward(cudnn.handle, &one, plan.x, x, plan.w, w, plan.conv,
                                        plan.forward_algo, cudnn.workspace, cudnn.workspace_size,
                                        &zero, plan.y, y),
                "convolution forward");
  }
  if (!b) return;
  TimedPart part("bias", stream);
  check_cudnn(cudnnAddTensor(cudnn.handle, &one, plan.bias, b, &one, plan.y, y), "bias add");
}

}  // namespace starcnn
