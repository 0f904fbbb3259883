#include "codelets/sgd.h"

#include <array>
#include <stdexcept>
#include <string>
#include <utility>

namespace starcnn {

namespace {

// One loop per case, its pointers restrict and the parameters in registers, so that the compiler
// vectorizes each: the one loop testing the cases inside (and reloading lr through a reference
// that might alias w) ran scalar, 0.27 ms a step for MNIST lenet's 44 K floats on one core.
template <bool kExtra, bool kMomentum, bool kFirst, bool kCopy>
void sgd_loop(float *__restrict w, const float *__restrict grad, float *__restrict buf, size_t n,
              const SgdParams p, const float *__restrict extra, float *__restrict copy) {
  const float lr = p.lr, momentum = p.momentum, decay = p.weight_decay;
  for (size_t i = 0; i < n; ++i) {
    const float total = kExtra ? grad[i] + extra[i] : grad[i];
    const float g = total + decay * w[i];
    float step = g;
    if (kMomentum) {
      step = kFirst ? g : momentum * buf[i] + g;
      buf[i] = step;
    }
    const float updated = w[i] - lr * step;
    w[i] = updated;
    if (kCopy) copy[i] = updated;
  }
}

using SgdLoop = void (*)(float *, const float *, float *, size_t, SgdParams, const float *,
                         float *);

template <size_t... kCase>
constexpr std::array<SgdLoop, sizeof...(kCase)> sgd_loops(std::index_sequence<kCase...>) {
  return {&sgd_loop<(kCase & 8) != 0, (kCase & 4) != 0, (kCase & 2) != 0, (kCase & 1) != 0>...};
}

}  // namespace

void sgd_update_cpu(float *w, const float *grad, float *momentum_buf, size_t n, const SgdParams &p,
                    const float *extra_grad, float *w_copy) {
  static constexpr auto loops = sgd_loops(std::make_index_sequence<16>());
  const bool momentum = p.momentum != 0.0f;
  const size_t which = (extra_grad ? 8 : 0) + (momentum ? 4 : 0) +
                       (momentum && p.first_step ? 2 : 0) + (w_copy ? 1 : 0);
  loops[which](w, grad, momentum_buf, n, p, extra_grad, w_copy);
}

void sgd_update_cpu(const SgdVector *vectors, size_t count, const SgdParams &params) {
  for (size_t v = 0; v < count; ++v)
    sgd_update_cpu(vectors[v].w, vectors[v].grad, vectors[v].momentum_buf, vectors[v].n, params,
                   vectors[v].extra_grad, vectors[v].w_copy);
}

namespace {

// The task's argument: the vector count tells how the buffers divide (2 or 3 a vector), the flags
// which packed vectors follow them.
struct SgdTaskArgs {
  SgdParams params;
  uint32_t vectors;
  uint32_t has_extra_grads, has_weights_copy, has_packed_grads;
};

size_t buffers_per_vector(const SgdTaskArgs &args) {
  return 1 + (args.has_packed_grads ? 0 : 1) + (args.params.momentum != 0.0f ? 1 : 0);
}

// The update's arguments: the vectors as the worker sees them, and the params.
auto sgd_args(void *buffers[], void *cl_arg) {
  SgdTaskArgs args;
  starpu_codelet_unpack_args(cl_arg, &args);
  const size_t stride = buffers_per_vector(args);
  STARPU_ASSERT_MSG(STARPU_TASK_GET_NBUFFERS(starpu_task_get_current()) ==
                        args.vectors * stride + args.has_packed_grads + args.has_extra_grads +
                            args.has_weights_copy,
                    "sgd_update: buffer count does not match the vector count");
  std::vector<SgdVector> vectors(args.vectors);
  void **packed = buffers + args.vectors * stride;
  const float *grads = args.has_packed_grads ? vector_data(*packed++) : nullptr;
  float *extra = args.has_extra_grads ? vector_data(*packed++) : nullptr;
  float *copy = args.has_weights_copy ? vector_data(*packed) : nullptr;
  const bool momentum = args.params.momentum != 0.0f;
  for (size_t v = 0; v < vectors.size(); ++v) {
    void **b = buffers + v * stride;
    const size_t n = vector_length(b[0]);
    vectors[v] = {vector_data(b[0]),
                  grads ? grads : vector_data(b[1]),
                  momentum ? vector_data(b[stride - 1]) : nullptr,
                  n,
                  extra,
                  copy};
    if (grads) grads += n;
    if (extra) extra += n;
    if (copy) copy += n;
  }
  return std::make_tuple(std::move(vectors), args.params);
}

void cpu_update(const std::vector<SgdVector> &vectors, const SgdParams &params) {
  sgd_update_cpu(vectors.data(), vectors.size(), params);
}
#ifdef STARCNN_USE_CUDA
void cuda_update(const std::vector<SgdVector> &vectors, const SgdParams &params,
                 cudaStream_t stream) {
  sgd_update_cuda(vectors.data(), vectors.size(), params, stream);
}
#endif

// Buffer sizes only (StarPU's default footprint): the learning rate changes over training, the
// work does not. With and without momentum differ in buffer count, so in footprint too.
starpu_perfmodel sgd_update_model = size_history_model("starcnn_sgd_update");

void check_same_length(starpu_data_handle_t a, starpu_data_handle_t w, const char *what,
                       size_t vector) {
  if (starpu_vector_get_nx(a) != starpu_vector_get_nx(w))
    throw std::invalid_argument(std::string("sgd_update: ") + what + " and w of vector " +
                                std::to_string(vector) + " differ in length");
}

}  // namespace

starpu_codelet sgd_update_codelet =
    STARCNN_KERNEL_CODELET("sgd_update", cpu_update, cuda_update, sgd_args, &sgd_update_model, {});

void submit_sgd_update(const std::vector<SgdHandles> &vectors, const SgdParams &params, Where where,
                       int priority, SgdPacked packed) {
  if (vectors.empty()) throw std::invalid_argument("sgd_update: no vectors to update");
  const bool momentum = params.momentum != 0.0f;
  std::vector<starpu_data_descr> descrs;
  for (size_t v = 0; v < vectors.size(); ++v) {
    const SgdHandles &h = vectors[v];
    descrs.push_back({h.w, STARPU_RW});
    if (!packed.grads) {
      check_same_length(h.grad, h.w, "grad", v);
      descrs.push_back({h.grad, STARPU_R});
    }
    if (!momentum) continue;
    if (!h.momentum_buf)
      throw std::invalid_argument("sgd_update: momentum needs a buffer (vector " +
                                  std::to_string(v) + ")");
    check_same_length(h.momentum_buf, h.w, "momentum_buf", v);
    descrs.push_back({h.momentum_buf, STARPU_RW});
  }
  size_t total = 0;
  for (const SgdHandles &h : vectors) total += starpu_vector_get_nx(h.w);
  if (packed.grads) {
    check_vector_length(packed.grads, total, "sgd_update", "packed gradients");
    descrs.push_back({packed.grads, STARPU_R});
  }
  if (packed.extra_grads) {
    check_vector_length(packed.extra_grads, total, "sgd_update", "packed extra gradients");
    descrs.push_back({packed.extra_grads, STARPU_R});
  }
  if (packed.weights_copy) {
    check_vector_length(packed.weights_copy, total, "sgd_update", "packed copy of the weights");
    descrs.push_back({packed.weights_copy, STARPU_W});
  }
  SgdTaskArgs args{params, uint32_t(vectors.size()), packed.extra_grads != nullptr,
                   packed.weights_copy != nullptr, packed.grads != nullptr};
  insert_task(sgd_update_codelet, "sgd_update", where, priority, STARPU_DATA_MODE_ARRAY,
              descrs.data(), int(descrs.size()), STARPU_VALUE, &args, sizeof(args));
}

}  // namespace starcnn
