// Interleaved measurement of several assignments, with a fake engine run whose makespans are
// chosen by hand (the call sequence, a drifting clock, a fixed noise pattern).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "doppler/engine/measure_interleaved.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

Assignment placement(std::vector<DeviceId> devices, std::string method = "") {
  Assignment a;
  a.devices = 2;
  a.device_of = std::move(devices);
  a.method = std::move(method);
  return a;
}

TEST(MeasureInterleaved, IdenticalPlacementsAreFoundWhateverTheirOrderAndLabel) {
  const std::vector<Assignment> as = {placement({0, 1, 0}, "a"), placement({1, 1, 0}, "b"),
                                      placement({0, 1, 0}, "c"), placement({1, 1, 0}, "d"),
                                      placement({0, 0, 0}, "e")};
  EXPECT_EQ(first_identical_placement(as), (std::vector<std::size_t>{0, 1, 0, 1, 4}));
  Assignment four = placement({0, 1, 0});
  four.devices = 4;  // the same devices on a 4-device platform is another placement
  EXPECT_EQ(first_identical_placement({as[0], four}), (std::vector<std::size_t>{0, 1}));
}

// A clock that drifts: the k-th run (warm-up included) of any placement takes base + k seconds.
struct DriftingRun {
  std::vector<std::string> calls;
  EngineResult operator()(const Assignment& a) {
    EngineResult r;
    r.makespan_seconds = 100.0 * (a.device_of[0] + 1) + static_cast<double>(calls.size());
    calls.push_back(a.method);
    return r;
  }
};

TEST(MeasureInterleaved, RunsAlternateSoThatADriftFallsOnEveryPlacementAlike) {
  DriftingRun fake;
  const std::vector<Assignment> as = {placement({0, 0}, "x"), placement({1, 0}, "y"),
                                      placement({0, 0}, "x2")};
  const auto m = measure_interleaved([&](const Assignment& a) { return fake(a); }, as,
                                     RepeatPolicy::fixed(3), 1)
                     .measured;
  // One warm-up round, then three rounds, each of x and y once (in some order); the copy of x is
  // never run.
  ASSERT_EQ(fake.calls.size(), 8u);
  for (std::size_t round = 0; round < 4; ++round) {
    std::vector<std::string> r(fake.calls.begin() + 2 * round, fake.calls.begin() + 2 * round + 2);
    std::sort(r.begin(), r.end());
    EXPECT_EQ(r, (std::vector<std::string>{"x", "y"})) << "round " << round;
  }
  ASSERT_EQ(m.size(), 3u);
  ASSERT_EQ(m[0].makespans.size(), 3u);
  EXPECT_EQ(m[2].makespans, m[0].makespans);
  // Run one after the other, the drift would add 3 s to y's median; interleaved, each placement's
  // k-th measured run is call 2k+2 or 2k+3, so the drift adds at most 1 s either way.
  EXPECT_LE(std::abs(m[1].median - m[0].median - 100), 1.0);
}

// A run depends on the run before it; here the first run of each round (after the round's
// bookkeeping) takes 10% longer. In one fixed order that bias falls on the first placement in
// every round and moves its median; with each round in its own order it falls on a placement in
// 1 round of 9 at most a few times, and every median is the true makespan.
TEST(MeasureInterleaved, APositionBiasDoesNotStayWithOnePlacement) {
  std::vector<Assignment> as;
  for (int i = 0; i < 10; ++i) as.push_back(placement({i % 2, i / 2}, std::to_string(i)));
  int calls = 0;
  const auto run = [&](const Assignment& a) {
    EngineResult r;
    r.makespan_seconds = (1.0 + a.device_of[1]) * (calls++ % 10 == 0 ? 1.1 : 1.0);
    return r;
  };
  const auto m = measure_interleaved(run, as, RepeatPolicy::fixed(9), 0).measured;
  for (std::size_t i = 0; i < as.size(); ++i)
    EXPECT_DOUBLE_EQ(m[i].median, 1.0 + as[i].device_of[1]) << "placement " << i;
}

TEST(MeasureInterleaved, EachPlacementStopsWhenItsOwnIntervalIsTight) {
  // x always takes 1 s; y alternates 1 and 3 s, so its median's interval never gets tight.
  int y_runs = 0;
  std::vector<std::string> calls;
  const auto run = [&](const Assignment& a) {
    EngineResult r;
    calls.push_back(a.method);
    r.makespan_seconds = a.method == "x" ? 1.0 : (y_runs++ % 2 ? 3.0 : 1.0);
    return r;
  };
  const std::vector<Assignment> as = {placement({0, 0}, "x"), placement({1, 0}, "y")};
  const auto m = measure_interleaved(run, as, RepeatPolicy{5, 11, 0.01, 0}, 0).measured;
  EXPECT_EQ(m[0].makespans.size(), 5u);   // tight at the minimum
  EXPECT_EQ(m[1].makespans.size(), 11u);  // never tight: up to the maximum
  EXPECT_EQ(calls.size(), 16u);
  // A seconds limit stops a placement early: 1 + 3 + 1 + 3 = 8 s < 9 s, then + 1 = 9 s.
  y_runs = 0;
  const auto capped = measure_interleaved(run, as, RepeatPolicy{2, 11, 0.01, 9}, 0).measured;
  EXPECT_EQ(capped[1].makespans.size(), 5u);
  EXPECT_DOUBLE_EQ(capped[1].median, 1.0);
}

TEST(MeasureInterleaved, RejectsABadPolicy) {
  const auto run = [](const Assignment&) { return EngineResult{}; };
  EXPECT_THROW(measure_interleaved(run, {placement({0})}, RepeatPolicy{0, 3, 0, 0}, 0), InputError);
  EXPECT_THROW(measure_interleaved(run, {placement({0})}, RepeatPolicy{4, 3, 0, 0}, 0), InputError);
}

}  // namespace
}  // namespace doppler
