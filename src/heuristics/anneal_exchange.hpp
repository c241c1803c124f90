#pragma once
// The meeting point of the parallel chains of one annealing run (private to src/heuristics).
#include <barrier>
#include <cstdint>
#include <limits>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/budget.hpp"

namespace doppler::detail {

/// The chains of one run meet every `every` simulator calls of their own: each offers its best
/// assignment, the best of them (the lowest makespan; the lowest chain on ties) is published,
/// and a chain whose own best is worse adopts it. Meetings happen at the same call counts in
/// every chain, so with call budgets the run is deterministic for a thread count. Thread-safe.
class Exchange {
public:
  Exchange(int chains, std::int64_t every);
  /// Chain `c` is due to meet when its chain evaluator has made this many calls.
  std::int64_t next(int c) const { return next_[static_cast<std::size_t>(c)]; }
  /// Chain `c` (with `calls` >= next(c) calls made) offers `best` (makespan `ms`) and waits for
  /// the others; returns the published best when it beats `ms` (its makespan in `out_ms`),
  /// else null. The pointer stays valid until the chain's next meet() or leave().
  const std::vector<DeviceId>* meet(int c, std::int64_t calls, const std::vector<DeviceId>& best,
                                    double ms, double& out_ms);
  /// Chain `c` is done (or failed): the others no longer wait for it. Call exactly once.
  void leave(int c);

private:
  struct Publish {
    Exchange* self;
    void operator()() noexcept;
  };

  std::int64_t every_;
  std::vector<std::int64_t> next_;
  std::vector<const std::vector<DeviceId>*> offered_;  // null: not offered this round
  std::vector<double> offered_ms_;
  std::vector<DeviceId> published_;
  double published_ms_ = std::numeric_limits<double>::infinity();
  std::barrier<Publish> barrier_;
};

/// A chain's place in a parallel run: its meeting point, its index and the evaluator whose
/// calls time its meetings (the chain's part of the run).
struct ChainLink {
  Exchange* exchange = nullptr;
  int chain = 0;
  const BudgetedEvaluator* calls = nullptr;
};

}  // namespace doppler::detail
