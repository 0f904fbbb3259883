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

void softmax_xent_train_cpu(const float *z, const int32_t *labels, float *stats, float *dz,
                            const SoftmaxXentShape &shape, uint32_t batch_size) {
  softmax_xent_forward_cpu(z, labels, stats, shape);
  softmax_xent_backward_cpu(z, labels, dz, shape, batch_size);
}

#ifdef STARCNN_USE_CUDA
void softmax_xent_train_cuda(const float *z, const int32_t *labels, float *stats, float *dz,
                             const SoftmaxXentShape &shape, uint32_t batch_size,
                             cudaStream_t stream) {
  softmax_xent_forward_cuda(z, labels, stats, shape, stream);
  softmax_xent_backward_cuda(z, labels, dz, shape, batch_size, stream);
}
#endif

namespace {

// Buffers are (Z, labels, stats or dZ) in both directions, (Z, labels, stats, dZ) together.
void check_buffers(void *buffers[], const SoftmaxXentShape &shape, size_t out_size) {
  STARPU_ASSERT(vector_length(buffers[0]) == size_t(shape.n) * shape.classes);
  STARPU_ASSERT(vector_length(buffers[1]) == shape.n);
  STARPU_ASSERT(vector_length(buffers[2]) == out_size);
}

// The kernels' arguments: (z, labels, stats, shape) forward, (z, labels, dz, shape, batch_size)
// backward.
auto forward_args(void *buffers[], void *cl_arg) {
  SoftmaxXentShape shape;
  starpu_codelet_unpack_args(cl_arg, &shape);
  check_buffers(buffers, shape, kXentStatsSize);
  return std::make_tuple(vector_data(buffers[0]), int32_vector_data(buffers[1]),
                         vector_data(buffers[2]), shape);
}
auto backward_args(void *buffers[], void *cl_arg) {
  SoftmaxXentShape shape;
  uint32_t batch_size;
  starpu_codelet_unpack_args(cl_arg, &shape, &batch_size);
  check_buffers(buffers, shape, size_t(shape.n) * shape.classes);
  return std::make_tuple(vector_data(buffers[0]), int32_vector_data(buffers[1]),
                         vector_data(buffers[2]), shape, batch_size);
}

auto train_args(void *buffers[], void *cl_arg) {
  SoftmaxXentShape shape;
  uint32_t batch_size;
  starpu_codelet_unpack_args(cl_arg, &shape, &batch_size);
  check_buffers(buffers, shape, kXentStatsSize);
  STARPU_ASSERT(vector_length(buffers[3]) == size_t(shape.n) * shape.classes);
  return std::make_tuple(vector_data(buffers[0]), int32_vector_data(buffers[1]),
                         vector_data(buffers[2]), vector_data(buffers[3]), shape, batch_size);
}

starpu_perfmodel softmax_xent_forward_model = history_model("starcnn_softmax_xent_forward");
starpu_perfmodel softmax_xent_train_model = history_model("starcnn_softmax_xent_train");
starpu_perfmodel softmax_xent_backward_model = history_model("starcnn_softmax_xent_backward");

}  // namespace

starpu_codelet softmax_xent_forward_codelet = STARCNN_KERNEL_CODELET(
    "softmax_xent_forward", softmax_xent_forward_cpu, softmax_xent_forward_cuda, forward_args,
    &softmax_xent_forward_model, {STARPU_R, STARPU_R, STARPU_REDUX});
starpu_codelet softmax_xent_backward_codelet = STARCNN_KERNEL_CODELET(
    "softmax_xent_backward", softmax_xent_backward_cpu, softmax_xent_backward_cuda, backward_args,
    &softmax_xent_backward_model, {STARPU_R, STARPU_R, STARPU_W});
starpu_codelet softmax_xent_train_codelet = STARCNN_KERNEL_CODELET(
    "softmax_xent_train", softmax_xent_train_cpu, softmax_xent_train_cuda, train_args,
    &softmax_xent_train_model, {STARPU_R, STARPU_R, STARPU_REDUX, STARPU_W});

void submit_softmax_xent_forward(starpu_data_handle_t z, starpu_data_handle_t labels,
                                 starpu_data_handle_t stats, const SoftmaxXentShape &shape,
                                 Where where, int priority) {
  insert_task(softmax_xent_forward_codelet, "softmax_xent_forward", where, priority, STARPU_R, z,
              STARPU_R, labels, STARPU_REDUX, stats, STARPU_VALUE, &shape, sizeof(shape));
}

void submit_softmax_xent_backward(starpu_data_handle_t z, starpu_data_handle_t labels,
                                  starpu_data_handle_t dz, const SoftmaxXentShape &shape,
                                  uint32_t batch_size, Where where, int priority) {
  insert_task(softmax_xent_backward_codelet, "softmax_xent_backward", where, priority, STARPU_R, z,
              STARPU_R, labels, STARPU_W, dz, STARPU_VALUE, &shape, sizeof(shape), STARPU_VALUE,
              &batch_size, sizeof(batch_size));
}

void submit_softmax_xent_train(starpu_data_handle_t z, starpu_data_handle_t labels,
                               starpu_data_handle_t stats, starpu_data_handle_t dz,
                               const SoftmaxXentShape &shape, uint32_t batch_size, Where where,
                               int priority) {
  insert_task(softmax_xent_train_codelet, "softmax_xent_train", where, priority, STARPU_R, z,
              STARPU_R, labels, STARPU_REDUX, stats, STARPU_W, dz, STARPU_VALUE, &shape,
              sizeof(shape), STARPU_VALUE, &batch_size, sizeof(batch_size));
}

}  // namespace starcnn
