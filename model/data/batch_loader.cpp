#include "model/data/batch_loader.h"

#include "codelets/support/codelet_support.h"

#include <stdexcept>

namespace starcnn {
namespace {

struct LoadArgs {
  const Batcher *batcher;
  size_t batch, first;
};

void load_batch_cpu(void *buffers[], void *cl_arg) {
  LoadArgs args;
  starpu_codelet_unpack_args(cl_arg, &args);
  args.batcher->fill(args.batch, args.first, vector_length(buffers[1]), vector_data(buffers[0]),
                     int32_vector_data(buffers[1]));
}

starpu_perfmodel load_batch_model = size_history_model("starcnn_load_batch");
starpu_codelet load_batch_codelet =
    make_codelet("load_batch", load_batch_cpu, nullptr, &load_batch_model, {STARPU_W, STARPU_W});

}  // namespace

void submit_load_batch(const Batcher &batcher, size_t b, const Tensor &images, const Tensor &labels,
                       size_t first, Where where, int priority) {
  if (labels.size() == 0 || first + labels.size() > batcher.batch_size(b))
    throw std::invalid_argument("batch " + std::to_string(b) + " has " +
                                std::to_string(batcher.batch_size(b)) + " samples, the tensors " +
                                std::to_string(labels.size()) + " from sample " +
                                std::to_string(first));
  const LoadArgs args{&batcher, b, first};
  insert_task(load_batch_codelet, "load_batch", where, priority, STARPU_VALUE, &args, sizeof(args),
              STARPU_W, images.handle(), STARPU_W, labels.handle());
}

}  // namespace starcnn
