#pragma once
// Stage III's safeguard: its measured best replaces Stage II's placement only when a fresh,
// interleaved re-measurement of both finds it significantly faster.
#include <functional>

#include "doppler/engine/engine.hpp"
#include "doppler/graph/assignment.hpp"
#include "doppler/util/median_interval.hpp"

namespace doppler {

/// Outcome of re-measuring Stage II's and Stage III's placements against each other.
struct Stage3Check {
  bool keep_stage3 = false;       ///< Stage III's interval lies wholly below Stage II's
  bool distinguishable = false;   ///< the two 95% intervals do not overlap
  MedianInterval stage2, stage3;  ///< re-measured medians (seconds) with their intervals
};

/// Measures `stage2` and `stage3` alternately (A B B A A B ...), `repeat` (>= 1, else
/// InputError) runs each, with `sample` (one measured makespan in seconds per call), so that a
/// drift of a shared machine affects both alike; keeps Stage III's placement only when its 95%
/// interval lies wholly below Stage II's (a tie keeps Stage II's). Whatever is returned is never
/// slower than the other on this re-measurement.
Stage3Check check_stage3(const std::function<double(const Assignment&)>& sample,
                         const Assignment& stage2, const Assignment& stage3, int repeat);
/// The same, each sample one fifo run of `engine`.
Stage3Check check_stage3(Engine& engine, const Assignment& stage2, const Assignment& stage3,
                         int repeat);

}  // namespace doppler
