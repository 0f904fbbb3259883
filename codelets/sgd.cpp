#include "codelets/sgd.h"

#include <stdexcept>
#include <string>

namespace starcnn {

void sgd_update_cpu(float *w, const float *grad, float *momentum_buf, size_t n,
                    const SgdParams &p) {
  const bool use_buffer = p.momentum != 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float g = grad[i] + p.weight_decay * w[i];
    float step = g;
    if (use_buffer) {
      step = p.first_step ? g : p.momentum * momentum_buf[i] + g;
      momentum_buf[i] = step;
    }
    w[i] -= p.lr * step;
  }
}

namespace {

// Without momentum the task has two buffers and no momentum buffer.
float *momentum_buffer(void *buffers[]) {
  return STARPU_TASK_GET_NBUFFERS(starpu_task_get_current()) > 2 ? vector_data(buffers[2])
                                                                 : nullptr;
}

SgdParams unpack(void *cl_arg) {
  SgdParams params;
  starpu_codelet_unpack_args(cl_arg, &params);
  return params;
}

void sgd_update_cpu_task(void *buffers[], void *cl_arg) {
  sgd_update_cpu(vector_data(buffers[0]), vector_data(buffers[1]), momentum_buffer(buffers),
                 vector_length(buffers[0]), unpack(cl_arg));
}

#ifdef STARCNN_USE_CUDA
void sgd_update_cuda_task(void *buffers[], void *cl_arg) {
  sgd_update_cuda(vector_data(buffers[0]), vector_data(buffers[1]), momentum_buffer(buffers),
                  vector_length(buffers[0]), unpack(cl_arg), starpu_cuda_get_local_stream());
}
#endif

// Buffer sizes only: the learning rate changes over training, the work does not.
starpu_perfmodel sgd_update_model = size_history_model("starcnn_sgd_update");

void check_same_length(starpu_data_handle_t a, starpu_data_handle_t b, const char *what) {
  if (starpu_vector_get_nx(a) != starpu_vector_get_nx(b))
    throw std::invalid_argument(std::string("sgd_update: ") + what + " and w differ in length");
}

}  // namespace

starpu_codelet sgd_update_codelet =
    make_codelet("sgd_update", sgd_update_cpu_task, STARCNN_CUDA_FUNC(sgd_update_cuda_task),
                 &sgd_update_model, {});

void submit_sgd_update(starpu_data_handle_t w, starpu_data_handle_t grad,
                       starpu_data_handle_t momentum_buf, const SgdParams &params, Where where,
                       int priority) {
  check_same_length(grad, w, "grad");
  SgdParams args = params;
  int ret;
  if (params.momentum != 0.0f) {
    if (!momentum_buf) throw std::invalid_argument("sgd_update: momentum needs a buffer");
    check_same_length(momentum_buf, w, "momentum_buf");
    ret = starpu_task_insert(&sgd_update_codelet, STARPU_RW, w, STARPU_R, grad, STARPU_RW,
                             momentum_buf, STARPU_VALUE, &args, sizeof(args), STARPU_EXECUTE_WHERE,
                             where_mask(where), STARPU_PRIORITY, priority, 0);
  } else {
    ret = starpu_task_insert(&sgd_update_codelet, STARPU_RW, w, STARPU_R, grad, STARPU_VALUE, &args,
                             sizeof(args), STARPU_EXECUTE_WHERE, where_mask(where), STARPU_PRIORITY,
                             priority, 0);
  }
  check_submit(ret, "sgd_update");
}

}  // namespace starcnn
