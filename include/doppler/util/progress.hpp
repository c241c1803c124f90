#pragma once
// A one-line progress indicator on stderr, shown only when stderr is a terminal (quiet in CI and
// when redirected). Results never go through it.
#include <chrono>
#include <cstdint>
#include <string>

namespace doppler {

/// "\r<label> [#####.....] done/total <note>" on a terminal, redrawn at most 10 times a second.
class Progress {
public:
  /// `total` <= 0 shows a counter without a bar.
  Progress(std::string label, std::int64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Reports `done` units finished, with an optional short note (e.g. the current best).
  void update(std::int64_t done, const std::string& note = "");
  /// Clears the line (called by the destructor too).
  void finish();
  /// True when progress is drawn (stderr is a terminal and DOPPLER_NO_PROGRESS is unset).
  static bool enabled();

private:
  std::string label_;
  std::int64_t total_;
  bool active_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace doppler
