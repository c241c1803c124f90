#include "doppler/util/median_interval.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "doppler/util/error.hpp"

namespace doppler {

namespace {

// P(Binomial(n, 1/2) <= k), summed in log space so that large n does not underflow.
double binomial_half_cdf(int n, int k) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  const double log_half_n = n * std::log(0.5);
  double sum = 0;
  for (int i = 0; i <= k; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                    log_half_n);
  return std::min(1.0, sum);
}

}  // namespace

double MedianInterval::relative_halfwidth() const {
  return median != 0 ? 0.5 * (hi - lo) / std::abs(median) : 0.0;
}

MedianInterval median_interval(std::span<const double> xs, double confidence) {
  if (xs.empty()) throw InputError("median interval: no values");
  if (!(confidence > 0 && confidence < 1))
    throw InputError(
        fmt::format("median interval: confidence must be in (0, 1), got {}", confidence));
  std::vector<double> s(xs.begin(), xs.end());
  std::sort(s.begin(), s.end());
  const int n = static_cast<int>(s.size());
  MedianInterval m;
  m.n = n;
  m.median =
      n % 2 ? s[static_cast<std::size_t>(n / 2)]
            : 0.5 * (s[static_cast<std::size_t>(n / 2 - 1)] + s[static_cast<std::size_t>(n / 2)]);
  // Largest l (1-based) with 1 - 2 P(B <= l - 1) >= confidence; l = 1 when none qualifies.
  int l = 1;
  double cov = 1 - 2 * binomial_half_cdf(n, 0);
  for (int c = 2; c <= (n + 1) / 2; ++c) {
    const double cc = 1 - 2 * binomial_half_cdf(n, c - 1);
    if (cc < confidence) break;
    l = c;
    cov = cc;
  }
  m.lo = s[static_cast<std::size_t>(l - 1)];
  m.hi = s[static_cast<std::size_t>(n - l)];
  m.coverage = n == 1 ? 0.0 : cov;
  return m;
}

bool distinguishable(const MedianInterval& a, const MedianInterval& b) {
  return a.hi < b.lo || b.hi < a.lo;
}

FastestMedian fastest_median(std::span<const MedianInterval> rows) {
  if (rows.empty()) throw InputError("fastest median: no rows");
  FastestMedian f;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].median < rows[f.fastest].median) f.fastest = i;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (i != f.fastest && !distinguishable(rows[i], rows[f.fastest])) f.ties.push_back(i);
  return f;
}

}  // namespace doppler
