#pragma once
// Chrome Trace Event JSON of a schedule (opens in Perfetto and chrome://tracing): one track per
// device (process "devices") and one per link (process "links"; under the reference model, one
// per ordered device pair that carried data).
#include <string>

#include "doppler/graph/graph.hpp"
#include "doppler/sim/schedule.hpp"

namespace doppler {

/// Formats `s` as a Chrome Trace Event JSON document. Times are converted to microseconds:
/// seconds x 1e6, and reference units / 1e10 (the reference's reporting scale) x 1e6; the unit
/// is recorded in "otherData". `title` names the run (e.g. the method).
std::string format_chrome_trace(const Graph& g, const Schedule& s, const std::string& title);

}  // namespace doppler
