#include "doppler/heuristics/anneal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <span>

#include "doppler/heuristics/groups.hpp"
#include "doppler/sim/critical_chain.hpp"
#include "doppler/sim/incremental.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace {

// A device other than `cur` drawn in proportion to `w` (uniform when `w` is empty or puts no
// weight on another device).
DeviceId propose(const std::vector<double>& w, DeviceId cur, int p, std::mt19937_64& rng) {
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
    ++moves_;
    if (may_refresh && (chain_.empty() || (stale_ && moves_ >= gap_))) {
      const Assignment a{problem_.devices(), cur, {}, {}};
      if (const std::optional<Schedule> s = eval.simulate(a))
        chain_ = critical_chain(problem_.graph(), *s);
      stale_ = false;
      moves_ = 0;
    }
    if (chain_.empty()) return -1;
    return chain_[std::uniform_int_distribution<std::size_t>(0, chain_.size() - 1)(rng)];
  }

private:
  const Problem& problem_;
  int gap_;
  int moves_ = 0;
  bool stale_ = true;
  std::vector<NodeId> chain_;
};

}  // namespace

AnnealResult anneal(const Problem& problem, std::vector<DeviceId> start, double start_makespan,
                    BudgetedEvaluator& budget, const AnnealSettings& settings,
                    std::uint64_t seed) {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const auto n = static_cast<std::size_t>(g.num_nodes());
  if (start.size() != n) throw InputError("anneal: the start assignment has the wrong size");
  if (budget.limits().evaluations <= 0 && budget.limits().seconds <= 0)
    throw InputError("anneal: give a budget of evaluations or seconds");
  const MoveProposal* proposal = settings.proposal;
  if (proposal && proposal->weights.size() != n)
    throw InputError("anneal: the move proposal has the wrong number of ops");
  const double t0_ = settings.t0, polish_ = settings.polish;
  const Simulator& sim = problem.simulator();
  SimWorkspace ws;
  AnnealResult res;
  const std::int64_t calls0 = budget.calls();
  // With incremental evaluation, `inc` holds the current assignment as its base.
  std::optional<IncrementalSim> inc;
  if (settings.incremental) inc.emplace(sim);
  // The makespan of `d` (which becomes the incremental base).
  // The loops below check that a call is left before they evaluate: a refused one is a bug.
  const auto eval = [&](const std::vector<DeviceId>& d) {
    budget.record(1);
    return inc ? inc->reset(d) : sim.makespan(d, ws);
  };
  // The makespan when it is <= cutoff, else some value above it (see makespan_below). `d`
  // differs from the incremental base in the ops `changed`.
  const auto eval_below = [&](const std::vector<DeviceId>& d, std::span<const NodeId> changed,
                              double cutoff) {
    budget.record(1);
    const double c = settings.early_abort ? cutoff : std::numeric_limits<double>::infinity();
    if (inc) return inc->evaluate(d, changed, c);
    return settings.early_abort ? sim.makespan_below(d, ws, cutoff) : sim.makespan(d, ws);
  };
  // Makes `d` the incremental base (an uncounted simulation).
  const auto rebase = [&](const std::vector<DeviceId>& d) {
    if (inc) inc->reset(d, false);
  };
  // The last eval_below()'s assignment becomes the incremental base.
  const auto accept_base = [&] {
    if (inc) inc->accept();
  };
  std::vector<NodeId> changed;
  std::vector<DeviceId> best = std::move(start);
  double best_ms = start_makespan;
  if (p == 1 || n == 0 || budget.spent()) return {best, best_ms, 0};
  std::mt19937_64 rng(seed ^ 0x5eed5eedULL);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::size_t> pick_op(0, n - 1);
  std::uniform_int_distribution<DeviceId> pick_shift(1, p - 1);
  std::vector<std::vector<NodeId>> groups;
  if (settings.groups) {
    for (const auto& grp : *settings.groups)
      if (grp.size() > 1) groups.push_back(grp);
  } else {
    for (auto& grp : tensor_groups(g, true))
      if (grp.size() > 1) groups.push_back(std::move(grp));
  }

  std::vector<DeviceId> cur = best;
  double cur_ms = best_ms;
  rebase(cur);
  ChainFocus focus(problem, settings.focus_refresh);
  const double t_start = t0_ * best_ms, t_end = t_start * 1e-4;
  std::vector<std::pair<NodeId, DeviceId>> undo;
  std::int64_t since_improvement = 0;
  const std::int64_t restart_after = 2000;
  // Annealing phase.
  while (!budget.spent() && budget.fraction() < 1 - polish_) {
    const double temp = t_start * std::pow(t_end / t_start, budget.fraction() / (1 - polish_));
    undo.clear();
    const double r = unit(rng);
    const double gs = settings.group_share;
    if (r < gs && !groups.empty()) {  // shift (or gather) a group
      const auto& grp =
          groups[std::uniform_int_distribution<std::size_t>(0, groups.size() - 1)(rng)];
      const DeviceId shift = pick_shift(rng);
      const DeviceId to = (cur[static_cast<std::size_t>(grp.front())] + shift) % p;
      for (NodeId v : grp) {
        undo.push_back({v, cur[static_cast<std::size_t>(v)]});
        cur[static_cast<std::size_t>(v)] =
            settings.gather_groups ? to : (cur[static_cast<std::size_t>(v)] + shift) % p;
      }
    } else if (r < gs + (1 - gs) / 3) {  // swap two ops on different devices
      for (int tries = 0; tries < 8 && undo.empty(); ++tries) {
        const auto a = pick_op(rng), b = pick_op(rng);
        if (cur[a] == cur[b]) continue;
        undo.push_back({static_cast<NodeId>(a), cur[a]});
        undo.push_back({static_cast<NodeId>(b), cur[b]});
        std::swap(cur[a], cur[b]);
      }
    }
    if (undo.empty()) {  // reassign one op: half the time to a neighbour's device
      auto v = pick_op(rng);
      if (settings.focus > 0 && unit(rng) < settings.focus) {
        const NodeId c = focus.pick(cur, budget.allows(2), budget, rng);
        if (c >= 0) v = static_cast<std::size_t>(c);
      }
      undo.push_back({static_cast<NodeId>(v), cur[v]});
      const auto preds = g.predecessors(static_cast<NodeId>(v));
      const auto succs = g.successors(static_cast<NodeId>(v));
      const std::size_t deg = preds.size() + succs.size();
      DeviceId target = (cur[v] + pick_shift(rng)) % p;
      if (proposal && unit(rng) < proposal->mix) {
        target = propose(proposal->weights[v], cur[v], p, rng);
      } else if (deg > 0 && unit(rng) < 0.5) {
        const std::size_t k = std::uniform_int_distribution<std::size_t>(0, deg - 1)(rng);
        const DeviceId nd =
            cur[static_cast<std::size_t>(k < preds.size() ? preds[k] : succs[k - preds.size()])];
        if (nd != cur[v]) target = nd;
      }
      cur[v] = target;
    }
    // Metropolis: accept when ms <= cur_ms, else draw u and accept when u < exp(-(ms - cur_ms) /
    // temp). Peeking at u gives the threshold before the simulation; a run stopped above it is
    // rejected with u drawn, exactly as the full simulation would be.
    std::mt19937_64 peek = rng;
    const double cutoff = (cur_ms - temp * std::log(unit(peek))) * (1 + 1e-12);
    changed.clear();
    for (const auto& [v, old] : undo) changed.push_back(v);
    const double ms = eval_below(cur, changed, cutoff);
    const bool accept =
        ms <= cutoff && (ms <= cur_ms || unit(rng) < std::exp(-(ms - cur_ms) / temp));
    if (ms > cutoff) unit(rng);  // the draw the full simulation's rejection makes
    if (accept) {
      accept_base();
      focus.changed();
      cur_ms = ms;
      if (ms < best_ms) {
        best_ms = ms;
        best = cur;
        since_improvement = 0;
      }
    } else {
      for (auto it = undo.rbegin(); it != undo.rend(); ++it)
        cur[static_cast<std::size_t>(it->first)] = it->second;
    }
    if (++since_improvement >= restart_after) {
      cur = best;
      cur_ms = best_ms;
      since_improvement = 0;
      rebase(cur);
      focus.changed();
    }
  }
  // Polish: first-improvement descent over single-op moves from the best assignment; while
  // budget remains, perturb the best local optimum (a few random reassignments) and descend
  // again (iterated local search).
  std::vector<NodeId> ops(n);
  std::iota(ops.begin(), ops.end(), 0);
  const auto descend = [&](std::vector<DeviceId>& a, double& a_ms) {
    bool improved = true;
    while (improved && !budget.spent()) {
      improved = false;
      std::shuffle(ops.begin(), ops.end(), rng);
      for (NodeId v : ops) {
        const DeviceId old = a[static_cast<std::size_t>(v)];
        for (DeviceId d = 0; d < p && !budget.spent(); ++d) {
          if (d == old) continue;
          a[static_cast<std::size_t>(v)] = d;
          const double ms = eval_below(a, std::span<const NodeId>(&v, 1), a_ms);
          if (ms < a_ms) {
            accept_base();
            a_ms = ms;
            improved = true;
            break;
          }
          a[static_cast<std::size_t>(v)] = old;
        }
        if (budget.spent()) break;
      }
    }
  };
  rebase(best);
  descend(best, best_ms);
  std::uniform_int_distribution<int> kicks(
      2, std::max(2, static_cast<int>(std::min<std::size_t>(n, 8))));
  while (!budget.spent()) {
    cur = best;
    const int k = kicks(rng);
    for (int i = 0; i < k; ++i) {
      const auto v = pick_op(rng);
      cur[v] = (cur[v] + pick_shift(rng)) % p;
    }
    cur_ms = eval(cur);
    descend(cur, cur_ms);
    if (cur_ms < best_ms) {
      best_ms = cur_ms;
      best = cur;
    }
  }
  res.best = std::move(best);
  res.best_makespan = best_ms;
  res.evaluations = budget.calls() - calls0;
  return res;
}

}  // namespace doppler
