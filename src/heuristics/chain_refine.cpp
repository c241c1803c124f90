// Chain refinement (chain_refine.hpp): matchings of ops to the input they receive on their own
// device, improved level by level under the longest-path model of one chain per device.
#include "doppler/heuristics/chain_refine.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>

#include "doppler/graph/analysis.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/min_cost_matching.hpp"

namespace doppler {

namespace {

constexpr NodeId kNone = -1;
constexpr double kMaxExponent = 60;      // exp() argument clamp: finite costs
constexpr std::size_t kMaxInputs = 256;  // a level with more candidate inputs keeps its matching

// Each op's level (hop_levels) where chains_apply(problem), else nullopt.
std::optional<std::vector<int>> chain_levels(const Problem& problem) {
  if (!problem.cost().uniform() || problem.devices() < 2) return std::nullopt;
  std::vector<int> level = hop_levels(problem.graph());
  std::vector<int> width;
  for (int l : level) {
    if (width.size() <= static_cast<std::size_t>(l)) width.resize(static_cast<std::size_t>(l) + 1);
    if (++width[static_cast<std::size_t>(l)] > problem.devices()) return std::nullopt;
  }
  return level;
}

// The matchings and the longest-path times they give; `level`: each op's (chain_levels).
class ChainModel {
public:
  ChainModel(const Problem& problem, std::vector<int> level, double tau)
      : g_(problem.graph()),
        cost_(problem.cost()),
        level_(std::move(level)),
        in_(static_cast<std::size_t>(g_.num_nodes()), kNone),
        out_(in_.size(), kNone),
        head_(in_.size(), 0.0),
        tail_(in_.size(), 0.0) {
    int depth = 0;
    for (int l : level_) depth = std::max(depth, l + 1);
    levels_.resize(static_cast<std::size_t>(depth));
    for (NodeId v : g_.topo_order()) levels_[static_cast<std::size_t>(level_[idx(v)])].push_back(v);
    double mean = 0;
    for (NodeId v = 0; v < g_.num_nodes(); ++v) mean += compute(v);
    mean /= std::max(1, g_.num_nodes());
    tau_ = tau * (mean > 0 ? mean : 1.0);
  }

  // Matches each op, in topological order, to the input on its own device (not yet matched to
  // another op) whose data would arrive last by transfer.
  void match_from(const std::vector<DeviceId>& device_of) {
    if (device_of.size() != in_.size())
      throw InputError("chain model: the placement has " + std::to_string(device_of.size()) +
                       " entries for " + std::to_string(in_.size()) + " ops");
    for (NodeId v : g_.topo_order()) {
      double latest = -1;
      const auto preds = g_.predecessors(v);
      const auto edges = g_.in_edges(v);
      for (std::size_t i = 0; i < preds.size(); ++i) {
        const NodeId u = preds[i];
        if (device_of[idx(u)] != device_of[idx(v)] || out_[idx(u)] != kNone) continue;
        const double arrival = head_[idx(u)] + transfer(edges[i]);
        if (arrival > latest) latest = arrival, in_[idx(v)] = u;
      }
      if (in_[idx(v)] != kNone) out_[idx(in_[idx(v)])] = v;
      head_[idx(v)] = head_of(v);
    }
    tails();
  }

  void heads() {
    for (NodeId v : g_.topo_order()) head_[idx(v)] = head_of(v);
  }
  void tails() {
    const auto& topo = g_.topo_order();
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) tail_[idx(*it)] = tail_of(*it);
  }
  double makespan() const { return *std::max_element(head_.begin(), head_.end()); }

  // Re-matches every level from the sources on (heads current before, tails after).
  void sweep_forward() {
    for (std::size_t l = 1; l < levels_.size(); ++l) {
      match_level(l);
      for (NodeId v : levels_[l]) head_[idx(v)] = head_of(v);
    }
    tails();
  }
  // Re-matches every level from the sinks back (tails current before, heads after).
  void sweep_backward() {
    for (std::size_t l = levels_.size(); l-- > 1;) {
      for (NodeId v : levels_[l]) tail_[idx(v)] = tail_of(v);
      match_level(l);
    }
    heads();
    tails();
  }

  std::pair<std::vector<NodeId>, std::vector<NodeId>> matching() const { return {in_, out_}; }
  void set_matching(std::pair<std::vector<NodeId>, std::vector<NodeId>> m) {
    in_ = std::move(m.first);
    out_ = std::move(m.second);
    heads();
    tails();
  }

  // Devices of the chains, in order of their first op's start, each the device free earliest
  // (ties: the lowest id).
  std::vector<DeviceId> devices(int p) const {
    std::vector<NodeId> by_start(g_.topo_order());
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](NodeId a, NodeId b) { return start(a) < start(b); });
    using Free = std::pair<double, DeviceId>;  // (free from, device)
    std::priority_queue<Free, std::vector<Free>, std::greater<>> free;
    for (DeviceId d = 0; d < p; ++d) free.emplace(-std::numeric_limits<double>::infinity(), d);
    std::vector<DeviceId> dev(in_.size(), 0);
    for (NodeId v : by_start) {
      if (in_[idx(v)] != kNone) {
        dev[idx(v)] = dev[idx(in_[idx(v)])];
      } else if (free.empty()) {  // more chains at once than devices: the model breaks
        dev[idx(v)] = static_cast<DeviceId>(idx(v) % static_cast<std::size_t>(p));
      } else {
        dev[idx(v)] = free.top().second;
        free.pop();
      }
      if (out_[idx(v)] == kNone) free.emplace(head_[idx(v)], dev[idx(v)]);
    }
    return dev;
  }

