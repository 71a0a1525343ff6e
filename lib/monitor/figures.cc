#include "lib/monitor/figures.h"

namespace cuscope::monitor {

const char* HostCauseName(HostCause cause) {
  switch (cause) {
    case HostCause::kSync: return "sync";
    case HostCause::kCopy: return "copy";
    case HostCause::kAlloc: return "alloc";
    case HostCause::kSetup: return "setup";
    case HostCause::kLaunch: return "launch";
    case HostCause::kOutsideCuda: return "outside_cuda";
  }
  return "outside_cuda";
}

}  // namespace cuscope::monitor
