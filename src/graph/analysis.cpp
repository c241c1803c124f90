#include "doppler/graph/analysis.hpp"

#include <algorithm>
#include <limits>

namespace doppler {

namespace {

// Longest path where node v costs node_cost[v] and edges cost nothing.
double longest_path(const Graph& g, const std::vector<double>& node_cost) {
  std::vector<double> finish(node_cost.size(), 0.0);
  double best = 0;
  for (NodeId v : g.topo_order()) {
    double start = 0;
    for (NodeId p : g.predecessors(v)) start = std::max(start, finish[static_cast<std::size_t>(p)]);
    finish[static_cast<std::size_t>(v)] = start + node_cost[static_cast<std::size_t>(v)];
    best = std::max(best, finish[static_cast<std::size_t>(v)]);
  }
  return best;
}

}  // namespace

GraphAnalysis::GraphAnalysis(const Graph& g, const CostModel& cost) : cost_(&cost), graph_(&g) {
  const auto n = static_cast<std::size_t>(g.num_nodes());
  b_level_.assign(n, 0.0);
  t_level_.assign(n, 0.0);
  const auto& topo = g.topo_order();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const NodeId v = *it;
    double tail = 0;
    const EdgeId e0 = g.out_edge_begin(v);
    const auto succ = g.successors(v);
    for (std::size_t i = 0; i < succ.size(); ++i)
      tail = std::max(tail, cost.transfer(e0 + static_cast<EdgeId>(i)) +
                                b_level_[static_cast<std::size_t>(succ[i])]);
    b_level_[static_cast<std::size_t>(v)] = cost.compute(v) + tail;
  }
  for (NodeId v : topo) {
    double t = 0;
    const auto preds = g.predecessors(v);
    const auto in = g.in_edges(v);
    for (std::size_t i = 0; i < preds.size(); ++i) {
      const NodeId p = preds[i];
      t = std::max(t,
                   t_level_[static_cast<std::size_t>(p)] + cost.compute(p) + cost.transfer(in[i]));
    }
    t_level_[static_cast<std::size_t>(v)] = t;
  }

  std::vector<double> nominal(n);
  for (std::size_t v = 0; v < n; ++v) {
    nominal[v] = cost.compute(static_cast<NodeId>(v));
    total_work_ += nominal[v];
  }
  cp_zero_ = longest_path(g, nominal);

  // Critical path: start at the entry with the largest b-level, then repeatedly follow the child
  // that realises the b-level (ties: lowest id).
  NodeId cur = -1;
  for (NodeId s : g.sources())
    if (cur < 0 || b_level_[static_cast<std::size_t>(s)] > b_level_[static_cast<std::size_t>(cur)])
      cur = s;
  if (cur >= 0) cp_length_ = b_level_[static_cast<std::size_t>(cur)];
  while (cur >= 0) {
    critical_path_.push_back(cur);
    NodeId next = -1;
    double best = -std::numeric_limits<double>::infinity();
    const EdgeId e0 = g.out_edge_begin(cur);
    const auto succ = g.successors(cur);
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const double via =
          cost.transfer(e0 + static_cast<EdgeId>(i)) + b_level_[static_cast<std::size_t>(succ[i])];
      if (via > best) {
        best = via;
        next = succ[i];
      }
    }
    cur = next;
  }
}

double GraphAnalysis::lower_bound(int p) const {
  cost_->check_devices(p);
  if (cost_->uniform()) return std::max(cp_zero_, total_work_ / p);
  const Graph& g = *graph_;
  const auto n = static_cast<std::size_t>(g.num_nodes());
  std::vector<double> fastest(n);
  double work = 0;
  for (std::size_t v = 0; v < n; ++v) {
    double f = std::numeric_limits<double>::infinity();
    for (DeviceId d = 0; d < p; ++d) f = std::min(f, cost_->compute(static_cast<NodeId>(v), d));
    fastest[v] = f;
    work += f;
  }
  int slots = 0;
  for (DeviceId d = 0; d < p; ++d) slots += cost_->slots(d);
  return std::max(longest_path(g, fastest), work / slots);
}

std::vector<int> hop_levels(const Graph& g) {
  std::vector<int> level(static_cast<std::size_t>(g.num_nodes()), 0);
  for (NodeId v : g.topo_order())
    for (NodeId u : g.predecessors(v))
      level[static_cast<std::size_t>(v)] =
          std::max(level[static_cast<std::size_t>(v)], level[static_cast<std::size_t>(u)] + 1);
  return level;
}

}  // namespace doppler
