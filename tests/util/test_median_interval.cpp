// Order-statistic confidence intervals for the median: exact coverage and ranks checked against
// an independent binomial computation, the nominal coverage reached by seeded sampling from
// distributions with known medians, and the errors.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "doppler/util/error.hpp"
#include "doppler/util/median_interval.hpp"

namespace doppler {
namespace {

// P(Binomial(n, 1/2) <= k) with exact integer binomial coefficients (n <= 60).
double cdf(int n, int k) {
  double sum = 0;
  for (int i = 0; i <= k; ++i) {
    unsigned long long c = 1;
    for (int j = 1; j <= i; ++j)
      c = c * static_cast<unsigned long long>(n - i + j) / static_cast<unsigned long long>(j);
    sum += static_cast<double>(c);
  }
  return sum / std::pow(2.0, n);
}

std::vector<double> iota_sample(int n) {
  std::vector<double> xs;
  for (int i = n; i >= 1; --i) xs.push_back(i);  // unsorted on purpose
  return xs;
}

TEST(MedianInterval, RanksAndCoverageMatchTheBinomial) {
  for (int n = 1; n <= 60; ++n) {
    const MedianInterval m = median_interval(iota_sample(n), 0.95);
    // Independent: the largest l with 1 - 2 cdf(n, l - 1) >= 0.95, else 1.
    int want = 1;
    for (int l = 1; l <= (n + 1) / 2; ++l)
      if (1 - 2 * cdf(n, l - 1) >= 0.95) want = l;
    EXPECT_EQ(m.lo, want) << n;
    EXPECT_EQ(m.hi, n + 1 - want) << n;
    if (n > 1) {
      EXPECT_NEAR(m.coverage, 1 - 2 * cdf(n, want - 1), 1e-12) << n;
    }
    EXPECT_EQ(m.median, (n + 1) / 2.0) << n;
    EXPECT_EQ(m.n, n);
  }
}

TEST(MedianInterval, SmallSamplesByHand) {
  const MedianInterval five = median_interval(std::vector<double>{3, 1, 4, 1.5, 9});
  EXPECT_EQ(five.lo, 1);  // n = 5 cannot reach 95%: the whole range, coverage 1 - 2/32
  EXPECT_EQ(five.hi, 9);
  EXPECT_DOUBLE_EQ(five.coverage, 0.9375);
  EXPECT_EQ(five.median, 3);
  const MedianInterval nine = median_interval(iota_sample(9));  // l = 2: 1 - 2 * 10 / 512
  EXPECT_EQ(nine.lo, 2);
  EXPECT_EQ(nine.hi, 8);
  EXPECT_DOUBLE_EQ(nine.coverage, 1 - 20.0 / 512);
  EXPECT_DOUBLE_EQ(nine.relative_halfwidth(), 3.0 / 5);
}

// Seeded sampling: the interval covers the true median at its stated rate (within 4 standard
// errors over 4,000 trials) and at least at the nominal 95% when n allows it.
TEST(MedianInterval, CoversTheTrueMedianAtItsRate) {
  std::mt19937_64 rng(2026);
  struct Dist {
    const char* name;
    double median;
    std::function<double()> draw;
  };
  std::exponential_distribution<double> ex(1.0);
  std::lognormal_distribution<double> ln(0.0, 0.8);
  std::uniform_real_distribution<double> un(0.0, 1.0);
  const std::vector<Dist> dists = {{"exponential", std::log(2.0), [&] { return ex(rng); }},
                                   {"lognormal", 1.0, [&] { return ln(rng); }},
                                   {"uniform", 0.5, [&] { return un(rng); }}};
  const int trials = 4000;
  for (const Dist& d : dists)
    for (int n : {7, 15, 31}) {
      int covered = 0;
      double stated = 0;
      std::vector<double> xs(static_cast<std::size_t>(n));
      for (int t = 0; t < trials; ++t) {
        for (double& x : xs) x = d.draw();
        const MedianInterval m = median_interval(xs);
        covered += m.lo <= d.median && d.median <= m.hi;
        stated = m.coverage;
      }
      const double rate = static_cast<double>(covered) / trials;
      const double se = std::sqrt(stated * (1 - stated) / trials);
      EXPECT_NEAR(rate, stated, 4 * se) << d.name << " n=" << n;
      EXPECT_GE(stated, 0.95) << n;
    }
}

TEST(MedianInterval, DistinguishableOnlyWhenDisjoint) {
  MedianInterval a, b;
  a.lo = 1, a.hi = 2, b.lo = 2.5, b.hi = 3;
  EXPECT_TRUE(distinguishable(a, b));
  EXPECT_TRUE(distinguishable(b, a));
  b.lo = 2;
  EXPECT_FALSE(distinguishable(a, b));
}

MedianInterval interval(double lo, double median, double hi) {
  MedianInterval m;
  m.lo = lo, m.median = median, m.hi = hi;
  return m;
}

TEST(MedianInterval, FastestAndItsTies) {
  // Row 2 has the lowest median; row 0 overlaps it, row 1 lies wholly above it, row 3 shares its
  // upper end (overlap counts).
  const std::vector<MedianInterval> rows = {interval(4, 5, 6), interval(7, 8, 9),
                                            interval(3, 3.5, 4.5), interval(4.5, 6, 7)};
  const FastestMedian f = fastest_median(rows);
  EXPECT_EQ(f.fastest, 2u);
  EXPECT_EQ(f.ties, (std::vector<std::size_t>{0, 3}));
  EXPECT_FALSE(f.significant());
  // Alone, or with only disjoint rows, it is significant; equal medians keep the first.
  const std::vector<MedianInterval> apart = {interval(7, 8, 9), interval(1, 2, 3),
                                             interval(1.5, 2, 2.5)};
  EXPECT_EQ(fastest_median(std::span(apart).first(2)).fastest, 1u);
  EXPECT_TRUE(fastest_median(std::span(apart).first(2)).significant());
  const FastestMedian same = fastest_median(apart);
  EXPECT_EQ(same.fastest, 1u);
  EXPECT_EQ(same.ties, (std::vector<std::size_t>{2}));
  EXPECT_THROW(fastest_median(std::span<const MedianInterval>{}), InputError);
}

TEST(MedianInterval, Errors) {
  EXPECT_THROW(median_interval(std::vector<double>{}), InputError);
  EXPECT_THROW(median_interval(std::vector<double>{1, 2}, 1.0), InputError);
  EXPECT_THROW(median_interval(std::vector<double>{1, 2}, 0.0), InputError);
}

}  // namespace
}  // namespace doppler
