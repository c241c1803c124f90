// Level-by-level placement (levels.hpp): batches of one topological level matched to device
// slots by estimated finish plus tail, the tails refined pass after pass from the passes' own
// schedules.
#include "doppler/heuristics/levels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include "doppler/graph/analysis.hpp"
#include "doppler/heuristics/chain_refine.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/sim/simulator.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/min_cost_matching.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

namespace {

constexpr std::size_t kBatch = 64;   // most ops matched at once
constexpr double kMaxExponent = 60;  // exp() argument clamp: finite costs
constexpr std::int64_t kNone = -1;

bool is_input(const Graph& g, NodeId v) {
  return g.node(v).kind == OpKind::input;
}

// The non-input ops by level (the longest path in edges from a source, or to a sink when
// `backward`; inputs left out), each level by decreasing rest (ties: lower id).
std::vector<std::vector<NodeId>> levels_by_rest(const Graph& g, const std::vector<double>& rest,
                                                bool backward) {
  std::vector<int> level(static_cast<std::size_t>(g.num_nodes()), 0);
  std::vector<std::vector<NodeId>> out;
  const auto& topo = g.topo_order();
  for (std::size_t k = 0; k < topo.size(); ++k) {
    const NodeId v = backward ? topo[topo.size() - 1 - k] : topo[k];
    if (is_input(g, v)) continue;
    int l = 0;
    for (NodeId u : backward ? g.successors(v) : g.predecessors(v))
      if (!is_input(g, u)) l = std::max(l, level[static_cast<std::size_t>(u)] + 1);
    level[static_cast<std::size_t>(v)] = l;
    if (out.size() <= static_cast<std::size_t>(l)) out.resize(static_cast<std::size_t>(l) + 1);
    out[static_cast<std::size_t>(l)].push_back(v);
  }
  for (auto& ops : out)
    std::stable_sort(ops.begin(), ops.end(), [&](NodeId a, NodeId b) {
      return rest[static_cast<std::size_t>(a)] > rest[static_cast<std::size_t>(b)];
    });
  return out;
}

// One pass over the levels; the state of the schedule it builds. A backward pass schedules the
// reversed graph (a schedule run backwards in time), its inputs being each op's successors.
class Pass {
public:
  Pass(const Problem& problem, const LevelSettings& s, const std::vector<double>& rest,
       bool backward, const std::vector<DeviceId>& previous)
      : g_(problem.graph()),
        cost_(problem.cost()),
        p_(static_cast<std::size_t>(problem.devices())),
        rest_(rest),
        previous_(previous),
        backward_(backward),
        blend_(s.blend),
        dev_(static_cast<std::size_t>(g_.num_nodes()), -1),
        finish_(dev_.size(), 0.0),
        next_(dev_.size(), kNone),
        avail_(p_, 0.0),
        last_(p_, kNone) {
    double mean = 0;
    for (NodeId v = 0; v < g_.num_nodes(); ++v) mean += cost_.compute(v);
    mean /= std::max(1, g_.num_nodes());
    tau_ = s.tau * (mean > 0 ? mean : 1.0);
  }

