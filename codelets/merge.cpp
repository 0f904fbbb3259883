#include "codelets/merge.h"

#include <array>
#include <cstring>
#include <stdexcept>

namespace starcnn {

bool MergeShape::operator==(const MergeShape &other) const {
  return std::memcmp(this, &other, sizeof(MergeShape)) == 0;
}

MergeShape make_merge_shape(uint32_t n, uint32_t hw, uint32_t c,
                            const std::vector<MergePiece> &pieces) {
  if (pieces.empty() || pieces.size() > kMaxMergeParts)
    throw std::invalid_argument("merge needs 1 to kMaxMergeParts parts");
  MergeShape shape;
  shape.n = n;
  shape.hw = hw;
  shape.c = c;
  shape.parts = static_cast<uint32_t>(pieces.size());
  uint64_t covered = 0;
  for (uint32_t p = 0; p < shape.parts; ++p) {
    const MergePiece &piece = pieces[p];
    if (piece.channels == 0 || piece.samples == 0)
      throw std::invalid_argument("merge part without channels or samples");
    if (uint64_t(piece.first_channel) + piece.channels > c ||
        uint64_t(piece.first_sample) + piece.samples > n)
      throw std::invalid_argument("merge part outside the whole");
    shape.channels[p] = piece.channels;
    shape.first_channel[p] = piece.first_channel;
    shape.samples[p] = piece.samples;
    shape.first_sample[p] = piece.first_sample;
    covered += uint64_t(piece.channels) * piece.samples;
  }
  // Inside the whole and as large as it: the pieces tile it unless two overlap, which the
  // callers' cuts (channel parts, then sample blocks of a part) cannot produce.
  if (covered != uint64_t(n) * c) throw std::invalid_argument("merge parts do not tile the whole");
  return shape;
}

MergeShape make_merge_shape(uint32_t n, uint32_t hw, const std::vector<uint32_t> &channels) {
  std::vector<MergePiece> pieces;
  uint32_t c = 0;
  for (uint32_t channel_count : channels) {
    pieces.push_back({c, channel_count, 0, n});
    c += channel_count;
  }
  return make_merge_shape(n, hw, c, pieces);
}

// Sample i of piece p is one contiguous run of c_p * hw floats; in the whole it starts at channel
// c0_p of sample s0_p + i.
void merge_cpu(const MergeShape &s, const float *const *parts, float *whole) {
  const size_t whole_sample = size_t(s.c) * s.hw;
  for (uint32_t p = 0; p < s.parts; ++p) {
    const size_t run = size_t(s.channels[p]) * s.hw;
    float *out = whole + s.first_sample[p] * whole_sample + size_t(s.first_channel[p]) * s.hw;
    for (size_t i = 0; i < s.samples[p]; ++i)
      std::memcpy(out + i * whole_sample, parts[p] + i * run, run * sizeof(float));
  }
}

void split_cpu(const MergeShape &s, const float *whole, float *const *parts) {
  const size_t whole_sample = size_t(s.c) * s.hw;
  for (uint32_t p = 0; p < s.parts; ++p) {
    const size_t run = size_t(s.channels[p]) * s.hw;
    const float *in = whole + s.first_sample[p] * whole_sample + size_t(s.first_channel[p]) * s.hw;
    for (size_t i = 0; i < s.samples[p]; ++i)
      std::memcpy(parts[p] + i * run, in + i * whole_sample, run * sizeof(float));
  }
}

namespace {

using PartPointers = std::array<float *, kMaxMergeParts>;

// Pointers to the part buffers, which start at buffers[first].
PartPointers part_pointers(void *buffers[], const MergeShape &s, uint32_t first) {
  PartPointers ptrs{};
  for (uint32_t p = 0; p < s.parts; ++p) {
    STARPU_ASSERT_MSG(vector_length(buffers[first + p]) == s.part_count(p),
                      "merge/split part handle does not match the shape");
    ptrs[p] = vector_data(buffers[first + p]);
  }
  return ptrs;
}

// The shape, checked against the whole's buffer: the last one of a merge (after the k parts), the
// first one of a split.
MergeShape unpack(void *buffers[], void *cl_arg, bool whole_first) {
  MergeShape shape;
  starpu_codelet_unpack_args(cl_arg, &shape);
  STARPU_ASSERT_MSG(vector_length(buffers[whole_first ? 0 : shape.parts]) == shape.whole_count(),
                    "merge/split whole handle does not match the shape");
  return shape;
}

void merge_cpu_task(void *buffers[], void *cl_arg) {
  const MergeShape s = unpack(buffers, cl_arg, false);
  merge_cpu(s, part_pointers(buffers, s, 0).data(), vector_data(buffers[s.parts]));
}

void split_cpu_task(void *buffers[], void *cl_arg) {
  const MergeShape s = unpack(buffers, cl_arg, true);
  split_cpu(s, vector_data(buffers[0]), part_pointers(buffers, s, 1).data());
}

#ifdef STARCNN_USE_CUDA
void merge_cuda_task(void *buffers[], void *cl_arg) {
  const MergeShape s = unpack(buffers, cl_arg, false);
  merge_cuda(s, part_pointers(buffers, s, 0).data(), vector_data(buffers[s.parts]),
             starpu_cuda_get_local_stream());
}

void split_cuda_task(void *buffers[], void *cl_arg) {
  const MergeShape s = unpack(buffers, cl_arg, true);
  split_cuda(s, vector_data(buffers[0]), part_pointers(buffers, s, 1).data(),
             starpu_cuda_get_local_stream());
}
#endif

starpu_perfmodel merge_model = history_model("starcnn_merge");
starpu_perfmodel split_model = history_model("starcnn_split");

std::vector<starpu_data_descr> describe(const std::vector<starpu_data_handle_t> &parts,
                                        starpu_data_access_mode mode) {
  std::vector<starpu_data_descr> descrs;
  for (starpu_data_handle_t h : parts) descrs.push_back({h, mode});
  return descrs;
}

void check_handles(const std::vector<starpu_data_handle_t> &parts, const MergeShape &s) {
  if (parts.size() != s.parts) throw std::invalid_argument("merge/split: part count mismatch");
}

}  // namespace

// Variable buffers: k parts plus the whole; StarPU's dynamic handle arrays allow k > NMAXBUFS.
starpu_codelet merge_codelet =
    make_codelet("merge", merge_cpu_task, STARCNN_CUDA_FUNC(merge_cuda_task), &merge_model, {});
starpu_codelet split_codelet =
    make_codelet("split", split_cpu_task, STARCNN_CUDA_FUNC(split_cuda_task), &split_model, {});

void submit_merge(const std::vector<starpu_data_handle_t> &parts, starpu_data_handle_t whole,
                  const MergeShape &shape, Where where, int priority) {
  check_handles(parts, shape);
  std::vector<starpu_data_descr> descrs = describe(parts, STARPU_R);
  descrs.push_back({whole, STARPU_W});
  insert_task(merge_codelet, "merge", where, priority, STARPU_DATA_MODE_ARRAY, descrs.data(),
              int(descrs.size()), STARPU_VALUE, &shape, sizeof(shape));
}

void submit_split(starpu_data_handle_t whole, const std::vector<starpu_data_handle_t> &parts,
                  const MergeShape &shape, Where where, int priority) {
  check_handles(parts, shape);
  std::vector<starpu_data_descr> descrs{{whole, STARPU_R}};
  for (const starpu_data_descr &d : describe(parts, STARPU_W)) descrs.push_back(d);
  insert_task(split_codelet, "split", where, priority, STARPU_DATA_MODE_ARRAY, descrs.data(),
              int(descrs.size()), STARPU_VALUE, &shape, sizeof(shape));
}

}  // namespace starcnn
