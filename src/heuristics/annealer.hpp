#pragma once
// The annealer's moves and phases (private to src/heuristics): one chain of an annealing run.
// anneal() runs one or more of them (cycles, parallel chains) through this class.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <span>

#include "anneal_exchange.hpp"
#include "anneal_lanes.hpp"

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/groups.hpp"
#include "doppler/sim/critical_chain.hpp"
#include "doppler/sim/incremental.hpp"

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

// One annealing run: the state its phases share (the current and best assignments, the random
// stream, the evaluators), and the phases as named steps. The order of random draws is part of
// the result: a change here changes every search's placements.
class Annealer {
public:
  Annealer(const Problem& problem, BudgetedEvaluator& budget, const AnnealSettings& settings,
           std::uint64_t seed)
      : g_(problem.graph()),
        p_(problem.devices()),
        n_(static_cast<std::size_t>(g_.num_nodes())),
        sim_(problem.simulator()),
        budget_(budget),
        s_(settings),
        rng_(seed ^ 0x5eed5eedULL),
        pick_op_(0, n_ - 1),
        pick_shift_(1, p_ - 1),
        focus_(problem, settings.focus_refresh) {
    if (s_.lanes > 1)
      lanes_ = std::make_unique<Lanes>(sim_, s_.lanes, s_.incremental, s_.early_abort);
    else if (s_.incremental)
      inc_.emplace(sim_);
    if (s_.groups) {
      for (const auto& grp : *s_.groups)
        if (grp.size() > 1) groups_.push_back(grp);
    } else {
      for (auto& grp : tensor_groups(g_, true))
        if (grp.size() > 1) groups_.push_back(std::move(grp));
    }
  }

  // Joins a parallel run: meets the other chains through `link` (null: runs alone).
  void join(const ChainLink* link) { link_ = link; }

  // Anneals from `start`, then polishes; the best assignment found and its makespan.
  std::pair<std::vector<DeviceId>, double> run(std::vector<DeviceId> start, double start_ms) {
    best_ = std::move(start);
    best_ms_ = start_ms;
    cur_ = best_;
    cur_ms_ = best_ms_;
    rebase(cur_);
    anneal_phase();
    polish();
    return {std::move(best_), best_ms_};
  }

private:
  // The makespan of `d` (which becomes the incremental base). The loops check that a call is
  // left before they evaluate: a refused one is a bug (record() throws).
  double eval(const std::vector<DeviceId>& d) {
    budget_.record(1);
    if (lanes_) return lanes_->reset(d);
    return inc_ ? inc_->reset(d) : sim_.makespan(d, ws_);
  }
  // The makespan when it is <= cutoff, else some value above it (see makespan_below). `d`
  // differs from the incremental base in the ops `changed`.
  double eval_below(const std::vector<DeviceId>& d, std::span<const NodeId> changed,
                    double cutoff) {
    budget_.record(1);
    const double c = s_.early_abort ? cutoff : std::numeric_limits<double>::infinity();
    if (inc_) return inc_->evaluate(d, changed, c);
    return s_.early_abort ? sim_.makespan_below(d, ws_, cutoff) : sim_.makespan(d, ws_);
  }
  // Makes `d` the incremental base (an uncounted simulation).
  void rebase(const std::vector<DeviceId>& d) {
    if (lanes_)
      lanes_->reset(d);
    else if (inc_)
      inc_->reset(d, false);
  }
  // The last eval_below()'s assignment becomes the incremental base.
  void accept_base() {
    if (inc_) inc_->accept();
  }

  // Shifts (or gathers) a random group, recording the old devices in undo_.
  void move_group() {
    const auto& grp =
        groups_[std::uniform_int_distribution<std::size_t>(0, groups_.size() - 1)(rng_)];
    const DeviceId shift = pick_shift_(rng_);
    const DeviceId to = (cur_[static_cast<std::size_t>(grp.front())] + shift) % p_;
    for (NodeId v : grp) {
      const auto vu = static_cast<std::size_t>(v);
      undo_.push_back({v, cur_[vu]});
      cur_[vu] = s_.gather_groups ? to : (cur_[vu] + shift) % p_;
    }
  }

