#pragma once
// Internal: the pace of a time-limited training run (Placeto's and GDP's BaselineConfig::seconds,
// a Doppler stage's TrainConfig::time_budget), so that its updates and its final greedy
// placement end within the seconds instead of after them.
#include <algorithm>
#include <functional>
#include <utility>

#include "doppler/util/stopwatch.hpp"

namespace doppler::detail {

/// Times a run against a limit in seconds (0: none, every question answers "go on"). An update
/// is rollouts then a learning step; the greedy placement is one more inference. Estimates come
/// from the run itself: the last update's seconds, the last learning step's ratio to its
/// rollouts (the first one guessed at kFirstLearnRatio), and the greedy placement's estimate the
/// trainer gives (an episode's or a forward pass's time; 0 when it gives none).
class UpdatePace {
public:
  /// The learning step of the first update, as a multiple of its rollouts' seconds (a backward
  /// pass over a batch measured 3-8x its rollouts on the vision graphs).
  static constexpr double kFirstLearnRatio = 8;

  /// `limit`: seconds (0: no limit). `clock`: the seconds spent so far against the limit (empty:
  /// a stopwatch started now). `updates_done`: updates already made against it (a resumed run,
  /// whose next update is then not exempt as a first one).
  explicit UpdatePace(double limit, std::function<double()> clock = {}, int updates_done = 0)
      : limit_(limit), clock_(std::move(clock)), updates_(updates_done) {
    if (!clock_) clock_ = [watch = Stopwatch()] { return watch.seconds(); };
  }

  /// Seconds spent against the limit.
  double elapsed() const { return clock_(); }

  /// Whether the seconds spent are still within the limit (always without one).
  bool within_limit() const { return limit_ <= 0 || elapsed() <= limit_; }

  /// Whether another update may start: always the first (the run needs one batch), else when
  /// at the last update's pace it and the greedy placement end within the limit.
  bool may_start_update() const {
    return limit_ <= 0 || updates_ == 0 || elapsed() + last_update_ + greedy_ <= limit_;
  }

  /// Whether the learning step after rollouts of `rollout_seconds` would end past the limit
  /// (with the greedy placement after it); the trainer then keeps the batch's best unlearnt.
  bool learning_overruns(double rollout_seconds) const {
    const double ratio = learn_ratio_ > 0 ? learn_ratio_ : kFirstLearnRatio;
    return limit_ > 0 && elapsed() + ratio * rollout_seconds + greedy_ > limit_;
  }

  /// Whether the batch just rolled out in `rollout_seconds` may be learnt from: false once a
  /// learning step would end past the limit (learning_overruns), and for every batch after it
  /// (less time is left for each): the run then only samples, its best sample standing.
  bool may_learn(double rollout_seconds) {
    sampling_only_ = sampling_only_ || learning_overruns(rollout_seconds);
    return !sampling_only_;
  }

  /// Records an update: its rollouts' and its learning step's seconds (0: it learnt nothing,
  /// and the ratio of the last one that did stands).
  void record(double rollout_seconds, double learn_seconds) {
    ++updates_;
    last_update_ = rollout_seconds + learn_seconds;
    if (learn_seconds > 0) learn_ratio_ = learn_seconds / std::max(1e-9, rollout_seconds);
  }

  /// Sets the estimate of the greedy placement's seconds (its inference and evaluation).
  void expect_greedy(double seconds) { greedy_ = std::max(0.0, seconds); }

  /// Whether the greedy placement fits in what is left (always without a limit).
  bool may_place_greedily() const { return limit_ <= 0 || elapsed() + greedy_ <= limit_; }

private:
  double limit_;
  std::function<double()> clock_;
  int updates_ = 0;
  bool sampling_only_ = false;  // may_learn() said no once
  double last_update_ = 0, learn_ratio_ = 0, greedy_ = 0;
};

}  // namespace doppler::detail