  LevelPlan run(std::vector<double>& rest, std::vector<double>& heads) {
    LevelPlan plan;
    for (NodeId v = 0; v < g_.num_nodes(); ++v)
      if (is_input(g_, v)) plan.order.push_back(v);
    const std::size_t inputs = plan.order.size();
    for (const auto& ops : levels_by_rest(g_, rest_, backward_))
      for (std::size_t at = 0; at < ops.size(); at += kBatch)
        place_batch(std::span(ops).subspan(at, std::min(kBatch, ops.size() - at)), plan.order);
    for (std::size_t i = inputs; i < plan.order.size(); ++i)
      plan.makespan = std::max(plan.makespan, finish_[static_cast<std::size_t>(plan.order[i])]);
    own_tails(std::span(plan.order).subspan(inputs), rest);
    for (std::size_t i = inputs; i < plan.order.size(); ++i) {
      const auto v = static_cast<std::size_t>(plan.order[i]);
      heads[v] =
          blend_ * (finish_[v] - cost_.compute(plan.order[i], dev_[v])) + (1 - blend_) * heads[v];
    }
    if (backward_)
      std::reverse(plan.order.begin() + static_cast<std::ptrdiff_t>(inputs), plan.order.end());
    // Each input op on the device of its consumer placed first (device 0 without consumers).
    for (std::size_t i = 0; i < inputs; ++i) dev_[static_cast<std::size_t>(plan.order[i])] = 0;
    Assignment a{static_cast<int>(p_), std::move(dev_), std::move(plan.order), {}};
    colocate_inputs(g_, a);
    plan.device_of = std::move(a.device_of);
    plan.order = std::move(a.order);
    return plan;
  }

private:
  // Calls f(u, e) for each neighbour u of v on the side the pass reads (predecessors forward,
  // successors backward) and the edge e joining them; `outputs` takes the other side.
  template <typename F>
  void for_neighbours(NodeId v, bool outputs, F&& f) const {
    if (backward_ != outputs) {
      const auto succ = g_.successors(v);
      for (std::size_t i = 0; i < succ.size(); ++i)
        f(succ[i], g_.out_edge_begin(v) + static_cast<EdgeId>(i));
    } else {
      const auto preds = g_.predecessors(v);
      const auto edges = g_.in_edges(v);
      for (std::size_t i = 0; i < preds.size(); ++i) f(preds[i], edges[i]);
    }
  }

  // Transfer time of edge e between the device of its end the pass placed first (`earlier`)
  // and that of the other (`later`): the data flows from earlier to later, the other way when
  // the pass goes backward.
  double transfer(EdgeId e, DeviceId earlier, DeviceId later) const {
    return backward_ ? cost_.transfer(e, later, earlier) : cost_.transfer(e, earlier, later);
  }

  // Earliest arrival of every input of v on each device (producers already placed).
  void arrivals(NodeId v, double* arr) const {
    std::fill(arr, arr + p_, 0.0);
    for_neighbours(v, false, [&](NodeId u, EdgeId e) {
      const auto ui = static_cast<std::size_t>(u);
      if (dev_[ui] < 0) return;  // an input op: it will follow its first consumer
      for (std::size_t d = 0; d < p_; ++d)
        arr[d] = std::max(arr[d], finish_[ui] + transfer(e, dev_[ui], static_cast<DeviceId>(d)));
    });
  }

  // The time after v on each device d, were its successors where the previous pass put them.
  void follow_tails(NodeId v) {
    follow_.assign(p_, 0.0);
    for_neighbours(v, true, [&](NodeId w, EdgeId e) {
      const auto wi = static_cast<std::size_t>(w);
      if (is_input(g_, w)) return;
      const DeviceId dw = previous_[wi];
      const double after = cost_.compute(w, dw) + rest_[wi];
      for (std::size_t d = 0; d < p_; ++d)
        follow_[d] = std::max(follow_[d], transfer(e, static_cast<DeviceId>(d), dw) + after);
    });
  }

