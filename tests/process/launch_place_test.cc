// Where a process stands in a job, from each launcher's variables.
#include "lib/process/launch_place.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace cuscope::process {
namespace {

LaunchPlace From(const std::map<std::string, std::string>& vars) {
  return LaunchPlaceFrom([&](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

TEST(LaunchPlaceTest, OutsideALauncherNothingIsKnown) {
  const LaunchPlace p = From({{"PATH", "/usr/bin"}});
  EXPECT_FALSE(p.has_rank());
  EXPECT_EQ(p.world_size, -1);
  EXPECT_EQ(p.launcher, "");
  EXPECT_EQ(p.job_id, "");
  EXPECT_EQ(DescribeLaunchPlace(p), "");
}

TEST(LaunchPlaceTest, Torchrun) {
  const LaunchPlace p = From({{"RANK", "5"},
                              {"LOCAL_RANK", "1"},
                              {"WORLD_SIZE", "8"},
                              {"LOCAL_WORLD_SIZE", "4"},
                              {"GROUP_RANK", "1"},
                              {"TORCHELASTIC_RUN_ID", "f3a9"},
                              {"TORCHELASTIC_RESTART_COUNT", "0"}});
  EXPECT_EQ(p.rank, 5);
  EXPECT_EQ(p.local_rank, 1);
  EXPECT_EQ(p.world_size, 8);
  EXPECT_EQ(p.local_world_size, 4);
  EXPECT_EQ(p.node_rank, 1);
  EXPECT_EQ(p.launcher, "torchrun");
  EXPECT_EQ(p.job_id, "f3a9");
  EXPECT_EQ(DescribeLaunchPlace(p), "rank 5 of 8 (local 1 of 4, node 1), torchrun job f3a9");
}

TEST(LaunchPlaceTest, OpenMpi) {
  const LaunchPlace p = From({{"OMPI_COMM_WORLD_RANK", "3"},
                              {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                              {"OMPI_COMM_WORLD_SIZE", "4"},
                              {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                              {"OMPI_COMM_WORLD_NODE_RANK", "0"},
                              {"OMPI_MCA_ess_base_jobid", "2861694977"}});
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.local_world_size, 4);
  EXPECT_EQ(p.launcher, "mpirun (Open MPI)");
  EXPECT_EQ(p.job_id, "2861694977");
}

TEST(LaunchPlaceTest, SrunWithAJobAndStep) {
  const LaunchPlace p = From({{"SLURM_PROCID", "12"},
                              {"SLURM_LOCALID", "4"},
                              {"SLURM_NTASKS", "16"},
                              {"SLURM_NODEID", "1"},
                              {"SLURM_JOB_ID", "123456"},
                              {"SLURM_STEP_ID", "0"}});
  EXPECT_EQ(p.rank, 12);
  EXPECT_EQ(p.local_rank, 4);
  EXPECT_EQ(p.world_size, 16);
  EXPECT_EQ(p.node_rank, 1);
  EXPECT_EQ(p.launcher, "srun");
  EXPECT_EQ(p.job_id, "123456.0");
}

// torchrun under srun: srun's task id counts nodes; torchrun's RANK is the process's rank.
TEST(LaunchPlaceTest, TheFrameworksRankComesBeforeTheResourceManagers) {
  const LaunchPlace p = From({{"RANK", "6"}, {"WORLD_SIZE", "8"}, {"TORCHELASTIC_RUN_ID", "x"}, {"SLURM_PROCID", "1"},
                              {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "99"}});
  EXPECT_EQ(p.rank, 6);
  EXPECT_EQ(p.world_size, 8);
  EXPECT_EQ(p.launcher, "torchrun");
  EXPECT_EQ(p.job_id, "x") << "the torchrun run id names the job torchrun started";
}

TEST(LaunchPlaceTest, MpichAndIntelMpiThroughPmi) {
  const LaunchPlace p = From({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "2"}, {"MPI_LOCALNRANKS", "4"}});
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.local_rank, 2);
  EXPECT_EQ(p.local_world_size, 4);
  EXPECT_EQ(p.launcher, "PMI (MPICH, Intel MPI)");
}

TEST(LaunchPlaceTest, DeepSpeed) {
  const LaunchPlace p = From({{"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "2"}, {"CROSS_RANK", "0"},
                              {"CROSS_SIZE", "1"}, {"LOCAL_SIZE", "2"}});
  EXPECT_EQ(p.launcher, "deepspeed");
  EXPECT_EQ(p.node_rank, 0);
}

// A value that is not a whole number from 0 up is not used; the next variable may be.
TEST(LaunchPlaceTest, ValuesThatAreNotRanksAreNotUsed) {
  for (const char* bad : {"", "-1", "+3", "3x", "x", "99999999999", " 3"}) {
    EXPECT_EQ(From({{"RANK", bad}}).rank, -1) << bad;
  }
  EXPECT_EQ(From({{"RANK", "abc"}, {"OMPI_COMM_WORLD_RANK", "4"}}).rank, 4);
  EXPECT_EQ(From({{"RANK", "0"}}).rank, 0) << "rank 0 is a rank";
}

}  // namespace
}  // namespace cuscope::process
