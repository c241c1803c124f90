#pragma once
// What a placement run may spend (simulator calls, wall-clock seconds), the defaults, and the
// evaluator every search and learned placer evaluates through.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/sim/schedule.hpp"
#include "doppler/sim/simulator.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

/// Limits of a placement run. Zero means "no limit of this kind" once resolved (resolve()).
struct Budget {
  std::int64_t evaluations = 0;  ///< simulator calls
  double seconds = 0;            ///< wall-clock seconds
};

/// Simulator calls a search method (local-search, multilevel, doppler-search, ...) may make when
/// neither calls nor seconds are given, and the default of `compare`, `bench-suite`, `place`.
inline constexpr std::int64_t kDefaultSearchCalls = 20000;
/// Simulator calls a learned method's training (doppler-sim, placeto, gdp, doppler-search's
/// train=) may make when neither calls nor seconds are given.
inline constexpr std::int64_t kDefaultTrainingCalls = 4000;

/// `given` with its call limit filled in: `default_calls` when it sets neither calls nor seconds
/// (a time limit alone means no call limit).
Budget resolve(Budget given, std::int64_t default_calls);

/// What a placement run spent.
struct Spent {
  std::int64_t calls = 0;  ///< simulator calls
  double seconds = 0;      ///< wall-clock seconds
};

/// One point of a run's anytime curve: the best makespan found by then.
struct ProgressPoint {
  double seconds = 0;      ///< since the run started
  std::int64_t calls = 0;  ///< simulator calls made by then
  double makespan = 0;     ///< best makespan found so far (the run's simulator's units)
};

/// Told of a run's progress: at each improvement and at least every 0.2 s of calls (makespan:
/// the best so far, infinity before the first). Returns false to stop the run early; it then
/// ends as if its budget were spent, with the best it found, and is not called again. May be
/// called from any of the run's threads, one call at a time.
using ProgressCallback = std::function<bool(const ProgressPoint&)>;

/// Meters one placement run against a Budget: every simulator call of the run is made or charged
/// through it, and it refuses a call that would go past the call limit or starts after the time
/// limit, so a run never spends more calls than its budget. A part() of a run has its own
/// limits and clock and is also charged to the run. Thread-safe accounting: several threads may
/// charge one evaluator (or parts of it) at once and the calls never exceed any limit on the
/// way; the evaluate functions are safe as long as each thread passes its own SimWorkspace.
/// The run (the evaluator not made by part()) keeps the anytime curve (improved()) and an
/// optional ProgressCallback that can stop it.
class BudgetedEvaluator {
public:
  /// Meters calls to `sim` against `limits` (0 = no limit of that kind) from now.
  BudgetedEvaluator(const Simulator& sim, Budget limits);
  BudgetedEvaluator(const BudgetedEvaluator&) = delete;
  BudgetedEvaluator& operator=(const BudgetedEvaluator&) = delete;
  ~BudgetedEvaluator();
  /// A meter for a step of this run, with limits of its own (clamped to what is left here);
  /// what the step spends is spent here too. This evaluator must outlive it.
  BudgetedEvaluator part(Budget limits);
  /// The same for a step that evaluates on another simulator: its calls count here as calls.
  /// `same_units`: the simulator prices the same graph on the same platform (a copy for another
  /// thread), so its improved() makespans join the run's curve; false for multilevel's coarse
  /// graph.
  BudgetedEvaluator part(Budget limits, const Simulator& sim, bool same_units = false);

  /// The simulator judged against.
  const Simulator& simulator() const { return *sim_; }
  /// The limits (0 = none of that kind).
  const Budget& limits() const { return limits_; }
  /// True when this evaluator judges in the run's units (a coarse part does not).
  bool on_run_simulator() const;
  /// Calls made or charged so far.
  std::int64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  /// Seconds since the evaluator was made.
  double seconds() const;
  /// What was spent so far.
  Spent spent_so_far() const { return {calls(), seconds()}; }
  /// Calls left (INT64_MAX without a call limit; the parent's limit counts too).
  std::int64_t calls_left() const;
  /// Seconds left (infinity without a time limit; the parent's limit counts too).
  double seconds_left() const;
  /// What is left, as a Budget for a step (0 = no limit; seconds at least 1e-9 when limited).
  Budget left() const;

