// HEFT's slot timeline (src/heuristics/slot_timeline.hpp) against the scan it replaces: the
// intervals in a vector, scanned from the first for the earliest gap at or after the ready time.
#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "heuristics/slot_timeline.hpp"

namespace doppler {
namespace {

// The scan HEFT ran before (its insertion policy): returns the start and the position.
std::pair<double, int> scan_fit(const std::vector<std::pair<double, double>>& iv, double ready,
                                double c) {
  double t = ready;
  std::size_t pos = 0;
  for (; pos < iv.size(); ++pos) {
    if (t + c <= iv[pos].first) break;
    t = std::max(t, iv[pos].second);
  }
  return {t, static_cast<int>(pos)};
}

// Random ready times and durations, inserted where they fit, 2,000 per sequence (filling gaps at
// the front, the middle and the end; how many is counted, so that a sequence without them fails):
// small integers
// (ties everywhere, zero durations, ops that fit exactly into a gap) and fractions of a second
// (rounding of start - finish against finish + duration). Each answer equals the scan's, start
// and position, bit for bit.
TEST(SlotTimeline, TheEarliestFitIsTheScansAtEveryStep) {
  for (int seed = 0; seed < 12; ++seed) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    const bool integral = seed % 2 == 0;
    std::uniform_int_distribution<int> small(0, 4);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    detail::SlotTimeline timeline;
    std::vector<std::pair<double, double>> iv;
    double horizon = 0;
    int into_gaps = 0;
    for (int step = 0; step < 2000; ++step) {
      // Ready times past the last interval leave gaps that later ops fill.
      const double reach = horizon + (integral ? 12.0 : 0.3);
      const double ready = integral ? std::floor(unit(rng) * reach) : unit(rng) * reach;
      const double c = integral ? small(rng) : 0.1 * unit(rng) * unit(rng);
      const auto [start, pos] = scan_fit(iv, ready, c);
      const detail::SlotTimeline::Fit fit = timeline.earliest_fit(ready, c);
      ASSERT_EQ(fit.start, start) << "seed " << seed << ", step " << step;
      ASSERT_EQ(fit.pos, pos) << "seed " << seed << ", step " << step;
      into_gaps += pos + 1 < static_cast<int>(iv.size());
      timeline.insert(fit.pos, fit.start, fit.start + c);
      iv.insert(iv.begin() + pos, {start, start + c});
      horizon = std::max(horizon, start + c);
    }
    EXPECT_EQ(timeline.size(), 2000);
    EXPECT_GT(into_gaps, 200) << "seed " << seed;
  }
}

// By hand: busy [0, 2), [5, 6), [6, 9), [12, 13). A 3-long op ready at 1 fits at 2 (gap 2..5);
// a 4-long one ready at 1 fits at 13 (after the last: no gap of 4 before); a 3-long one ready at
// 4 fits at 9 (the gap 9..12), and a 0-long one ready at 6 fits at 6 before [6, 9)'s interval.
TEST(SlotTimeline, GapsByHand) {
  detail::SlotTimeline t;
  t.insert(0, 0, 2);
  t.insert(1, 5, 6);
  t.insert(2, 6, 9);
  t.insert(3, 12, 13);
  EXPECT_EQ(t.earliest_fit(1, 3).start, 2);
  EXPECT_EQ(t.earliest_fit(1, 3).pos, 1);
  EXPECT_EQ(t.earliest_fit(1, 4).start, 13);
  EXPECT_EQ(t.earliest_fit(1, 4).pos, 4);
  EXPECT_EQ(t.earliest_fit(4, 3).start, 9);
  EXPECT_EQ(t.earliest_fit(4, 3).pos, 3);
  EXPECT_EQ(t.earliest_fit(6, 0).start, 6);
  EXPECT_EQ(t.earliest_fit(6, 0).pos, 2);
}

}  // namespace
}  // namespace doppler
