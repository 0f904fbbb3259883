#include "codelets/sum_packed.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace starcnn {

void sum_packed_cpu(float *packed, const float *const *const *groups, size_t group_count,
                    size_t per_group, const size_t *n, size_t skip, size_t length,
                    bool accumulate) {
  for (size_t g = 0; g < group_count && length > 0; ++g) {
    const size_t first = g == 0 ? skip : 0, count = std::min(n[g] - first, length);
    float *__restrict out = packed;
    const float *const *srcs = groups[g];
    if (!accumulate) std::copy(srcs[0] + first, srcs[0] + first + count, out);
    for (size_t s = accumulate ? 0 : 1; s < per_group; ++s) {
      const float *__restrict src = srcs[s] + first;
      for (size_t i = 0; i < count; ++i) out[i] += src[i];
    }
    packed += count;
    length -= count;
  }
}

namespace {

// A task's buffers as sum_packed_cpu/_cuda take them: the groups' vectors, then the packed one.
struct PackedBuffers {
  std::vector<const float *> srcs;
  std::vector<const float *const *> groups;
  std::vector<size_t> n;
  size_t per_group = 0, skip = 0, length = 0;
  bool accumulate = false;
  float *packed = nullptr;
};

// The task's argument: vectors a group, and where a slice starts in its first group (0 whole).
struct SumPackedArgs {
  uint32_t per_group;
  uint64_t skip;
  uint32_t accumulate;  // packed += (submit_add_packed)
};

PackedBuffers packed_buffers(void *buffers[], void *cl_arg) {
  SumPackedArgs args;
  starpu_codelet_unpack_args(cl_arg, &args);
  const size_t per_group = args.per_group;
  const size_t count = size_t(STARPU_TASK_GET_NBUFFERS(starpu_task_get_current())) - 1;
  STARPU_ASSERT(per_group > 0 && count % per_group == 0);
  PackedBuffers b;
  b.per_group = per_group;
  const size_t group_count = count / per_group;
  b.srcs.resize(count);
  b.groups.resize(group_count);
  b.n.resize(group_count);
  for (size_t i = 0; i < count; ++i) b.srcs[i] = vector_data(buffers[i]);
  for (size_t g = 0; g < group_count; ++g) {
    b.groups[g] = b.srcs.data() + g * per_group;
    b.n[g] = vector_length(buffers[g * per_group]);
  }
  b.packed = vector_data(buffers[count]);
  b.skip = args.skip;
  b.accumulate = args.accumulate != 0;
  b.length = vector_length(buffers[count]);
  return b;
}

void sum_packed_task(void *buffers[], void *cl_arg) {
  const PackedBuffers b = packed_buffers(buffers, cl_arg);
  sum_packed_cpu(b.packed, b.groups.data(), b.groups.size(), b.per_group, b.n.data(), b.skip,
                 b.length, b.accumulate);
}

#ifdef STARCNN_USE_CUDA
void sum_packed_cuda_task(void *buffers[], void *cl_arg) {
  const PackedBuffers b = packed_buffers(buffers, cl_arg);
  STARPU_ASSERT_MSG(b.skip == 0 && !b.accumulate, "sum_packed: slices and adds run on the CPU");
  sum_packed_cuda(b.packed, b.groups.data(), b.groups.size(), b.per_group, b.n.data(),
                  starpu_cuda_get_local_stream());
}
#endif

starpu_perfmodel sum_packed_model = size_history_model("starcnn_sum_packed");

}  // namespace

starpu_codelet sum_packed_codelet = make_codelet(
    "sum_packed", sum_packed_task, STARCNN_CUDA_FUNC(sum_packed_cuda_task), &sum_packed_model, {});

namespace {

// The groups' vectors (R) and the packed vector or slice (W), after the groups are checked;
// returns the groups' lengths summed.
size_t packed_descrs(const std::vector<std::vector<starpu_data_handle_t>> &groups,
                     std::vector<starpu_data_descr> &descrs) {
  if (groups.empty() || groups[0].empty())
    throw std::invalid_argument("sum_packed: no vectors to sum");
  const size_t per_group = groups[0].size();
  size_t total = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].size() != per_group)
      throw std::invalid_argument("sum_packed: group " + std::to_string(g) + " has " +
                                  std::to_string(groups[g].size()) + " vectors, group 0 " +
                                  std::to_string(per_group));
    const size_t n = starpu_vector_get_nx(groups[g][0]);
    for (starpu_data_handle_t h : groups[g]) {
      check_vector_length(h, n, "sum_packed", "a vector of a group");
      descrs.push_back({h, STARPU_R});
    }
    total += n;
  }
  return total;
}

void insert_sum_packed(std::vector<starpu_data_descr> &descrs, starpu_data_handle_t packed,
                       SumPackedArgs args, Where where, int priority) {
  descrs.push_back(
      {packed, args.accumulate ? starpu_data_access_mode(STARPU_RW | STARPU_COMMUTE) : STARPU_W});
  insert_task(sum_packed_codelet, "sum_packed", where, priority, STARPU_DATA_MODE_ARRAY,
              descrs.data(), int(descrs.size()), STARPU_VALUE, &args, sizeof(args));
}

}  // namespace

void submit_sum_packed(const std::vector<std::vector<starpu_data_handle_t>> &groups,
                       starpu_data_handle_t packed, Where where, int priority) {
  std::vector<starpu_data_descr> descrs;
  const size_t total = packed_descrs(groups, descrs);
  check_vector_length(packed, total, "sum_packed", "packed (the groups' lengths summed)");
  insert_sum_packed(descrs, packed, {uint32_t(groups[0].size()), 0, 0}, where, priority);
}

void submit_sum_packed_slice(const std::vector<std::vector<starpu_data_handle_t>> &groups,
                             starpu_data_handle_t slice, size_t skip, Where where, int priority) {
  if (kind_of(where) != Where::cpu)
    throw std::invalid_argument("sum_packed: slices run on CPU workers");
  std::vector<starpu_data_descr> descrs;
  const size_t total = packed_descrs(groups, descrs);
  const size_t length = starpu_vector_get_nx(slice);
  const size_t last = starpu_vector_get_nx(groups.back()[0]);
  if (skip >= starpu_vector_get_nx(groups[0][0]) || length == 0 || skip + length > total ||
      skip + length <= total - last)
    throw std::invalid_argument("sum_packed: a slice of " + std::to_string(length) +
                                " elements from " + std::to_string(skip) + " of " +
                                std::to_string(total) +
                                " must start in the first group and end in the last");
  insert_sum_packed(descrs, slice, {uint32_t(groups[0].size()), skip, 0}, where, priority);
}

void submit_add_packed(const std::vector<starpu_data_handle_t> &vectors,
                       starpu_data_handle_t packed, Where where, int priority) {
  if (kind_of(where) != Where::cpu)
    throw std::invalid_argument("sum_packed: adds into a packed vector run on CPU workers");
  std::vector<std::vector<starpu_data_handle_t>> groups;
  for (starpu_data_handle_t v : vectors) groups.push_back({v});
  std::vector<starpu_data_descr> descrs;
  const size_t total = packed_descrs(groups, descrs);
  check_vector_length(packed, total, "sum_packed", "packed (the vectors' lengths summed)");
  insert_sum_packed(descrs, packed, {1, 0, 1}, where, priority);
}

}  // namespace starcnn
