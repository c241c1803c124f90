#pragma once
// The annealer's move proposals: a device drawn from weights, and the critical chain a focused
// move picks its op from (private to src/heuristics).
#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "doppler/heuristics/budget.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/sim/critical_chain.hpp"

namespace doppler::detail {

// A device other than `cur` drawn in proportion to `w` (uniform when `w` is empty or puts no
// weight on another device).
inline DeviceId propose(const std::vector<double>& w, DeviceId cur, int p, std::mt19937_64& rng) {
  double total = 0;
  for (std::size_t d = 0; d < w.size(); ++d)
    if (static_cast<DeviceId>(d) != cur) total += w[d];
  if (w.empty() || !(total > 0))
    return (cur + std::uniform_int_distribution<DeviceId>(1, p - 1)(rng)) % p;
  double r = std::uniform_real_distribution<double>(0.0, total)(rng);
  for (std::size_t d = 0; d < w.size(); ++d) {
    if (static_cast<DeviceId>(d) == cur) continue;
    r -= w[d];
    if (r < 0) return static_cast<DeviceId>(d);
  }
  for (std::size_t d = w.size(); d-- > 0;)
    if (static_cast<DeviceId>(d) != cur && w[d] > 0) return static_cast<DeviceId>(d);
  return (cur + 1) % p;
}

// The critical chain of the annealer's current assignment, recomputed lazily (one counted
// simulation) once the assignment has changed and `gap` moves have passed.
class ChainFocus {
public:
  ChainFocus(const Problem& problem, int gap) : problem_(problem), gap_(std::max(1, gap)) {}
  // The assignment changed (an accepted move or a restart).
  void changed() { stale_ = true; }
  // A random op of the chain of `cur` (refreshing it first when due, one call charged to
  // `eval`), or -1 when there is no chain. `may_refresh` is false when the budget has no call
  // left for the refresh.
  NodeId pick(const std::vector<DeviceId>& cur, bool may_refresh, BudgetedEvaluator& eval,
              std::mt19937_64& rng) {
    culprit_ = -1;
    ++moves_;
    if (may_refresh && (chain_.empty() || (stale_ && moves_ >= gap_))) {
      const Assignment a{problem_.devices(), cur, {}, {}};
      if (const std::optional<Schedule> s = eval.simulate(a))
        chain_ = critical_chain(problem_.graph(), *s);
      stale_ = false;
      moves_ = 0;
    }
    if (chain_.empty()) return -1;
    const std::size_t i = std::uniform_int_distribution<std::size_t>(0, chain_.size() - 1)(rng);
    culprit_ = i + 1 < chain_.size() ? chain_[i + 1] : -1;
    return chain_[i];
  }
  // What delayed the last pick's op in the chain when it was computed (the next op of the
  // chain: an input that arrived last, or the op that held its device); -1: none.
  NodeId culprit() const { return culprit_; }

private:
  const Problem& problem_;
  int gap_;
  int moves_ = 0;
  bool stale_ = true;
  std::vector<NodeId> chain_;
  NodeId culprit_ = -1;
};

}  // namespace doppler::detail