  // Swaps the devices of two ops on different devices (up to 8 tries; none found: no move).
  void move_swap() {
    for (int tries = 0; tries < 8 && undo_.empty(); ++tries) {
      const auto a = pick_op_(rng_), b = pick_op_(rng_);
      if (cur_[a] == cur_[b]) continue;
      undo_.push_back({static_cast<NodeId>(a), cur_[a]});
      undo_.push_back({static_cast<NodeId>(b), cur_[b]});
      std::swap(cur_[a], cur_[b]);
    }
  }

  // Reassigns one op (from the critical chain with probability focus): to the proposal's
  // device, half the time to a neighbour's device, else to a uniform other device.
  void move_reassign() {
    auto v = pick_op_(rng_);
    if (s_.focus > 0 && unit_(rng_) < s_.focus) {
      const NodeId c = focus_.pick(cur_, budget_.allows(2), budget_, rng_);
      if (c >= 0) v = static_cast<std::size_t>(c);
    }
    undo_.push_back({static_cast<NodeId>(v), cur_[v]});
    const auto preds = g_.predecessors(static_cast<NodeId>(v));
    const auto succs = g_.successors(static_cast<NodeId>(v));
    const std::size_t deg = preds.size() + succs.size();
    DeviceId target = (cur_[v] + pick_shift_(rng_)) % p_;
    if (s_.proposal && unit_(rng_) < s_.proposal->mix) {
      target = propose(s_.proposal->weights[v], cur_[v], p_, rng_);
    } else if (deg > 0 && unit_(rng_) < 0.5) {
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, deg - 1)(rng_);
      const DeviceId nd =
          cur_[static_cast<std::size_t>(k < preds.size() ? preds[k] : succs[k - preds.size()])];
      if (nd != cur_[v]) target = nd;
    }
    cur_[v] = target;
  }

  // One Metropolis step at temperature `temp`: accept when ms <= cur_ms, else draw u and accept
  // when u < exp(-(ms - cur_ms) / temp). Peeking at u gives the threshold before the simulation;
  // a run stopped above it is rejected with u drawn, exactly as the full simulation would be.
  void metropolis(double temp) {
    std::mt19937_64 peek = rng_;
    const double cutoff = (cur_ms_ - temp * std::log(unit_(peek))) * (1 + 1e-12);
    changed_.clear();
    for (const auto& [v, old] : undo_) changed_.push_back(v);
    const double ms = eval_below(cur_, changed_, cutoff);
    const bool accept =
        ms <= cutoff && (ms <= cur_ms_ || unit_(rng_) < std::exp(-(ms - cur_ms_) / temp));
    if (ms > cutoff) unit_(rng_);  // the draw the full simulation's rejection makes
    if (accept) {
      accept_base();
      moved_to(ms);
    } else {
      undo();
    }
  }

  // cur_ has taken an accepted move (makespan ms): the chain focus goes stale, a new best is
  // kept and reported.
  void moved_to(double ms) {
    focus_.changed();
    cur_ms_ = ms;
    if (ms < best_ms_) {
      best_ms_ = ms;
      best_ = cur_;
      since_improvement_ = 0;
      budget_.improved(ms);
    }
  }

  // Applies a random move to cur_ (its old devices in undo_): a group shift, a swap or a
  // reassignment.
  void propose_move() {
    undo_.clear();
    const double r = unit_(rng_);
    const double gs = s_.group_share;
    if (r < gs && !groups_.empty())
      move_group();
    else if (r < gs + (1 - gs) / 3)
      move_swap();
    if (undo_.empty()) move_reassign();
  }

  // Moves cur_ back to before the last move (undo_).
  void undo() {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
      cur_[static_cast<std::size_t>(it->first)] = it->second;
  }

  // Takes an evaluated move into cur_ (makespan ms) and makes it every lane's current one.
  void take(int lane, const LaneMove& move, double ms) {
    for (const auto& [v, d] : move.changes) cur_[static_cast<std::size_t>(v)] = d;
    lanes_->accept(lane, move);
    moved_to(ms);
  }

  // Moves a step on the lanes proposes: one per lane, no more than the calls left (at least one:
  // the loops call only while calls are left).
  std::size_t lanes_now() const {
    return static_cast<std::size_t>(
        std::min<std::int64_t>(lanes_->size(), std::max<std::int64_t>(1, budget_.calls_left())));
  }

  // One speculative step on the lanes: as many moves as lanes (and calls left) proposed from
  // cur_, each with its own Metropolis draw, simulated side by side; the first accepted in
  // proposal order is taken, the others are dropped. Returns the moves made (all charged).
  std::int64_t step_lanes(double temp) {
    const std::size_t k = lanes_now();
    moves_.resize(k);
    draws_.resize(k);
    lane_ms_.resize(k);
    for (std::size_t i = 0; i < k; ++i) {
      propose_move();
      moves_[i].changes.clear();
      for (const auto& [v, old] : undo_)
        moves_[i].changes.emplace_back(v, cur_[static_cast<std::size_t>(v)]);
      undo();
      draws_[i] = unit_(rng_);
      moves_[i].cutoff = (cur_ms_ - temp * std::log(draws_[i])) * (1 + 1e-12);
    }
    // A focused pick may have spent a call on its chain: evaluate only the moves that still fit.
    const auto fit = static_cast<std::size_t>(
        std::min<std::int64_t>(static_cast<std::int64_t>(k), budget_.calls_left()));
    if (fit == 0) return static_cast<std::int64_t>(k);
    moves_.resize(fit);
    lane_ms_.resize(fit);
    budget_.record(static_cast<std::int64_t>(fit));
    lanes_->evaluate(moves_, lane_ms_);
    const double from = cur_ms_;
    for (std::size_t i = 0; i < fit; ++i) {
      const double ms = lane_ms_[i];
      if (ms <= moves_[i].cutoff && (ms <= from || draws_[i] < std::exp(-(ms - from) / temp))) {
        take(static_cast<int>(i), moves_[i], ms);
        break;
      }
    }
    return static_cast<std::int64_t>(k);
  }

  // Annealing until the polish share of the budget: a move, its Metropolis step, and a restart
  // from the best after restart_after moves without improvement.
  void anneal_phase() {
    constexpr std::int64_t restart_after = 2000;
    const double polish = s_.polish;
    const double t_start = s_.t0 * best_ms_, t_end = t_start * 1e-4;
    while (!budget_.spent() && budget_.fraction() < 1 - polish) {
      const double temp = t_start * std::pow(t_end / t_start, budget_.fraction() / (1 - polish));
      if (lanes_) {
        since_improvement_ += step_lanes(temp);
      } else {
        propose_move();
        metropolis(temp);
        ++since_improvement_;
      }
      if (since_improvement_ >= restart_after) restart();
      if (meet()) restart();
    }
  }

  // Continues from the best assignment.
  void restart() {
    cur_ = best_;
    cur_ms_ = best_ms_;
    since_improvement_ = 0;
    rebase(cur_);
    focus_.changed();
  }

  // Meets the other chains of a parallel run when due (and calls are left): offers best_ and
  // adopts theirs when it is better. True when best_ changed.
  bool meet() {
    if (!link_ || link_->calls->calls() < link_->exchange->next(link_->chain) || budget_.spent())
      return false;
    double ms = 0;
    const std::vector<DeviceId>* other =
        link_->exchange->meet(link_->chain, link_->calls->calls(), best_, best_ms_, ms);
    if (!other) return false;
    best_ = *other;
    best_ms_ = ms;
    return true;
  }

  // First-improvement descent over single-op moves from `a` (its makespan `a_ms`).
  void descend(std::vector<DeviceId>& a, double& a_ms) {
    if (lanes_) return descend_lanes(a, a_ms);
    bool improved = true;
    while (improved && !budget_.spent()) {
      improved = false;
      std::shuffle(ops_.begin(), ops_.end(), rng_);
      for (NodeId v : ops_) {
        const DeviceId old = a[static_cast<std::size_t>(v)];
        for (DeviceId d = 0; d < p_ && !budget_.spent(); ++d) {
          if (d == old) continue;
          a[static_cast<std::size_t>(v)] = d;
          const double ms = eval_below(a, std::span<const NodeId>(&v, 1), a_ms);
          if (ms < a_ms) {
            accept_base();
            a_ms = ms;
            improved = true;
            if (&a == &best_) budget_.improved(ms);
            break;
          }
          a[static_cast<std::size_t>(v)] = old;
        }
        if (meet() && &a == &best_) {  // descend from the adopted best
          rebase(best_);
          improved = true;
          break;
        }
        if (budget_.spent()) break;
      }
    }
  }

  // descend() on the lanes: the next (op, device) pairs of the same order, one per lane, with
  // `a_ms` as cutoff; the first that improves is taken and the descent goes on from the next op,
  // as the one-lane descent does (the pairs after it are dropped).
  void descend_lanes(std::vector<DeviceId>& a, double& a_ms) {
    bool improved = true;
    while (improved && !budget_.spent()) {
      improved = false;
      std::shuffle(ops_.begin(), ops_.end(), rng_);
      std::size_t next = 0;  // position in ops_ x devices: next / p_ is the op's index
      const std::size_t end = n_ * static_cast<std::size_t>(p_);
      while (next < end && !budget_.spent()) {
        const std::size_t lanes = lanes_now();
        moves_.clear();
        std::size_t at = next;
        for (; at < end && moves_.size() < lanes; ++at) {
          const NodeId v = ops_[at / static_cast<std::size_t>(p_)];
          const auto d = static_cast<DeviceId>(at % static_cast<std::size_t>(p_));
          if (d == a[static_cast<std::size_t>(v)]) continue;
          moves_.push_back({{{v, d}}, a_ms});
          positions_.resize(moves_.size());
          positions_.back() = at;
        }
        if (moves_.empty()) break;
        lane_ms_.resize(moves_.size());
        budget_.record(static_cast<std::int64_t>(moves_.size()));
        lanes_->evaluate(moves_, lane_ms_);
        next = at;
        for (std::size_t i = 0; i < moves_.size(); ++i) {
          if (!(lane_ms_[i] < a_ms)) continue;
          const auto [v, d] = moves_[i].changes.front();
          a[static_cast<std::size_t>(v)] = d;
          lanes_->accept(static_cast<int>(i), moves_[i]);
          a_ms = lane_ms_[i];
          improved = true;
          if (&a == &best_) budget_.improved(a_ms);
          const std::size_t pp = static_cast<std::size_t>(p_);
          next = (positions_[i] / pp + 1) * pp;  // the next op
          break;
        }
        if (meet() && &a == &best_) {  // descend from the adopted best
          rebase(best_);
          improved = true;
          break;
        }
      }
    }
  }

  // Polish: descent from the best assignment; while budget remains, perturb the best local
  // optimum (a few random reassignments) and descend again (iterated local search).
  void polish() {
    ops_.resize(n_);
    std::iota(ops_.begin(), ops_.end(), 0);
    rebase(best_);
    descend(best_, best_ms_);
    std::uniform_int_distribution<int> kicks(
        2, std::max(2, static_cast<int>(std::min<std::size_t>(n_, 8))));
    while (!budget_.spent()) {
      meet();
      cur_ = best_;
      const int k = kicks(rng_);
      for (int i = 0; i < k; ++i) {
        const auto v = pick_op_(rng_);
        cur_[v] = (cur_[v] + pick_shift_(rng_)) % p_;
      }
      cur_ms_ = eval(cur_);
      descend(cur_, cur_ms_);
      if (cur_ms_ < best_ms_) {
        best_ms_ = cur_ms_;
        best_ = cur_;
        budget_.improved(best_ms_);
      }
    }
  }

  const Graph& g_;
  const int p_;
  const std::size_t n_;
  const Simulator& sim_;
  BudgetedEvaluator& budget_;
  const AnnealSettings& s_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  std::uniform_int_distribution<std::size_t> pick_op_;
  std::uniform_int_distribution<DeviceId> pick_shift_;
  ChainFocus focus_;
  SimWorkspace ws_;
  std::optional<IncrementalSim> inc_;  // holds the current assignment as its base
  std::unique_ptr<Lanes> lanes_;       // speculative lanes (settings.lanes > 1) instead of inc_
  std::vector<LaneMove> moves_;        // the lanes' moves of one step
  std::vector<double> draws_, lane_ms_;
  std::vector<std::size_t> positions_;  // descend_lanes: each move's position
  std::vector<std::vector<NodeId>> groups_;
  std::vector<DeviceId> cur_, best_;
  double cur_ms_ = 0, best_ms_ = 0;
  std::vector<std::pair<NodeId, DeviceId>> undo_;  // the last move's (op, old device) pairs
  std::vector<NodeId> changed_, ops_;
  std::int64_t since_improvement_ = 0;
  const ChainLink* link_ = nullptr;
};

}  // namespace doppler::detail
