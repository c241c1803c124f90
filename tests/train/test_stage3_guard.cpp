// Stage III's safeguard against a fake noisy engine: a Stage III placement that is truly slower
// or equal is almost never kept, one that is truly 20% faster almost always is, and whatever is
// kept is significantly faster than the other on the re-measurement.
#include <random>

#include <gtest/gtest.h>

#include "doppler/train/stage3_guard.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// Fraction of `trials` in which Stage III's placement is kept, when its true makespan is
// `ratio` x Stage II's and every run has multiplicative lognormal noise of sigma 0.1; `repeat`
// runs each.
double keep_rate(double ratio, int trials, std::uint64_t seed, int repeat) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, 0.1);
  const Assignment two{2, {0, 0}, {}, "stage2"}, three{2, {0, 1}, {}, "stage3"};
  const auto sample = [&](const Assignment& a) {
    return (a.method == "stage3" ? ratio : 1.0) * 1e-3 * noise(rng);
  };
  int kept = 0;
  for (int t = 0; t < trials; ++t) {
    const Stage3Check c = check_stage3(sample, two, three, repeat);
    kept += c.keep_stage3;
    const MedianInterval& chosen = c.keep_stage3 ? c.stage3 : c.stage2;
    const MedianInterval& other = c.keep_stage3 ? c.stage2 : c.stage3;
    if (c.keep_stage3) {
      EXPECT_LT(chosen.hi, other.lo);  // kept: significantly faster
    }
    EXPECT_EQ(c.distinguishable, chosen.hi < other.lo || other.hi < chosen.lo);
  }
  return static_cast<double>(kept) / trials;
}

// Median of n runs in log space: sd ~ 1.2533 x 0.1 / sqrt(n); each 95% interval spans about
// +-2 sd. Stage III is kept only when the intervals separate, so a slower or equal placement
// almost never is: 10% slower needs the noise to reverse a z = 1.6 gap and then clear both
// intervals; a tie needs a gap of ~4 sd (n = 9: sd 0.042, gap 0.17). 20% faster (ln 1.25 = 0.22)
// with n = 21 (sd 0.027, intervals +-0.055): the gap clears 0.11 at z ~ 2.9, kept > 99%.
TEST(Stage3Guard, KeepsOnlyASignificantlyFasterPlacement) {
  EXPECT_LT(keep_rate(1.10, 400, 1, 9), 0.01);
  EXPECT_LT(keep_rate(1.0, 400, 3, 9), 0.03);
  EXPECT_GT(keep_rate(0.80, 400, 2, 21), 0.97);
}

// A linear drift of the machine (each run 1% slower than the one before) and no noise: with
// equal true makespans the alternating order gives both the same median.
TEST(Stage3Guard, AlternationCancelsADrift) {
  int calls = 0;
  const auto sample = [&](const Assignment&) { return 1e-3 * (1 + 0.01 * calls++); };
  const Assignment a{2, {0, 0}, {}, "a"}, b{2, {0, 1}, {}, "b"};
  const Stage3Check c = check_stage3(sample, a, b, 10);
  EXPECT_NEAR(c.stage2.median, c.stage3.median, 1e-12);  // A then B every time: 1e-5 apart
  EXPECT_FALSE(c.distinguishable);
}

TEST(Stage3Guard, RefusesNoRepeat) {
  const Assignment a{2, {0, 0}, {}, "a"};
  EXPECT_THROW(check_stage3([](const Assignment&) { return 1.0; }, a, a, 0), InputError);
}

}  // namespace
}  // namespace doppler
