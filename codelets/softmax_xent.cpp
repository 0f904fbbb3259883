#include "codelets/softmax_xent.h"

#include <cmath>
#include <limits>

namespace starcnn {
namespace {

// The row's maximum, the first index holding it, and sum(exp(z - max)).
struct RowSummary {
  float max;
  uint32_t argmax;
  float exp_sum;
};

RowSummary summarise_row(const float *row, uint32_t classes) {
  RowSummary s{row[0], 0, 0.0f};
  for (uint32_t j = 1; j < classes; ++j)
    if (row[j] > s.max) s.max = row[j], s.argmax = j;
  for (uint32_t j = 0; j < classes; ++j) s.exp_sum += std::exp(row[j] - s.max);
  return s;
}

bool valid_label(int32_t label, uint32_t classes) {
  return label >= 0 && uint32_t(label) < classes;
}

}  // namespace

void softmax_xent_forward_cpu(const float *z, const int32_t *labels, float *stats,
                              const SoftmaxXentShape &shape) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  double loss_sum = 0.0;  // in double: a task may sum many rows
  float correct = 0.0f;
  for (uint32_t i = 0; i < shape.n; ++i) {
    const float *row = z + size_t(i) * shape.classes;
    const RowSummary s = summarise_row(row, shape.classes);
    const int32_t label = labels[i];
    const bool valid = valid_label(label, shape.classes);
    // -log softmax(z)[label] = log(sum exp(z - max)) - (z[label] - max)
    loss_sum += valid ? std::log(s.exp_sum) - (row[label] - s.max) : nan;
    if (valid && s.argmax == uint32_t(label)) correct += 1.0f;
  }
  stats[0] += float(loss_sum);
  stats[1] += correct;
}

void softmax_xent_backward_cpu(const float *z, const int32_t *labels, float *dz,
                               const SoftmaxXentShape &shape, uint32_t batch_size) {
  const float scale = 1.0f / float(batch_size);
  for (uint32_t i = 0; i < shape.n; ++i) {
    const float *row = z + size_t(i) * shape.classes;
    float *drow = dz + size_t(i) * shape.classes;
    const RowSummary s = summarise_row(row, shape.classes);
    const int32_t label = labels[i];
    const float poison =
        valid_label(label, shape.classes) ? 0.0f : std::numeric_limits<float>::quiet_NaN();
    for (uint32_t j = 0; j < shape.classes; ++j) {
      const float onehot = int32_t(j) == label ? 1.0f : 0.0f;
      drow[j] = (std::exp(row[j] - s.max) / s.exp_sum - onehot) * scale + poison;
    }
  }
}

namespace {

const int32_t *label_data(void *buffer) {
  STARPU_ASSERT(STARPU_VECTOR_GET_ELEMSIZE(buffer) == sizeof(int32_t));
  return reinterpret_cast<const int32_t *>(STARPU_VECTOR_GET_PTR(buffer));
}

// Buffers are (Z, labels, stats or dZ) in both directions.
SoftmaxXentShape check_buffers(void *buffers[], const SoftmaxXentShape &shape, size_t out_size) {
  STARPU_ASSERT(vector_length(buffers[0]) == size_t(shape.n) * shape.classes);
  STARPU_ASSERT(vector_length(buffers[1]) == shape.n);
  STARPU_ASSERT(vector_length(buffers[2]) == out_size);
  return shape;
}

SoftmaxXentShape unpack_forward(void *buffers[], void *cl_arg) {
  SoftmaxXentShape shape;
  starpu_codelet_unpack_args(cl_arg, &shape);
  return check_buffers(buffers, shape, kXentStatsSize);
}

SoftmaxXentShape unpack_backward(void *buffers[], void *cl_arg, uint32_t *batch_size) {
  SoftmaxXentShape shape;
  starpu_codelet_unpack_args(cl_arg, &shape, batch_size);
  return check_buffers(buffers, shape, size_t(shape.n) * shape.classes);
}

void softmax_xent_forward_cpu_task(void *buffers[], void *cl_arg) {
  const SoftmaxXentShape shape = unpack_forward(buffers, cl_arg);
  softmax_xent_forward_cpu(vector_data(buffers[0]), label_data(buffers[1]), vector_data(buffers[2]),
                           shape);
}

void softmax_xent_backward_cpu_task(void *buffers[], void *cl_arg) {
  uint32_t batch_size;
  const SoftmaxXentShape shape = unpack_backward(buffers, cl_arg, &batch_size);
  softmax_xent_backward_cpu(vector_data(buffers[0]), label_data(buffers[1]),
                            vector_data(buffers[2]), shape, batch_size);
}

#ifdef STARCNN_USE_CUDA
void softmax_xent_forward_cuda_task(void *buffers[], void *cl_arg) {
  const SoftmaxXentShape shape = unpack_forward(buffers, cl_arg);
  softmax_xent_forward_cuda(vector_data(buffers[0]), label_data(buffers[1]),
                            vector_data(buffers[2]), shape, starpu_cuda_get_local_stream());
}

void softmax_xent_backward_cuda_task(void *buffers[], void *cl_arg) {
  uint32_t batch_size;
  const SoftmaxXentShape shape = unpack_backward(buffers, cl_arg, &batch_size);
  softmax_xent_backward_cuda(vector_data(buffers[0]), label_data(buffers[1]),
                             vector_data(buffers[2]), shape, batch_size,
                             starpu_cuda_get_local_stream());
}
#endif

starpu_perfmodel softmax_xent_forward_model = history_model("starcnn_softmax_xent_forward");
starpu_perfmodel softmax_xent_backward_model = history_model("starcnn_softmax_xent_backward");

}  // namespace

starpu_codelet softmax_xent_forward_codelet =
    make_codelet("softmax_xent_forward", softmax_xent_forward_cpu_task,
                 STARCNN_CUDA_FUNC(softmax_xent_forward_cuda_task), &softmax_xent_forward_model,
                 {STARPU_R, STARPU_R, STARPU_REDUX});
starpu_codelet softmax_xent_backward_codelet =
    make_codelet("softmax_xent_backward", softmax_xent_backward_cpu_task,
                 STARCNN_CUDA_FUNC(softmax_xent_backward_cuda_task), &softmax_xent_backward_model,
                 {STARPU_R, STARPU_R, STARPU_W});
void submit_softmax_xent_forward(starpu_data_handle_t z, starpu_data_handle_t labels,
                                 starpu_data_handle_t stats, const SoftmaxXentShape &shape,
                                 Where where, int priority) {
  const int ret =
      starpu_task_insert(&softmax_xent_forward_codelet, STARPU_R, z, STARPU_R, labels, STARPU_REDUX,
                         stats, STARPU_VALUE, &shape, sizeof(shape), STARPU_EXECUTE_WHERE,
                         where_mask(where), STARPU_PRIORITY, priority, 0);
  check_submit(ret, "softmax_xent_forward");
}

void submit_softmax_xent_backward(starpu_data_handle_t z, starpu_data_handle_t labels,
                                  starpu_data_handle_t dz, const SoftmaxXentShape &shape,
                                  uint32_t batch_size, Where where, int priority) {
  const int ret = starpu_task_insert(
      &softmax_xent_backward_codelet, STARPU_R, z, STARPU_R, labels, STARPU_W, dz, STARPU_VALUE,
      &shape, sizeof(shape), STARPU_VALUE, &batch_size, sizeof(batch_size), STARPU_EXECUTE_WHERE,
      where_mask(where), STARPU_PRIORITY, priority, 0);
  check_submit(ret, "softmax_xent_backward");
}

}  // namespace starcnn
