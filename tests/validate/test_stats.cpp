// Rank correlation and error measures of sim-to-real validation, against values computed by
// hand.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "doppler/engine/result.hpp"
#include "doppler/util/error.hpp"
#include "doppler/validate/sim_to_real.hpp"

namespace doppler {
namespace {

TEST(EngineStats, SpearmanOfMonotoneAndReversedSamples) {
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {10, 20, 25, 100, 1000}, c = {5, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(spearman(a, b), 1.0);
  EXPECT_DOUBLE_EQ(spearman(a, c), -1.0);
  EXPECT_TRUE(std::isnan(spearman(a, std::vector<double>{1, 1, 1, 1, 1})));
}

TEST(EngineStats, SpearmanWithTiesUsesAverageRanks) {
  // a ranks 1, 2.5, 2.5, 4; b ranks 1, 2, 3, 4: Pearson of the ranks = 0.9486832980505138.
  const std::vector<double> a = {1, 2, 2, 3}, b = {1, 2, 3, 4};
  EXPECT_NEAR(spearman(a, b), 3 / std::sqrt(10.0), 1e-12);
  // One swap in five: 1 - 6 * 2 / (5 * 24) = 0.9.
  EXPECT_NEAR(spearman(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{2, 1, 3, 4, 5}), 0.9,
              1e-12);
}

TEST(EngineStats, MapeAndPearson) {
  EXPECT_DOUBLE_EQ(mape(std::vector<double>{11, 18}, std::vector<double>{10, 20}), 0.1);
  EXPECT_NEAR(pearson(std::vector<double>{1, 2, 3}, std::vector<double>{2, 4, 6.5}),
              0.9979487157886733, 1e-12);
  EXPECT_THROW(mape(std::vector<double>{1}, std::vector<double>{0}), InputError);
}

TEST(EngineStats, SummaryOfMakespans) {
  const Measurement m = summarize_makespans({3, 1, 2, 10});
  EXPECT_DOUBLE_EQ(m.median, 2.5);
  EXPECT_DOUBLE_EQ(m.min, 1);
  EXPECT_DOUBLE_EQ(m.max, 10);
  EXPECT_EQ(m.makespans, (std::vector<double>{3, 1, 2, 10}));
  EXPECT_DOUBLE_EQ(summarize_makespans({4, 1, 7}).median, 4);
}

}  // namespace
}  // namespace doppler
