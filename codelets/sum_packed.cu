#include "codelets/sum_packed.h"
#include "codelets/support/cuda_support.h"

#include <algorithm>

namespace starcnn {
namespace {

constexpr size_t kMaxGroupsPerLaunch = 32;
constexpr size_t kMaxSourcesPerLaunch = 64;

// Up to kMaxGroupsPerLaunch groups, passed by value as the kernel's argument (no device table to
// allocate inside a task). Group g owns blocks [first_block[g], first_block[g + 1]); its vectors
// are src[g * per_group ...].
struct SumPackedTable {
  const float *src[kMaxSourcesPerLaunch];
  float *dst[kMaxGroupsPerLaunch];
  size_t n[kMaxGroupsPerLaunch];
  unsigned first_block[kMaxGroupsPerLaunch + 1];
  unsigned groups, per_group;
};

// Same float additions in the same order as sum_packed_cpu, so both sides get the same bits.
__global__ void sum_packed_kernel(SumPackedTable t) {
  unsigned g = 0;
  while (g + 1 < t.groups && t.first_block[g + 1] <= blockIdx.x) ++g;
  const size_t step = size_t(t.first_block[g + 1] - t.first_block[g]) * blockDim.x;
  const float *const *srcs = t.src + size_t(g) * t.per_group;
  for (size_t i = (blockIdx.x - t.first_block[g]) * size_t(blockDim.x) + threadIdx.x; i < t.n[g];
       i += step) {
    float sum = srcs[0][i];
    for (unsigned s = 1; s < t.per_group; ++s) sum = __fadd_rn(sum, srcs[s][i]);
    t.dst[g][i] = sum;
  }
}

}  // namespace

void sum_packed_cuda(float *packed, const float *const *const *groups, size_t group_count,
                     size_t per_group, const size_t *n, cudaStream_t stream) {
  // Passes over the groups' vectors, as many as one table holds; after the first, a pass starts
  // from the slice the last one wrote, so the additions keep sum_packed_cpu's order.
  for (size_t from = 0; from < per_group;) {
    const size_t carried = from == 0 ? 0 : 1;
    const size_t sources = std::min(per_group - from, kMaxSourcesPerLaunch - carried);
    const size_t in_table = sources + carried;
    const size_t batch = std::min(kMaxGroupsPerLaunch, kMaxSourcesPerLaunch / in_table);
    float *slice = packed;
    for (size_t first = 0; first < group_count; first += batch) {
      SumPackedTable table{};
      table.groups = unsigned(std::min(batch, group_count - first));
      table.per_group = unsigned(in_table);
      for (unsigned g = 0; g < table.groups; ++g) {
        const float **src = table.src + g * in_table;
        if (carried) *src++ = slice;
        for (size_t s = 0; s < sources; ++s) src[s] = groups[first + g][from + s];
        table.dst[g] = slice;
        table.n[g] = n[first + g];
        table.first_block[g + 1] = table.first_block[g] + grid_for(n[first + g]);
        slice += n[first + g];
      }
      sum_packed_kernel<<<table.first_block[table.groups], kThreadsPerBlock, 0, stream>>>(table);
      check_launch("sum_packed");
    }
    from += sources;
  }
}

}  // namespace starcnn