private:
  static std::size_t idx(NodeId v) { return static_cast<std::size_t>(v); }
  double compute(NodeId v) const { return cost_.compute(v, 0); }
  double transfer(EdgeId e) const { return cost_.transfer(e, 0, 1); }
  double start(NodeId v) const { return head_[idx(v)] - compute(v); }

  double head_of(NodeId v) const {
    double at = 0;
    const auto preds = g_.predecessors(v);
    const auto edges = g_.in_edges(v);
    for (std::size_t i = 0; i < preds.size(); ++i)
      at = std::max(at, head_[idx(preds[i])] + (in_[idx(v)] == preds[i] ? 0 : transfer(edges[i])));
    return at + compute(v);
  }
  double tail_of(NodeId v) const {
    double after = 0;
    const auto succ = g_.successors(v);
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const EdgeId e = g_.out_edge_begin(v) + static_cast<EdgeId>(i);
      after = std::max(after, tail_[idx(succ[i])] + (out_[idx(v)] == succ[i] ? 0 : transfer(e)));
    }
    return compute(v) + after;
  }

  // An edge into the level: its input's row, its op's column, h + t and the transfer x.
  struct Candidate {
    std::size_t row, col;
    double path, x;
  };

  // Re-matches the edges into level l (see refine_chains); inputs matched to an op of another
  // level keep their match.
  void match_level(std::size_t l) {
    const std::vector<NodeId>& ops = levels_[l];
    rows_.clear();
    cands_.clear();
    double ref = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const NodeId v = ops[j];
      const auto preds = g_.predecessors(v);
      const auto edges = g_.in_edges(v);
      for (std::size_t i = 0; i < preds.size(); ++i) {
        const NodeId u = preds[i];
        const NodeId w = out_[idx(u)];
        if (w != kNone && level_[idx(w)] != static_cast<int>(l)) continue;
        const auto at = std::find(rows_.begin(), rows_.end(), u);
        const auto row = static_cast<std::size_t>(at - rows_.begin());
        if (at == rows_.end()) rows_.push_back(u);
        cands_.push_back({row, j, head_[idx(u)] + tail_[idx(v)], transfer(edges[i])});
        ref = std::max(ref, cands_.back().path + cands_.back().x);
      }
    }
    if (rows_.empty() || rows_.size() > kMaxInputs) return;
    const std::size_t n = rows_.size(), m = ops.size() + n;  // n columns: no match
    cost_matrix_.assign(n * m, 0.0);
    for (const Candidate& c : cands_) {
      const double hi = std::clamp((c.path + c.x - ref) / tau_, -kMaxExponent, kMaxExponent);
      const double lo = std::clamp((c.path - ref) / tau_, -kMaxExponent, kMaxExponent);
      double& cell = cost_matrix_[c.row * m + c.col];
      cell = std::min(cell, std::exp(lo) - std::exp(hi));
    }
    const std::vector<int> match =
        min_cost_matching(cost_matrix_, static_cast<int>(n), static_cast<int>(m));
    for (NodeId u : rows_) out_[idx(u)] = kNone;
    for (NodeId v : ops) in_[idx(v)] = kNone;
    for (std::size_t r = 0; r < n; ++r) {
      const auto c = static_cast<std::size_t>(match[r]);
      if (c >= ops.size() || !(cost_matrix_[r * m + c] < 0)) continue;
      out_[idx(rows_[r])] = ops[c];
      in_[idx(ops[c])] = rows_[r];
    }
  }

  const Graph& g_;
  const CostModel& cost_;
  std::vector<int> level_;
  std::vector<std::vector<NodeId>> levels_;
  std::vector<NodeId> in_, out_;     // matched input / output of each op (kNone: none)
  std::vector<double> head_, tail_;  // finish of each op; time from its start to the end
  double tau_ = 1;
  std::vector<NodeId> rows_;  // scratch of match_level
  std::vector<Candidate> cands_;
  std::vector<double> cost_matrix_;
};

}  // namespace

bool chains_apply(const Problem& problem) {
  return chain_levels(problem).has_value();
}

double chain_makespan(const Problem& problem, const std::vector<DeviceId>& device_of) {
  std::optional<std::vector<int>> level = chain_levels(problem);
  if (!level) throw InputError("chain model: the problem has no room for chains");
  ChainModel model(problem, std::move(*level), 1);
  model.match_from(device_of);
  return model.makespan();
}

std::optional<std::vector<DeviceId>> refine_chains(const Problem& problem,
                                                   const std::vector<DeviceId>& device_of,
                                                   const ChainSettings& s) {
  if (s.sweeps < 1 || !(s.tau > 0) || !std::isfinite(s.tau))
    throw InputError("chain refinement: sweeps must be >= 1 and tau > 0");
  std::optional<std::vector<int>> level = chain_levels(problem);
  if (!level) return std::nullopt;
  ChainModel model(problem, std::move(*level), s.tau);
  model.match_from(device_of);
  double best = model.makespan();
  auto best_matching = model.matching();
  for (int k = 0; k < s.sweeps; ++k) {
    model.sweep_forward();
    model.sweep_backward();
    if (!(model.makespan() < best)) break;
    best = model.makespan();
    best_matching = model.matching();
  }
  model.set_matching(std::move(best_matching));
  return model.devices(problem.devices());
}

}  // namespace doppler
