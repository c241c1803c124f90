#pragma once
// Wall-clock time since a start, on the steady clock: the one elapsed-time helper.
#include <chrono>

namespace doppler {

/// Measures wall-clock seconds from its construction (or the last restart()).
class Stopwatch {
public:
  using Clock = std::chrono::steady_clock;
  Stopwatch() : t0_(Clock::now()) {}
  /// Starts counting again from now.
  void restart() { t0_ = Clock::now(); }
  /// Seconds since the start.
  double seconds() const { return seconds_since(t0_); }
  /// The start.
  Clock::time_point start() const { return t0_; }
  /// Seconds from `t0` to now.
  static double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

private:
  Clock::time_point t0_;
};

}  // namespace doppler
