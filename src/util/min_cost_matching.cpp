#include "doppler/util/min_cost_matching.hpp"

#include <cassert>
#include <cstddef>
#include <limits>

namespace doppler {

std::vector<int> min_cost_matching(const std::vector<double>& cost, int rows, int cols) {
  assert(rows <= cols && cost.size() == static_cast<std::size_t>(rows) * cols);
  // Rows 1..n, columns 1..m; column 0 is a sentinel holding the row being added. Each row is
  // added by a shortest augmenting path in reduced costs (Dijkstra over columns).
  const auto n = static_cast<std::size_t>(rows), m = static_cast<std::size_t>(cols);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(n + 1, 0), v(m + 1, 0), minv(m + 1);
  std::vector<std::size_t> col_row(m + 1, 0), way(m + 1, 0);
  std::vector<char> used(m + 1);
  for (std::size_t i = 1; i <= n; ++i) {
    col_row[0] = i;
    std::size_t j0 = 0;
    std::fill(minv.begin(), minv.end(), inf);
    std::fill(used.begin(), used.end(), 0);
    do {
      used[j0] = 1;
      const std::size_t i0 = col_row[j0];
      const double* row = cost.data() + (i0 - 1) * m;
      double delta = inf;
      std::size_t j1 = 0;
      for (std::size_t j = 1; j <= m; ++j) {
        if (used[j]) continue;
        const double cur = row[j - 1] - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (std::size_t j = 0; j <= m; ++j) {
        if (used[j]) {
          u[col_row[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (col_row[j0] != 0);
    do {  // augment along the path
      const std::size_t j1 = way[j0];
      col_row[j0] = col_row[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<int> match(n, 0);
  for (std::size_t j = 1; j <= m; ++j)
    if (col_row[j] != 0) match[col_row[j] - 1] = static_cast<int>(j - 1);
  return match;
}

}  // namespace doppler
