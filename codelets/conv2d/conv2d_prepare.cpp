#include "codelets/conv2d/conv2d_prepare.h"

#include <starpu.h>

#ifdef STARCNN_USE_CUDA
#include "codelets/conv2d/cudnn_context.h"
#endif

namespace starcnn {

#ifdef STARCNN_USE_CUDA
namespace {
void prepare_on_worker(void *shape) {
  prepare_conv2d_on_this_worker(*static_cast<const Conv2dShape *>(shape));
}
}  // namespace

void prepare_conv2d(const Conv2dShape &shape) {
  STARPU_ASSERT_MSG(shape.valid(), "invalid conv2d shape");
  Conv2dShape copy = shape;
  starpu_execute_on_each_worker(prepare_on_worker, &copy, STARPU_CUDA);
}
#else
void prepare_conv2d(const Conv2dShape &) {}
#endif

}  // namespace starcnn
