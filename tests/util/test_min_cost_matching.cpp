// The assignment problem (util/min_cost_matching.hpp) against brute force over every injective
// map of rows to columns, square and rectangular, with ties and negative costs.
#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "doppler/util/min_cost_matching.hpp"

namespace doppler {
namespace {

// Least total cost over every map of the rows to distinct columns (recursive enumeration).
double brute_force(const std::vector<double>& cost, int rows, int cols) {
  std::vector<char> taken(static_cast<std::size_t>(cols), 0);
  double best = 1e300;
  std::function<void(int, double)> go = [&](int r, double sum) {
    if (r == rows) {
      best = std::min(best, sum);
      return;
    }
    for (int c = 0; c < cols; ++c) {
      if (taken[static_cast<std::size_t>(c)]) continue;
      taken[static_cast<std::size_t>(c)] = 1;
      go(r + 1, sum + cost[static_cast<std::size_t>(r * cols + c)]);
      taken[static_cast<std::size_t>(c)] = 0;
    }
  };
  go(0, 0);
  return best;
}

TEST(MinCostMatching, IsTheBruteForceOptimumOnSquareAndWideMatrices) {
  std::mt19937_64 rng(3);
  for (int rows = 1; rows <= 5; ++rows)
    for (int cols = rows; cols <= 7; ++cols)
      for (int trial = 0; trial < 12; ++trial) {
        std::vector<double> cost(static_cast<std::size_t>(rows * cols));
        for (auto& c : cost) c = std::uniform_int_distribution<int>(-9, 9)(rng);
        const std::vector<int> m = min_cost_matching(cost, rows, cols);
        ASSERT_EQ(m.size(), static_cast<std::size_t>(rows));
        std::vector<int> sorted = m;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end())
            << "not injective";
        double total = 0;
        for (int r = 0; r < rows; ++r) {
          const int c = m[static_cast<std::size_t>(r)];
          ASSERT_TRUE(c >= 0 && c < cols);
          total += cost[static_cast<std::size_t>(r * cols + c)];
        }
        EXPECT_EQ(total, brute_force(cost, rows, cols)) << rows << " x " << cols;
      }
}

TEST(MinCostMatching, PicksTheCheapColumnsOfAWideMatrix) {
  // Two rows, four columns: the cheap cells are (0, 3) and (1, 2), never the diagonal.
  const std::vector<double> cost = {5, 5, 5, 1,  //
                                    5, 5, 0, 0};
  EXPECT_EQ(min_cost_matching(cost, 2, 4), (std::vector<int>{3, 2}));
}

}  // namespace
}  // namespace doppler
