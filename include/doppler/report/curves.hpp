#pragma once
// Anytime curves as an SVG line chart: the best makespan each method had found against the
// seconds it had run (steps: a value holds until the next improvement).
#include <string>
#include <vector>

namespace doppler {

/// A point of a curve: the best makespan found `seconds` into the run.
struct CurvePoint {
  double seconds = 0;   ///< since the run started
  double makespan = 0;  ///< best so far
};

/// One line of the chart.
struct CurveSeries {
  std::string label;              ///< legend text (method and seed)
  std::vector<CurvePoint> curve;  ///< improvements in time order (falling makespans)
  double end_seconds = 0;         ///< the run's length: the last value is drawn up to here
};

/// Options of format_curves_svg().
struct CurvesOptions {
  std::string title;            ///< chart title
  std::string unit = "";        ///< y-axis unit label (e.g. "s" or "reference units")
  bool log_seconds = true;      ///< logarithmic time axis (runs span 1 ms .. minutes)
  double reference = 0;         ///< a dashed horizontal line (e.g. a lower bound), 0: none
  std::string reference_label;  ///< its legend text
};

/// A standalone SVG document with one step line per series (empty series are listed in the
/// legend as "no improvement reported"). InputError when `series` is empty.
std::string format_curves_svg(const std::vector<CurveSeries>& series, const CurvesOptions& opt);

}  // namespace doppler
