#pragma once
// What a placement run may spend (simulator calls, wall-clock seconds), the defaults, and the
// evaluator every search and learned placer evaluates through.
#include <cstdint>
#include <optional>
#include <span>

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

/// Meters one placement run against a Budget: every simulator call of the run is made or charged
/// through it, and it refuses a call that would go past the call limit or starts after the time
/// limit, so a run never spends more calls than its budget. A part() of a run has its own
/// limits and clock and is also charged to the run. Not thread-safe: one evaluator per thread.
class BudgetedEvaluator {
public:
  /// Meters calls to `sim` against `limits` (0 = no limit of that kind) from now.
  BudgetedEvaluator(const Simulator& sim, Budget limits);
  /// A meter for a step of this run, with limits of its own (clamped to what is left here);
  /// what the step spends is spent here too. This evaluator must outlive it.
  BudgetedEvaluator part(Budget limits);
  /// The same for a step that evaluates on another simulator (multilevel's coarse graph): its
  /// calls count here as calls.
  BudgetedEvaluator part(Budget limits, const Simulator& sim);

  /// The simulator judged against.
  const Simulator& simulator() const { return *sim_; }
  /// The limits (0 = none of that kind).
  const Budget& limits() const { return limits_; }
  /// Calls made or charged so far.
  std::int64_t calls() const { return calls_; }
  /// Seconds since the evaluator was made.
  double seconds() const;
  /// What was spent so far.
  Spent spent_so_far() const { return {calls_, seconds()}; }
  /// Calls left (INT64_MAX without a call limit; the parent's limit counts too).
  std::int64_t calls_left() const;
  /// Seconds left (infinity without a time limit; the parent's limit counts too).
  double seconds_left() const;
  /// What is left, as a Budget for a step (0 = no limit; seconds at least 1e-9 when limited).
  Budget left() const;

  /// True when the budget is spent: no call left or the time is up (once up, it stays up).
  bool spent();
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
  BudgetedEvaluator(const Simulator& sim, Budget limits, BudgetedEvaluator* parent);

  const Simulator* sim_;
  Budget limits_;
  BudgetedEvaluator* parent_ = nullptr;
  Stopwatch clock_;
  std::int64_t calls_ = 0;
  bool expired_ = false;
};

}  // namespace doppler
