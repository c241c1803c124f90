// Suite aggregation: gaps, best counts and optimum counts computed by hand.
#include <gtest/gtest.h>

#include "doppler/report/suite.hpp"

namespace doppler {
namespace {

// Instance 0 states optimum 10; instance 1 states none (best known = best mean of any method).
// a: instance 0 seeds 11, 13 (mean 12), instance 1: 20.
// b: instance 0: 10 (optimal), instance 1 seeds 18, 22 (mean 20).
// c: only instance 1: 25.
TEST(Suite, GapsBestAndOptimalByHand) {
  std::vector<SuiteInstance> in(2);
  in[0].optimum = 10;
  const std::vector<SuiteRun> runs = {
      {0, "a", 0, 11, 0.1, 5}, {0, "a", 1, 13, 0.3, 7}, {1, "a", 0, 20, 0.2, 0},
      {0, "b", 0, 10, 1.0, 0}, {1, "b", 0, 18, 1.0, 0}, {1, "b", 1, 22, 1.0, 0},
      {1, "c", 0, 25, 2.0, 3},
  };
  EXPECT_EQ(suite_mean(runs, 0, "a"), 12);
  EXPECT_FALSE(suite_mean(runs, 0, "c").has_value());
  EXPECT_EQ(suite_best_known(in, runs), (std::vector<double>{10, 20}));

  const auto s = summarize_suite(in, runs);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].method, "a");
  EXPECT_EQ(s[0].instances, 2);
  EXPECT_DOUBLE_EQ(s[0].mean_gap, (0.2 + 0.0) / 2);
  EXPECT_DOUBLE_EQ(s[0].worst_gap, 0.2);
  EXPECT_EQ(s[0].best, 1);  // ties with b on instance 1
  EXPECT_EQ(s[0].optimal, 0);
  EXPECT_DOUBLE_EQ(s[0].mean_seconds, 0.2);
  EXPECT_EQ(s[0].max_evaluations, 7);

  EXPECT_EQ(s[1].method, "b");
  EXPECT_DOUBLE_EQ(s[1].mean_gap, 0);
  EXPECT_EQ(s[1].best, 2);
  EXPECT_EQ(s[1].optimal, 1);

  EXPECT_EQ(s[2].instances, 1);
  EXPECT_DOUBLE_EQ(s[2].mean_gap, 0.25);
  EXPECT_DOUBLE_EQ(s[2].worst_gap, 0.25);
  EXPECT_EQ(s[2].best, 0);
}

// A method that beats a stated optimum has a negative gap (the file is wrong), and the best
// count still compares methods with each other.
TEST(Suite, BelowTheStatedOptimumShowsAsANegativeGap) {
  std::vector<SuiteInstance> in(1);
  in[0].optimum = 10;
  const std::vector<SuiteRun> runs = {{0, "a", 0, 8, 0, 0}, {0, "b", 0, 9, 0, 0}};
  const auto s = summarize_suite(in, runs);
  EXPECT_DOUBLE_EQ(s[0].mean_gap, -0.2);
  EXPECT_EQ(s[0].best, 1);
  EXPECT_EQ(s[1].best, 0);
  EXPECT_EQ(s[0].optimal, 1);
}

}  // namespace
}  // namespace doppler