  // Matches the batch's ops to device slots (see level_pass) and schedules them.
  void place_batch(std::span<const NodeId> batch, std::vector<NodeId>& order) {
    const std::size_t k = batch.size(), slots = (k + p_ - 1) / p_, cols = p_ * slots;
    double step = 0;  // the batch's mean compute: the j-th op on a device waits j of them
    for (NodeId v : batch) step += cost_.compute(v);
    step /= static_cast<double>(k);
    arr_.resize(k * p_);
    score_.resize(k * cols);
    double ref = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < k; ++i) {
      arrivals(batch[i], arr_.data() + i * p_);
      if (!previous_.empty()) follow_tails(batch[i]);
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t d = 0; d < p_; ++d)
        for (std::size_t j = 0; j < slots; ++j) {
          const double start =
              std::max(arr_[i * p_ + d], avail_[d] + static_cast<double>(j) * step);
          const double s =
              start + cost_.compute(batch[i], static_cast<DeviceId>(d)) +
              (previous_.empty() ? rest_[static_cast<std::size_t>(batch[i])] : follow_[d]);
          score_[i * cols + d * slots + j] = s;
          best = std::min(best, s);
        }
      ref = std::max(ref, best);
    }
    for (double& s : score_)
      s = std::exp(std::clamp((s - ref) / tau_, -kMaxExponent, kMaxExponent));
    const std::vector<int> match =
        min_cost_matching(score_, static_cast<int>(k), static_cast<int>(cols));
    schedule_batch(batch, match, slots, order);
  }

  // Schedules the matched ops, slot by slot, each after its inputs and its device's last op.
  void schedule_batch(std::span<const NodeId> batch, const std::vector<int>& match,
                      std::size_t slots, std::vector<NodeId>& order) {
    std::vector<std::size_t> by_slot(batch.size());
    for (std::size_t i = 0; i < by_slot.size(); ++i) by_slot[i] = i;
    std::stable_sort(by_slot.begin(), by_slot.end(), [&](std::size_t a, std::size_t b) {
      return static_cast<std::size_t>(match[a]) % slots <
             static_cast<std::size_t>(match[b]) % slots;
    });
    for (std::size_t i : by_slot) {
      const auto v = static_cast<std::size_t>(batch[i]);
      const std::size_t d = static_cast<std::size_t>(match[i]) / slots;
      dev_[v] = static_cast<DeviceId>(d);
      finish_[v] =
          std::max(arr_[i * p_ + d], avail_[d]) + cost_.compute(batch[i], static_cast<DeviceId>(d));
      avail_[d] = finish_[v];
      if (last_[d] != kNone) next_[static_cast<std::size_t>(last_[d])] = batch[i];
      last_[d] = batch[i];
      order.push_back(batch[i]);
    }
  }

  // rest = blend x own tail + (1 - blend) x rest, own tails from the end of the placed order.
  void own_tails(std::span<const NodeId> placed, std::vector<double>& rest) const {
    std::vector<double> own(dev_.size(), 0.0);
    for (auto it = placed.rbegin(); it != placed.rend(); ++it) {
      const NodeId v = *it;
      const auto vi = static_cast<std::size_t>(v);
      double t = 0;
      for_neighbours(v, true, [&](NodeId w, EdgeId e) {
        const auto wi = static_cast<std::size_t>(w);
        if (dev_[wi] < 0) return;
        t = std::max(t, transfer(e, dev_[vi], dev_[wi]) + cost_.compute(w, dev_[wi]) + own[wi]);
      });
      if (next_[vi] != kNone) {
        const auto w = static_cast<std::size_t>(next_[vi]);
        t = std::max(t, cost_.compute(next_[vi], dev_[w]) + own[w]);
      }
      own[vi] = t;
      rest[vi] = blend_ * t + (1 - blend_) * rest[vi];
    }
  }

  const Graph& g_;
  const CostModel& cost_;
  std::size_t p_;
  const std::vector<double>& rest_;
  const std::vector<DeviceId>& previous_;
  std::vector<double> follow_;
  bool backward_;
  double blend_, tau_ = 1;
  std::vector<DeviceId> dev_;
  std::vector<double> finish_;
  std::vector<std::int64_t> next_;  // the next op on the same device (kNone: none)
  std::vector<double> avail_;       // per device: when its last op finishes
  std::vector<std::int64_t> last_;  // per device: its last op (kNone: none)
  std::vector<double> arr_, score_;
};

}  // namespace

LevelPlan level_pass(const Problem& problem, const LevelSettings& s, std::vector<double>& rest,
                     std::vector<double>& heads, bool backward,
                     const std::vector<DeviceId>& previous) {
  const std::vector<double> given = rest;
  return Pass(problem, s, given, backward, previous).run(rest, heads);
}

