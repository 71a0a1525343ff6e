// Translation of CUPTI activity records into cuscope activities: a pure function of the record's
// bytes, so every record kind is tested on fabricated structs without a GPU.
#ifndef CUSCOPE_LIB_CUPTI_TRANSLATE_H_
#define CUSCOPE_LIB_CUPTI_TRANSLATE_H_

#include <string_view>

#include <cupti_activity.h>

#include "lib/core/records.h"

namespace cuscope::cupti {

// Translates one record and hands the result to `sink`. Records of kinds cuscope does not record
// go to sink.AddUntranslated so that they are counted, never silently lost.
void TranslateActivity(const CUpti_Activity& record, core::ActivitySink& sink);

// A short stable name for a CUPTI overhead kind ("cupti buffer flush", ...).
std::string_view OverheadKindName(CUpti_ActivityOverheadKind kind);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_TRANSLATE_H_
