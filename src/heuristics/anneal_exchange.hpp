#pragma once
// The meeting point of the parallel chains of one annealing run (private to src/heuristics).
#include <barrier>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/budget.hpp"

namespace doppler::detail {

/// When the chains of one run meet, and what a meeting may spend to merge their changes.
struct MeetingPlan {
  std::int64_t every = 64;  ///< calls of a chain's own between meetings (at least 1)
  /// Under a time budget without a call limit, also meet once a chain's clock passes each
  /// multiple of this many seconds (0: by calls only, which keeps a call-budgeted run
  /// deterministic). Large graphs, whose calls are slow, would otherwise never meet.
  double every_seconds = 0;
  /// Whether a meeting also evaluates the merge of the offers (one simulator call).
  bool merge = false;
};

/// Evaluates a merged assignment on the run's budget: its makespan, or infinity when the budget
/// refuses the call.
using MergeEvaluator = std::function<double(const std::vector<DeviceId>&)>;

/// The chains of one run meet when due (see MeetingPlan): each offers its best assignment.
/// Besides the offers, the meeting evaluates their merge: the best offer with every other
/// chain's changes since the last published assignment applied where the better chains left
/// the op as it was (on a large graph, chains improve different parts, and their gains add).
/// The best of the offers and the merge (the lowest makespan; the lowest chain on ties, then
/// the offers before the merge) is published, and a chain whose own best is worse adopts it.
/// With call-only meetings every chain meets at the same call counts, so with call budgets the
/// run is deterministic for a thread count. Thread-safe.
class Exchange {
public:
  /// `chains` chains starting from `start` (makespan `start_ms`); `merge` evaluates merges when
  /// the plan asks for them (empty: no merging).
  Exchange(int chains, const MeetingPlan& plan, std::vector<DeviceId> start, double start_ms,
           MergeEvaluator merge);
  /// True when chain `c`, whose evaluator is `chain` (its calls and clock), is due to meet.
  bool due(int c, const BudgetedEvaluator& chain) const;
  /// Chain `c` (due, its evaluator `chain`) offers `best` (makespan `ms`) and waits for the
  /// others; returns the published best when it beats `ms` (its makespan in `out_ms`), else
  /// null. The pointer stays valid until the chain's next meet() or leave().
  const std::vector<DeviceId>* meet(int c, const BudgetedEvaluator& chain,
                                    const std::vector<DeviceId>& best, double ms, double& out_ms);
  /// Chain `c` is done (or failed): the others no longer wait for it. Call exactly once.
  void leave(int c);
  /// Merged assignments evaluated so far, and how many of them were published.
  std::int64_t merges() const { return merges_; }
  std::int64_t merges_published() const { return merges_published_; }

private:
  struct Publish {
    Exchange* self;
    void operator()() noexcept;
  };
  // The best offer (its chain), or offered_.size() when none.
  std::size_t best_offer() const;
  // Evaluates the merge of the offers around the best one `w`; publishes it when better.
  void try_merge(std::size_t w);

  MeetingPlan plan_;
  std::vector<std::int64_t> next_;    // per chain: calls at its next meeting
  std::vector<double> next_seconds_;  // per chain: seconds at its next meeting (time plan)
  std::vector<const std::vector<DeviceId>*> offered_;  // null: not offered this round
  std::vector<double> offered_ms_;
  std::vector<DeviceId> published_;  // the last published assignment: the merges' base
  double published_ms_ = std::numeric_limits<double>::infinity();
  MergeEvaluator merge_;
  std::vector<DeviceId> merged_;
  std::int64_t merges_ = 0, merges_published_ = 0;
  std::barrier<Publish> barrier_;
};

/// A chain's place in a parallel run: its meeting point, its index and the evaluator whose
/// calls and clock time its meetings (the chain's part of the run).
struct ChainLink {
  Exchange* exchange = nullptr;
  int chain = 0;
  const BudgetedEvaluator* calls = nullptr;
};

}  // namespace doppler::detail
