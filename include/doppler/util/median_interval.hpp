#pragma once
// Distribution-free confidence intervals for a median from repeated measurements (order
// statistics), so that reports can say when two measured makespans are not distinguishable.
#include <cstddef>
#include <span>
#include <vector>

namespace doppler {

/// A sample median with a confidence interval [lo, hi] made of two order statistics.
struct MedianInterval {
  double median = 0;    ///< sample median (mean of the two middle values when n is even)
  double lo = 0;        ///< lower end: the l-th smallest value
  double hi = 0;        ///< upper end: the (n + 1 - l)-th smallest value
  double coverage = 0;  ///< exact probability that [lo, hi] covers the true median, for any
                        ///< continuous distribution: 1 - 2 P(Binomial(n, 1/2) <= l - 1)
  int n = 0;            ///< sample size
  /// Half the interval's width relative to the median (0 when the median is 0).
  double relative_halfwidth() const;
};

/// The narrowest symmetric order-statistic interval whose coverage is at least `confidence`
/// (in (0, 1)). When the sample is too small for that (n < 6 at 95%), the whole range
/// [min, max] with its lower coverage 1 - 2^(1-n). Throws InputError for an empty sample or a
/// confidence outside (0, 1).
MedianInterval median_interval(std::span<const double> xs, double confidence = 0.95);

/// True when the two intervals do not overlap, so the medians differ at (about) their
/// confidence level. Conservative: overlapping intervals can still hide a real difference.
bool distinguishable(const MedianInterval& a, const MedianInterval& b);

/// The measured winner of several rows: the lowest median and the rows that cannot be told apart
/// from it (their intervals overlap its interval).
struct FastestMedian {
  std::size_t fastest = 0;        ///< index of the lowest median (the first one on ties)
  std::vector<std::size_t> ties;  ///< other indices not distinguishable() from it, ascending
  /// True when no other row overlaps the fastest one: it is significantly the fastest.
  bool significant() const { return ties.empty(); }
};

/// The fastest of `rows` (non-empty, else InputError) and its ties.
FastestMedian fastest_median(std::span<const MedianInterval> rows);

}  // namespace doppler
