// host_cores against hand-derived blocks, a brute-force check that the ranks of a host never share
// a core while there are enough, and place_rank_on_host_cores' respect for the user's settings.
#include "model/dist/host_cores.h"
#include "tests/support/scoped_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

namespace starcnn {
namespace {

TEST(HostCores, AloneOnItsHostIsLeftToStarpu) {
  EXPECT_FALSE(host_cores(0, 1, 16, true));
  EXPECT_FALSE(host_cores(-1, 2, 16, true));  // no local rank given
  EXPECT_FALSE(host_cores(2, 2, 16, true));   // not a rank of this host
}

TEST(HostCores, TwoRanksOnSixteenCoresByHand) {
  // 8 cores each; a GPU rank keeps 3 for its main, StarPU-MPI and CUDA threads, a CPU rank 2.
  const auto gpu_rank = host_cores(0, 2, 16, true);
  ASSERT_TRUE(gpu_rank);
  EXPECT_EQ(gpu_rank->cpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(gpu_rank->cpu_workers, 5);
  EXPECT_EQ(gpu_rank->describe(), "cores 0-7, 5 CPU workers");
  const auto cpu_rank = host_cores(1, 2, 16, false);
  ASSERT_TRUE(cpu_rank);
  EXPECT_EQ(cpu_rank->cpus, (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(cpu_rank->cpu_workers, 6);
}

TEST(HostCores, SmallHostsKeepOneWorkerPerRank) {
  const auto second = host_cores(1, 2, 2, false);  // the 2-core development machine
  ASSERT_TRUE(second);
  EXPECT_EQ(second->cpus, (std::vector<int>{1}));
  EXPECT_EQ(second->cpu_workers, 1);
  EXPECT_EQ(second->describe(), "cores 1, 1 CPU worker");
  const auto crowded = host_cores(4, 5, 2, true);  // more ranks than cores
  ASSERT_TRUE(crowded);
  EXPECT_EQ(crowded->cpus, (std::vector<int>{0}));
  EXPECT_EQ(crowded->cpu_workers, 1);
}

TEST(HostCores, RanksNeverShareACoreWhenThereAreEnough) {
  for (int cores = 1; cores <= 64; ++cores)
    for (int size = 2; size <= cores; ++size) {
      std::set<int> taken;
      for (int rank = 0; rank < size; ++rank)
        for (bool cuda : {false, true}) {
          const auto placed = host_cores(rank, size, cores, cuda);
          ASSERT_TRUE(placed);
          ASSERT_FALSE(placed->cpus.empty());
          EXPECT_GE(placed->cpu_workers, 1);
          EXPECT_LE(placed->cpu_workers, int(placed->cpus.size()));
          for (int cpu : placed->cpus) {
            EXPECT_GE(cpu, 0);
            EXPECT_LT(cpu, cores);
            if (!cuda) {
              EXPECT_TRUE(taken.insert(cpu).second) << cores << " " << size << " " << rank;
            }
          }
        }
    }
}

using testing::ScopedEnv;

TEST(HostCores, PlacementSetsStarpuUnlessTheUserDid) {
  ScopedEnv rank("OMPI_COMM_WORLD_LOCAL_RANK", "0"), size("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
  ScopedEnv ncuda("STARPU_NCUDA", "0"), ncpus("STARPU_NCPUS", nullptr);
  {
    ScopedEnv cpuid("STARPU_WORKERS_CPUID", nullptr), ncpu("STARPU_NCPU", nullptr);
    const auto placed = place_rank_on_host_cores();
    ASSERT_TRUE(placed);
    EXPECT_EQ(std::string(std::getenv("STARPU_NCPU")), std::to_string(placed->cpu_workers));
    EXPECT_EQ(std::string(std::getenv("STARPU_WORKERS_CPUID")).substr(0, 1), "0");
  }
  {
    ScopedEnv cpuid("STARPU_WORKERS_CPUID", nullptr), ncpu("STARPU_NCPU", "1");
    EXPECT_FALSE(place_rank_on_host_cores());
    EXPECT_EQ(std::getenv("STARPU_WORKERS_CPUID"), nullptr);
  }
  {
    ScopedEnv alone("OMPI_COMM_WORLD_LOCAL_SIZE", "1");
    ScopedEnv cpuid("STARPU_WORKERS_CPUID", nullptr), ncpu("STARPU_NCPU", nullptr);
    EXPECT_FALSE(place_rank_on_host_cores());
    EXPECT_EQ(std::getenv("STARPU_NCPU"), nullptr);
  }
}

}  // namespace
}  // namespace starcnn
