// Interleaved measurement of several assignments, with a fake engine run whose makespans are
// chosen by hand (the call sequence, a drifting clock, a fixed noise pattern).
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
  // One warm-up round, then three rounds; the copy of x is never run.
  EXPECT_EQ(fake.calls, (std::vector<std::string>{"x", "y", "x", "y", "x", "y", "x", "y"}));
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].makespans, (std::vector<double>{102, 104, 106}));
  EXPECT_EQ(m[1].makespans, (std::vector<double>{203, 205, 207}));
  EXPECT_EQ(m[2].makespans, m[0].makespans);
  // Run one after the other, the drift would add 3 s to y's median; interleaved it adds 1 s.
  EXPECT_DOUBLE_EQ(m[1].median - m[0].median, 100 + 1);
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