  /// True when the budget is spent: no call left, the time is up or the progress callback
  /// asked to stop (once up or stopped, it stays so).
  bool spent();
  /// True once the progress callback asked the run to stop. Tells the callback of progress
  /// when due (every 0.2 s), for work that checks no other limit (a trainer between updates).
  bool stop_requested();
  /// True when the run has a progress callback (work may then report in smaller steps).
  bool watched() const;
  /// True when `n` more calls fit and the time is not up.
  bool allows(std::int64_t n = 1) { return !spent() && n <= calls_left(); }
  /// Fraction of the budget used by the tighter of its limits, in [0, 1] (0 without limits).
  double fraction() const;

  /// Records `n` calls made to the simulator by code that calls it directly (a batched rollout,
  /// an incremental simulator). False, recording nothing, when they do not fit.
  bool charge(std::int64_t n = 1);
  /// Records `n` calls already made, whether or not they fit (a trainer given calls_left() as
  /// its limit); an overspend is a bug of the caller: std::logic_error.
  void record(std::int64_t n);
  /// Runs `work` (returning a value), which calls simulator() directly (a batched rollout, a
  /// trainer given calls_left() as its limit), and records the calls the simulator counted
  /// meanwhile (so calls by other threads on the same simulator at the same time count too).
  template <class Work>
  auto metered(Work&& work) {
    const std::int64_t before = sim_->calls();
    auto result = work();
    record(sim_->calls() - before);
    return result;
  }

  /// Reports a complete placement found with this makespan (on this evaluator's simulator):
  /// when it beats the run's best so far, a point is added to the run's curve and the callback
  /// is told. Ignored on a part judged on another simulator (its units differ).
  void improved(double makespan);
  /// Sets the run's progress callback (on the run's evaluator; a part passes it up).
  void watch(ProgressCallback callback);
  /// The run's anytime curve so far: a point per improvement, in time order.
  std::vector<ProgressPoint> trace() const;
  /// The run's best reported makespan (infinity before the first).
  double best_reported() const;

  /// The makespan of `device_of` (see Simulator::makespan), charged; nullopt when spent.
  std::optional<double> makespan(std::span<const DeviceId> device_of, SimWorkspace& ws);
  /// The makespan of an assignment (its order is used with DispatchRule::priority); nullopt
  /// when spent.
  std::optional<double> makespan(const Assignment& a, DispatchRule rule = DispatchRule::fifo);
  /// The early-abort evaluation of Simulator::makespan_below, charged; nullopt when spent.
  std::optional<double> makespan_below(std::span<const DeviceId> device_of, SimWorkspace& ws,
                                       double cutoff);
  /// The full schedule of an assignment, charged; nullopt when spent.
  std::optional<Schedule> simulate(const Assignment& a, DispatchRule rule = DispatchRule::fifo);

private:
  struct Run;  // the run's curve, callback and stop flag, shared by its parts
  BudgetedEvaluator(const Simulator& sim, Budget limits, BudgetedEvaluator* parent,
                    bool same_units);
  // Adds n calls when they fit here and in every parent (atomically per level).
  bool reserve(std::int64_t n);
  // Tells the callback (heartbeat) when 0.2 s have passed since it was last told.
  void heartbeat();

  const Simulator* sim_;
  Budget limits_;
  BudgetedEvaluator* parent_ = nullptr;
  bool same_units_ = true;    // improved() reaches the run's curve
  Run* run_;                  // the root's (owned there)
  std::unique_ptr<Run> own_;  // set on the root only
  Stopwatch clock_;
  std::atomic<std::int64_t> calls_{0};
  std::atomic<bool> expired_{false};
};

}  // namespace doppler
