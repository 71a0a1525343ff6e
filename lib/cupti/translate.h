// Translation of CUPTI activity records into cuscope activities: a pure function of the record's
// bytes, so every record kind is tested on fabricated structs without a GPU.
#ifndef CUSCOPE_LIB_CUPTI_TRANSLATE_H_
#define CUSCOPE_LIB_CUPTI_TRANSLATE_H_

#include <string_view>

#include <cupti_activity.h>

#include "absl/container/flat_hash_map.h"
#include "lib/core/records.h"

namespace cuscope::cupti {

// The launches replayed for kernel metrics: correlation id -> when their profiling began (CUPTI
// timestamp, ns).
using ReplayedLaunches = absl::flat_hash_map<uint64_t, uint64_t>;

// Translates one record and hands the result to `sink`. Records of kinds cuscope does not record
// go to sink.AddUntranslated so that they are counted, never silently lost. Kernel records of
// `replayed` launches are flagged replayed, and kept even without timestamps.
void TranslateActivity(const CUpti_Activity& record, core::ActivitySink& sink,
                       const ReplayedLaunches* replayed = nullptr);

// A short stable name for a CUPTI overhead kind ("cupti buffer flush", ...).
std::string_view OverheadKindName(CUpti_ActivityOverheadKind kind);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_TRANSLATE_H_
