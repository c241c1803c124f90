#pragma once
// The measured winner of a table of placements, told in one line (compare --measure, demo).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "doppler/util/median_interval.hpp"

namespace doppler::cli {

/// The fastest of `intervals` (non-empty) and the rows that cannot be told apart from it, with
/// the rows that have the fastest row's own placement (`same_placement(i, j)`) taken out of the
/// ties: they are the same thing measured once, not a rival.
struct MeasuredWinner {
  FastestMedian fastest;                    ///< ties: other placements within its interval
  std::vector<std::size_t> same_placement;  ///< rows with the fastest row's placement
};
MeasuredWinner measured_winner(const std::vector<MedianInterval>& intervals,
                               const std::function<bool(std::size_t, std::size_t)>& same_placement);

/// "X is significantly the fastest ..." or "no significant winner: ...", naming rows by `names`;
/// ends with a newline.
std::string measured_winner_line(const std::vector<std::string>& names, const MeasuredWinner& w);

}  // namespace doppler::cli
