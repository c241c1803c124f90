#pragma once
// The outcome of one engine run: the measured makespan and the measured schedule, in the same
// type the simulator produces (so report/trace.hpp and report/gantt.hpp work unchanged).
#include <functional>
#include <string>
#include <vector>

#include "doppler/sim/schedule.hpp"
#include "doppler/util/median_interval.hpp"

namespace doppler {

/// One measured run. Times are wall-clock seconds from the run's start (the moment the first
/// ops were made ready).
struct EngineResult {
  double makespan_seconds = 0;  ///< finish time of the last op
  /// Measured schedule (unit seconds): per op device, ready, start, finish; per copy a
  /// TransferRecord whose single "link" is the destination device's copy worker
  /// (link_names[d] = "copy worker dev d"); per device busy time.
  Schedule schedule;
  double bytes_copied = 0;  ///< bytes moved between devices (f32 buffers)
  int copies = 0;           ///< cross-device copies
};

/// Summary of repeated runs of one assignment.
struct Measurement {
  std::vector<double> makespans;  ///< seconds, one per measured run, in run order
  double median = 0;              ///< median of makespans (mean of the two middle ones)
  double min = 0;                 ///< fastest run
  double max = 0;                 ///< slowest run
  MedianInterval interval;        ///< 95% order-statistic confidence interval of the median
  EngineResult median_run;        ///< the run whose makespan is closest to the median
};

/// Median, min, max and the median's 95% interval of `makespans` (non-empty), with
/// `median_run` left empty.
Measurement summarize_makespans(std::vector<double> makespans);

/// How many measured runs to make: at least `min_repeat` (>= 1); then more, up to `max_repeat`,
/// while the median's 95% interval is wider than +-`target` of the median (relative
/// half-width; 0: never) and the measured runs so far took less than `max_seconds` (0: no
/// limit). A fixed count is min_repeat = max_repeat.
struct RepeatPolicy {
  int min_repeat = 5;
  int max_repeat = 5;
  double target = 0;
  double max_seconds = 0;
  /// Exactly `n` runs.
  static RepeatPolicy fixed(int n) { return {n, n, 0, 0}; }
};

/// Runs `run` `warmup` times unmeasured, then `repeat` (>= 1, else InputError) times, and
/// summarizes the measured runs' makespans, keeping the run closest to the median.
Measurement measure_runs(const std::function<EngineResult()>& run, int repeat, int warmup);
/// The same with a number of runs chosen by `policy` (InputError when min_repeat < 1 or
/// max_repeat < min_repeat).
Measurement measure_runs(const std::function<EngineResult()>& run, const RepeatPolicy& policy,
                         int warmup);

}  // namespace doppler
