#pragma once
// The exact placer for small graphs: branch and bound over device assignments, scored by the
// work-conserving simulator (bounds and why they are valid: src/heuristics/optimal_bounds.cpp).
#include <cstdint>
#include <span>
#include <string>

#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// Status of one OptimalPlacer run.
struct OptimalResult {
  double makespan = 0;          ///< simulated makespan (FIFO rule) of the returned assignment
  double lower_bound = 0;       ///< proven lower bound on the optimum (== makespan when proven)
  bool proven = false;          ///< the search finished: makespan is the optimum
  bool time_limit_hit = false;  ///< stopped by the time limit
  bool node_limit_hit = false;  ///< stopped by the node limit
  bool call_limit_hit = false;  ///< stopped by the simulator-call budget
  std::int64_t nodes = 0;       ///< search nodes (partial assignments) visited
  double seconds = 0;           ///< wall-clock seconds of the whole run (heuristics included)
  /// Relative gap (makespan / lower_bound - 1); 0 when proven.
  double gap() const;
  /// One status line, e.g. "proven optimal, makespan 12 (345 nodes, 0.01 s)".
  std::string describe() const;
};

/// An assignment with the status of the search that found it.
struct OptimalOutcome {
  Assignment assignment;  ///< the best assignment found
  OptimalResult result;   ///< its makespan, bound and proof status
};

/// Branch and bound over assignments (one device per op) minimising Simulator::makespan with
/// the fifo rule. Ops are branched in a topological order (largest b-level first among the
/// ready ones), devices in increasing order of the child's lower bound (the incumbent's device
/// first on ties). The incumbent starts as the best of critical-path, heft, etf, balanced and
/// eight local searches (fixed seeds, kDefaultSearchCalls simulations each, or together half the
/// call budget). Partial assignments are pruned
/// by optimal_lower_bound() (less its total-work bound, which the root bound covers). When devices
/// are interchangeable (devices_interchangeable()), op k may only use devices 0..max used + 1.
/// Limits: `seconds` (wall clock, default 60; PlaceOptions::budget.seconds overrides it), `nodes`
/// (0 = none; kNodesFromCalls = optimal_node_limit() of the budget) and the budget's simulator
/// calls (the incumbent's searches and the leaves' scores; default: none). Without a limit hit,
/// or with a node or call limit hit, the result is deterministic; with the time limit hit it
/// depends on the machine's speed.
/// Expected reach (reference model, 4 devices, bench/bench_optimal.cpp): 20 ops proven within
/// ~0.3 s; 30 ops often within a minute, not always (then: best found and its gap).
class OptimalPlacer : public Placer {
public:
  /// `nodes` when it means "from the budget": optimal_node_limit().
  static constexpr std::int64_t kNodesFromCalls = -1;
  /// A placer with the given default limits (0 nodes = unlimited).
  explicit OptimalPlacer(double seconds = 60, std::int64_t nodes = kNodesFromCalls)
      : seconds_(seconds), nodes_(nodes) {}
  std::string name() const override { return "optimal"; }
  /// The search's assignment and note (OptimalResult::describe()).
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;
  /// The search's assignment with its status, evaluating through `eval`.
  OptimalOutcome solve(const Problem& problem, const PlaceOptions& options,
                       BudgetedEvaluator& eval) const;
  /// The same with an evaluator of `options.budget`.
  OptimalOutcome solve(const Problem& problem, const PlaceOptions& options = {}) const;

private:
  double seconds_;
  std::int64_t nodes_;
};

/// The branch and bound's node limit for a budget (0 = none): under simulator calls alone
/// (`calls` > 0, no seconds) 20 nodes per call, at least 100,000 (a node costs no call; ~0.2-0.5
/// million nodes a second on 30-op graphs), so that such a run is deterministic and its effort
/// grows with the budget; with seconds, or without any limit, none.
std::int64_t optimal_node_limit(const Budget& budget);

/// A lower bound on the simulated makespan of every completion of a partial assignment
/// (`device_of[v]` = -1 for unassigned ops). The assigned ops must be closed under
/// predecessors (every predecessor of an assigned op is assigned); InputError otherwise.
/// The max of: a critical-path bound with fixed transfers (heads serialise local inputs, tails
/// serialise local successors), per-device head + load + tail bounds, and total work over total
/// slots (details in src/heuristics/optimal_bounds.cpp).
double optimal_lower_bound(const Problem& problem, std::span<const DeviceId> device_of);

/// True when permuting device labels never changes a simulated makespan: the reference model,
/// or a hardware platform whose devices are identical and whose routes are single dedicated
/// links (one per ordered pair) of identical latency and bandwidth.
bool devices_interchangeable(const Problem& problem);

}  // namespace doppler
