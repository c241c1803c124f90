// The annealer's moves (a group shift, a swap, a reassignment), their Metropolis steps, one at a
// time or side by side on speculative lanes, and its evaluations.
#include <algorithm>
#include <cmath>
#include <limits>

#include "annealer.hpp"

#include "doppler/heuristics/groups.hpp"

namespace doppler::detail {

Annealer::Annealer(const Problem& problem, BudgetedEvaluator& budget,
                   const AnnealSettings& settings, std::uint64_t seed)
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
  if (s_.repeats) {
    repeat_of_.assign(n_, -1);
    for (std::size_t i = 0; i < s_.repeats->size(); ++i)
      for (NodeId v : (*s_.repeats)[i])
        repeat_of_[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(i);
  }
  if (s_.groups) {
    for (const auto& grp : *s_.groups)
      if (grp.size() > 1) groups_.push_back(grp);
  } else {
    for (auto& grp : tensor_groups(g_, true))
      if (grp.size() > 1) groups_.push_back(std::move(grp));
  }
}

double Annealer::eval(const std::vector<DeviceId>& d) {
  budget_.record(1);
  if (lanes_) return lanes_->reset(d);
  return inc_ ? inc_->reset(d) : sim_.makespan(d, ws_);
}

double Annealer::eval_below(const std::vector<DeviceId>& d, std::span<const NodeId> changed,
                            double cutoff) {
  budget_.record(1);
  const double c = s_.early_abort ? cutoff : std::numeric_limits<double>::infinity();
  if (inc_) return inc_->evaluate(d, changed, c);
  return s_.early_abort ? sim_.makespan_below(d, ws_, cutoff) : sim_.makespan(d, ws_);
}

void Annealer::rebase(const std::vector<DeviceId>& d) {
  if (lanes_)
    lanes_->reset(d);
  else if (inc_)
    inc_->reset(d, false);
}

void Annealer::accept_base() {
  if (inc_) inc_->accept();
}

std::size_t Annealer::degree(NodeId v) const {
  return g_.predecessors(v).size() + g_.successors(v).size();
}

NodeId Annealer::random_neighbour(NodeId v) {
  const auto preds = g_.predecessors(v);
  const auto succs = g_.successors(v);
  const std::size_t k =
      std::uniform_int_distribution<std::size_t>(0, preds.size() + succs.size() - 1)(rng_);
  return k < preds.size() ? preds[k] : succs[k - preds.size()];
}

void Annealer::move_group() {
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

void Annealer::move_repeat() {
  std::size_t pick = std::uniform_int_distribution<std::size_t>(0, s_.repeats->size() - 1)(rng_);
  if (s_.focus > 0 && unit_(rng_) < s_.focus) {
    const NodeId c = focus_.pick(cur_, budget_.allows(2), budget_, rng_);
    if (c >= 0 && repeat_of_[static_cast<std::size_t>(c)] >= 0)
      pick = static_cast<std::size_t>(repeat_of_[static_cast<std::size_t>(c)]);
  }
  const auto& cls = (*s_.repeats)[pick];
  DeviceId shift = pick_shift_(rng_);
  if (unit_(rng_) < 0.5) {  // half the time: one member onto a neighbour's device
    const NodeId v = cls[std::uniform_int_distribution<std::size_t>(0, cls.size() - 1)(rng_)];
    if (degree(v) > 0) {
      const NodeId u = random_neighbour(v);
      const DeviceId s =
          (cur_[static_cast<std::size_t>(u)] - cur_[static_cast<std::size_t>(v)] + p_) % p_;
      if (s != 0) shift = s;
    }
  }
  for (NodeId v : cls) {
    const auto vu = static_cast<std::size_t>(v);
    undo_.push_back({v, cur_[vu]});
    cur_[vu] = (cur_[vu] + shift) % p_;
  }
}

void Annealer::move_swap() {
  for (int tries = 0; tries < 8 && undo_.empty(); ++tries) {
    const auto a = pick_op_(rng_), b = pick_op_(rng_);
    if (cur_[a] == cur_[b]) continue;
    undo_.push_back({static_cast<NodeId>(a), cur_[a]});
    undo_.push_back({static_cast<NodeId>(b), cur_[b]});
    std::swap(cur_[a], cur_[b]);
  }
}

void Annealer::move_reassign() {
  auto v = pick_op_(rng_);
  if (s_.focus > 0 && unit_(rng_) < s_.focus) {
    const NodeId c = focus_.pick(cur_, budget_.allows(2), budget_, rng_);
    if (c >= 0) v = static_cast<std::size_t>(c);
    if (c >= 0 && s_.aim > 0 && unit_(rng_) < s_.aim && repair(c, focus_.culprit())) return;
  }
  undo_.push_back({static_cast<NodeId>(v), cur_[v]});
  DeviceId target = (cur_[v] + pick_shift_(rng_)) % p_;
  if (s_.proposal && unit_(rng_) < s_.proposal->mix) {
    target = propose(s_.proposal->weights[v], cur_[v], p_, rng_);
  } else if (degree(static_cast<NodeId>(v)) > 0 && unit_(rng_) < 0.5) {
    const DeviceId nd = cur_[static_cast<std::size_t>(random_neighbour(static_cast<NodeId>(v)))];
    if (nd != cur_[v]) target = nd;
  }
  cur_[v] = target;
}

bool Annealer::repair(NodeId v, NodeId u) {
  if (u < 0) return false;
  const auto vi = static_cast<std::size_t>(v), ui = static_cast<std::size_t>(u);
  const auto preds = g_.predecessors(v);
  if (cur_[ui] == cur_[vi] || std::find(preds.begin(), preds.end(), u) == preds.end()) return false;
  // u's data reached v last, over a transfer: put the two on one device.
  const NodeId w = unit_(rng_) < 0.5 ? v : u;
  const auto wi = static_cast<std::size_t>(w);
  undo_.push_back({w, cur_[wi]});
  cur_[wi] = cur_[w == v ? ui : vi];
  return true;
}

void Annealer::metropolis(double temp) {
  std::mt19937_64 peek = rng_;
  const double cutoff = (cur_ms_ - temp * std::log(unit_(peek))) * (1 + 1e-12);
  changed_.clear();
  for (const auto& [v, old] : undo_) changed_.push_back(v);
  const double ms = eval_below(cur_, changed_, cutoff);
  const bool accept =
      ms <= cutoff && (ms < cur_ms_ || (ms == cur_ms_ && take_tie(temp)) ||
                       (ms > cur_ms_ && unit_(rng_) < std::exp(-(ms - cur_ms_) / temp)));
  if (ms > cutoff) unit_(rng_);  // the draw the full simulation's rejection makes
  if (accept) {
    accept_base();
    moved_to(ms);
  } else {
    undo();
  }
}

double Annealer::tie_rise() const {
  if (s_.tiebreak == TieBreak::none || !inc_) return 0;
  return (inc_->finish_sum() - inc_->base_finish_sum()) / static_cast<double>(n_);
}

bool Annealer::take_tie(double temp) {
  const double rise = tie_rise();
  if (!(rise > 0)) return true;
  return s_.tiebreak == TieBreak::metropolis && unit_(rng_) < std::exp(-rise / temp);
}

void Annealer::moved_to(double ms) {
  focus_.changed();
  cur_ms_ = ms;
  if (ms < best_ms_) {
    best_ms_ = ms;
    best_ = cur_;
    since_improvement_ = 0;
    budget_.improved(ms);
    if (s_.on_best) s_.on_best(best_, ms);
  }
}

void Annealer::propose_move() {
  undo_.clear();
  if (s_.repeat_share > 0 && s_.repeats && !s_.repeats->empty() && unit_(rng_) < s_.repeat_share) {
    move_repeat();
    return;
  }
  const double r = unit_(rng_);
  const double gs = s_.group_share;
  if (r < gs && !groups_.empty())
    move_group();
  else if (r < gs + (1 - gs) / 3 && s_.swaps)
    move_swap();
  if (undo_.empty()) move_reassign();
}

void Annealer::undo() {
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
    cur_[static_cast<std::size_t>(it->first)] = it->second;
}

void Annealer::take(int lane, const LaneMove& move, double ms) {
  for (const auto& [v, d] : move.changes) cur_[static_cast<std::size_t>(v)] = d;
  lanes_->accept(lane, move);
  moved_to(ms);
}

std::size_t Annealer::lanes_now() const {
  return static_cast<std::size_t>(
      std::min<std::int64_t>(lanes_->size(), std::max<std::int64_t>(1, budget_.calls_left())));
}

std::int64_t Annealer::step_lanes(double temp) {
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

}  // namespace doppler::detail
