#include "lib/core/record_codec/decode_checks.h"

#include "absl/strings/str_cat.h"

namespace cuscope::core {

absl::Status Corrupt(const std::string& what) { return absl::DataLossError(absl::StrCat("corrupt trace: ", what)); }

absl::Status BadDevice(const std::string& what, uint32_t device) {
  return Corrupt(absl::StrCat(what, " names device ", device, " (device ids are below ", kMaxDevices, ")"));
}

}  // namespace cuscope::core
