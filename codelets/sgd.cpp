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

// The kernels' arguments: w, grad, momentum_buf (null without momentum), n, params.
SgdParams unpack(void *cl_arg) {
  SgdParams params;
  starpu_codelet_unpack_args(cl_arg, &params);
  return params;
}
auto sgd_momentum_args(void *buffers[], void *cl_arg) {
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]), vector_data(buffers[2]),
                         vector_length(buffers[0]), unpack(cl_arg));
}
auto sgd_no_momentum_args(void *buffers[], void *cl_arg) {
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]),
                         static_cast<float *>(nullptr), vector_length(buffers[0]), unpack(cl_arg));
}

// Buffer sizes only: the learning rate changes over training, the work does not. Both variants
// share it; their footprints differ in buffer count.
starpu_perfmodel sgd_update_model = size_history_model("starcnn_sgd_update");

void check_same_length(starpu_data_handle_t a, starpu_data_handle_t b, const char *what) {
  if (starpu_vector_get_nx(a) != starpu_vector_get_nx(b))
    throw std::invalid_argument(std::string("sgd_update: ") + what + " and w differ in length");
}

}  // namespace

starpu_codelet sgd_update_codelet =
    STARCNN_KERNEL_CODELET("sgd_update", sgd_update_cpu, sgd_update_cuda, sgd_momentum_args,
                           &sgd_update_model, {STARPU_RW, STARPU_R, STARPU_RW});
starpu_codelet sgd_update_no_momentum_codelet =
    STARCNN_KERNEL_CODELET("sgd_update_no_momentum", sgd_update_cpu, sgd_update_cuda,
                           sgd_no_momentum_args, &sgd_update_model, {STARPU_RW, STARPU_R});

void submit_sgd_update(starpu_data_handle_t w, starpu_data_handle_t grad,
                       starpu_data_handle_t momentum_buf, const SgdParams &params, Where where,
                       int priority) {
  check_same_length(grad, w, "grad");
  SgdParams args = params;
  if (params.momentum == 0.0f) {
    insert_task(sgd_update_no_momentum_codelet, "sgd_update", where, priority, STARPU_RW, w,
                STARPU_R, grad, STARPU_VALUE, &args, sizeof(args));
    return;
  }
  if (!momentum_buf) throw std::invalid_argument("sgd_update: momentum needs a buffer");
  check_same_length(momentum_buf, w, "momentum_buf");
  insert_task(sgd_update_codelet, "sgd_update", where, priority, STARPU_RW, w, STARPU_R, grad,
              STARPU_RW, momentum_buf, STARPU_VALUE, &args, sizeof(args));
}

}  // namespace starcnn
