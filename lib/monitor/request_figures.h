// Monitor mode's request figures: the requests a RequestLedger made final, per route
// (RouteRequestFigures of figures.h).
#ifndef CUSCOPE_LIB_MONITOR_REQUEST_FIGURES_H_
#define CUSCOPE_LIB_MONITOR_REQUEST_FIGURES_H_

#include <vector>

#include "lib/monitor/figures.h"
#include "lib/requests/request_ledger.h"

namespace cuscope::monitor {

// One entry per route among `done` (routes named by `ledger`), by route name.
std::vector<RouteRequestFigures> FiguresByRoute(const std::vector<requests::RequestFigures>& done,
                                                const requests::RequestLedger& ledger);

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_REQUEST_FIGURES_H_
