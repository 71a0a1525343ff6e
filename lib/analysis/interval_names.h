// The interval algebra (lib/intervals) under the analyzer's namespace, so that the analyzer's code
// says `IntervalSet` and `Intersect` as it always has while the algebra lives in a leaf folder that
// monitor mode and the request ledger use without depending on the analyzer.
#ifndef CUSCOPE_LIB_ANALYSIS_INTERVAL_NAMES_H_
#define CUSCOPE_LIB_ANALYSIS_INTERVAL_NAMES_H_

#include "lib/intervals/interval_set.h"

namespace cuscope::analysis {

using intervals::CoveredLength;
using intervals::Covers;
using intervals::GapsWithin;
using intervals::Hull;
using intervals::Intersect;
using intervals::Interval;
using intervals::IntervalSet;
using intervals::IntervalSetBuilder;
using intervals::RanInside;
using intervals::Subtract;
using intervals::TotalLength;
using intervals::Union;
using intervals::UnionOf;

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_INTERVAL_NAMES_H_
