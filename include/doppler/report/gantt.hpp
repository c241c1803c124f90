#pragma once
// SVG Gantt chart of a schedule: one row per device (ops coloured by kind, labelled when wide
// enough, with a tooltip each) and one row per link or device pair with the transfers it
// carried; a time axis, a legend and a title with the makespan.
#include <string>

#include "doppler/graph/graph.hpp"
#include "doppler/sim/schedule.hpp"

namespace doppler {

/// Options of format_gantt_svg().
struct GanttOptions {
  std::string title;      ///< first line of the title (e.g. graph and method)
  int width = 1400;       ///< width of the time area in pixels
  bool transfers = true;  ///< draw transfer rows
};

/// Formats `s` as a standalone SVG document.
std::string format_gantt_svg(const Graph& g, const Schedule& s, const GanttOptions& opt = {});

/// A time in the schedule's unit for humans: "12.3 ms", "450 us" for seconds; "1.234e+12" (and
/// the /1e10 value) for reference units.
std::string format_time(double t, CostUnit unit);

}  // namespace doppler
