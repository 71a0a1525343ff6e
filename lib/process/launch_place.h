// Where a process stands in a distributed job, from the variables its launcher sets: rank, local
// rank, world size, the node's rank, the launcher and its job id. Pure: the environment is a
// function, so every launcher's set is tested on any machine.
//
// The variables, first match wins per field (a framework's own variables before the MPI library's,
// before the resource manager's: torchrun under srun sets RANK per process while SLURM_PROCID
// counts srun's tasks, one per node):
//
//   rank              RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, MV2_COMM_WORLD_RANK, SLURM_PROCID
//   local rank        LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, MV2_COMM_WORLD_LOCAL_RANK,
//                     SLURM_LOCALID
//   world size        WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, MV2_COMM_WORLD_SIZE, SLURM_NTASKS
//   local world size  LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, MV2_COMM_WORLD_LOCAL_SIZE
//   node rank         GROUP_RANK, CROSS_RANK, OMPI_COMM_WORLD_NODE_RANK, SLURM_NODEID
//   job id            TORCHELASTIC_RUN_ID, SLURM_JOB_ID[.SLURM_STEP_ID], OMPI_MCA_ess_base_jobid, PBS_JOBID,
//                     LSB_JOBID
//
// A value that is not a whole number from 0 up (below 2^31) is not used: the field stays unknown.
#ifndef CUSCOPE_LIB_PROCESS_LAUNCH_PLACE_H_
#define CUSCOPE_LIB_PROCESS_LAUNCH_PLACE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cuscope::process {

struct LaunchPlace {
  int32_t rank = -1;  // -1: unknown
  int32_t local_rank = -1;
  int32_t world_size = -1;
  int32_t local_world_size = -1;
  int32_t node_rank = -1;
  // "torchrun", "deepspeed", "mpirun (Open MPI)", "PMIx", "PMI (MPICH, Intel MPI)", "MVAPICH", "srun";
  // empty outside a launcher.
  std::string launcher;
  std::string job_id;

  bool has_rank() const { return rank >= 0; }
};

using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

LaunchPlace LaunchPlaceFrom(const EnvironmentLookup& env);
// This process's, from getenv.
LaunchPlace CurrentLaunchPlace();

// "rank 3 of 8 (local 1 of 4, node 0), torchrun job f3a9": what a person reads; "" outside a job.
std::string DescribeLaunchPlace(const LaunchPlace& place);

}  // namespace cuscope::process

#endif  // CUSCOPE_LIB_PROCESS_LAUNCH_PLACE_H_
