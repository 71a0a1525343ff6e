#include "lib/process/launch_place.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cuscope::process {
namespace {

// The first of `names` that is set to a whole number in [0, 2^31): its value; -1 when none is.
int32_t FirstNumber(const EnvironmentLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const std::optional<std::string> v = env(name);
    if (!v || v->empty()) continue;
    // Digits only: SimpleAtoi alone would also take "+3" and " 3".
    if (!std::all_of(v->begin(), v->end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    int32_t n = -1;
    if (absl::SimpleAtoi(*v, &n) && n >= 0) return n;
  }
  return -1;
}

std::string FirstText(const EnvironmentLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (std::optional<std::string> v = env(name); v && !v->empty()) return *v;
  }
  return "";
}

bool IsSet(const EnvironmentLookup& env, const char* name) { return env(name).has_value(); }

std::string Launcher(const EnvironmentLookup& env) {
  if (IsSet(env, "TORCHELASTIC_RUN_ID") || IsSet(env, "TORCHELASTIC_RESTART_COUNT")) return "torchrun";
  if (IsSet(env, "CROSS_RANK") && IsSet(env, "RANK")) return "deepspeed";
  if (IsSet(env, "OMPI_COMM_WORLD_RANK")) return "mpirun (Open MPI)";
  if (IsSet(env, "PMIX_RANK")) return "PMIx";
  if (IsSet(env, "PMI_RANK")) return "PMI (MPICH, Intel MPI)";
  if (IsSet(env, "MV2_COMM_WORLD_RANK")) return "MVAPICH";
  if (IsSet(env, "SLURM_PROCID") && IsSet(env, "SLURM_STEP_ID")) return "srun";
  if (IsSet(env, "RANK") && IsSet(env, "WORLD_SIZE")) return "RANK/WORLD_SIZE";
  return "";
}

std::string JobId(const EnvironmentLookup& env) {
  if (std::string run = FirstText(env, {"TORCHELASTIC_RUN_ID"}); !run.empty()) return run;
  if (std::string slurm = FirstText(env, {"SLURM_JOB_ID", "SLURM_JOBID"}); !slurm.empty()) {
    const std::string step = FirstText(env, {"SLURM_STEP_ID", "SLURM_STEPID"});
    return step.empty() ? slurm : absl::StrCat(slurm, ".", step);
  }
  return FirstText(env, {"OMPI_MCA_ess_base_jobid", "PBS_JOBID", "LSB_JOBID"});
}

}  // namespace

LaunchPlace LaunchPlaceFrom(const EnvironmentLookup& env) {
  LaunchPlace p;
  p.rank = FirstNumber(env, {"RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
                             "SLURM_PROCID"});
  p.local_rank = FirstNumber(env, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                   "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"});
  p.world_size = FirstNumber(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                                   "SLURM_NTASKS"});
  p.local_world_size = FirstNumber(env, {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                         "MV2_COMM_WORLD_LOCAL_SIZE"});
  p.node_rank = FirstNumber(env, {"GROUP_RANK", "CROSS_RANK", "OMPI_COMM_WORLD_NODE_RANK", "SLURM_NODEID"});
  p.launcher = Launcher(env);
  p.job_id = JobId(env);
  return p;
}

LaunchPlace CurrentLaunchPlace() {
  return LaunchPlaceFrom([](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  });
}

std::string DescribeLaunchPlace(const LaunchPlace& place) {
  if (!place.has_rank()) return "";
  std::string out = absl::StrCat("rank ", place.rank);
  if (place.world_size > 0) absl::StrAppend(&out, " of ", place.world_size);
  if (place.local_rank >= 0) {
    absl::StrAppend(&out, " (local ", place.local_rank);
    if (place.local_world_size > 0) absl::StrAppend(&out, " of ", place.local_world_size);
    if (place.node_rank >= 0) absl::StrAppend(&out, ", node ", place.node_rank);
    out.push_back(')');
  }
  if (!place.launcher.empty()) absl::StrAppend(&out, ", ", place.launcher);
  if (!place.job_id.empty()) absl::StrAppend(&out, " job ", place.job_id);
  return out;
}

}  // namespace cuscope::process
