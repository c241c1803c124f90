#pragma once
// Internal: the random stream of the graph generators, splitmix64 over a Weyl sequence, so that a
// seed gives the same graph on every platform (unlike std:: distributions).
#include <algorithm>
#include <cstdint>

#include "doppler/workloads/kernels.hpp"

namespace doppler::workloads {

/// A deterministic stream of 64-bit values, uniform doubles and bounded integers.
class SplitRng {
public:
  /// The stream of `seed` (callers salt it to keep generators' streams apart).
  explicit SplitRng(std::uint64_t seed) : state_(splitmix64(seed)) {}
  /// Next 64-bit value.
  std::uint64_t next() {
    const std::uint64_t r = splitmix64(state_);
    state_ += 0x9E3779B97F4A7C15ULL;
    return r;
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n), n <= 2^53 (clamped: rounding can never give n).
  std::int64_t below(std::int64_t n) {
    return std::min(n - 1, static_cast<std::int64_t>(uniform() * static_cast<double>(n)));
  }

private:
  std::uint64_t state_;
};

}  // namespace doppler::workloads