LevelsPlacer::LevelsPlacer(LevelSettings s) : s_(s) {
  if (s.passes < 1 || !(s.tau > 0) || !std::isfinite(s.tau) || !(s.blend >= 0 && s.blend <= 1) ||
      s.chains < 0)
    throw InputError(
        "method levels: passes must be >= 1, tau > 0, blend in [0, 1] and chains >= 0");
}

namespace {

// A sequence of passes from the nominal times: forward, forward following the successors'
// devices of the previous pass, or forward and backward by turns.
enum class Sequence { forward, follow, alternate };

std::vector<Sequence> sequences_of(const LevelSettings& s) {
  std::vector<Sequence> out;
  if (s.sweeps != LevelSweeps::alternate) {
    out.push_back(Sequence::forward);
    if (s.follow) out.push_back(Sequence::follow);
  }
  if (s.sweeps != LevelSweeps::forward) out.push_back(Sequence::alternate);
  return out;
}

// Replaces `best` by its chain refinement (chain_refine.hpp) where that applies and simulates
// shorter (one call). Under a time limit, only where the seconds left exceed four passes' (a
// refinement took one to four passes' time on the random DAGs measured).
void refine_as_chains(const Problem& problem, const LevelSettings& s, BudgetedEvaluator& eval,
                      SimWorkspace& ws, Assignment& best, double best_ms, double pass_seconds) {
  if (s.chains == 0 || eval.seconds_left() < 4 * pass_seconds) return;
  ChainSettings cs;
  cs.sweeps = s.chains;
  std::optional<std::vector<DeviceId>> refined = refine_chains(problem, best.device_of, cs);
  if (!refined) return;
  const std::optional<double> ms = eval.makespan(*refined, ws);
  if (!ms || !(*ms < best_ms)) return;
  best.device_of = std::move(*refined);
  best.order.clear();
}

}  // namespace

PlaceResult LevelsPlacer::place_within(const Problem& problem, const PlaceOptions&,
                                       BudgetedEvaluator& eval) const {
  const Stopwatch clock;
  const Graph& g = problem.graph();
  // Forward passes read the time after each op (nominally b-level - compute), backward passes
  // the time before it (nominally the t-level); each pass refreshes both.
  std::vector<double> nominal_after = problem.analysis().b_level();
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    nominal_after[static_cast<std::size_t>(v)] -= problem.cost().compute(v);
  Assignment best{problem.devices(), {}, {}, name()};
  double best_ms = std::numeric_limits<double>::infinity();
  SimWorkspace ws;
  const std::vector<Sequence> seqs = sequences_of(s_);
  const auto n_seqs = static_cast<int>(seqs.size());
  for (int q = 0; q < n_seqs; ++q) {
    std::vector<double> after = nominal_after, before = problem.analysis().t_level();
    std::vector<DeviceId> previous;
    const int passes = s_.passes / n_seqs + (q < s_.passes % n_seqs ? 1 : 0);
    for (int k = 0; k < passes; ++k) {
      const bool backward = seqs[q] == Sequence::alternate && k % 2 == 1;
      LevelPlan plan = backward ? level_pass(problem, s_, before, after, true)
                                : level_pass(problem, s_, after, before, false, previous);
      if (seqs[q] == Sequence::follow) previous = plan.device_of;
      const std::optional<double> ms = eval.makespan(plan.device_of, ws);
      if (!ms && !best.device_of.empty()) return best;  // the budget is spent
      if (!ms || *ms < best_ms) {                       // the first plan is kept even unscored
        best.device_of = std::move(plan.device_of);
        best.order = std::move(plan.order);
        if (!ms) return best;
        best_ms = *ms;
      }
    }
  }
  refine_as_chains(problem, s_, eval, ws, best, best_ms, clock.seconds() / std::max(1, s_.passes));
  return best;
}

}  // namespace doppler
