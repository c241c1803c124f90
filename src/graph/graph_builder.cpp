#include "doppler/graph/graph_builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include <fmt/format.h>

namespace doppler {

namespace {

void check_number(double x, const char* what, NodeId v) {
  if (std::isnan(x)) throw GraphError(fmt::format("node {}: {} is NaN", v, what), v, -1);
  if (std::isinf(x)) throw GraphError(fmt::format("node {}: {} is infinite", v, what), v, -1);
  if (x < 0) throw GraphError(fmt::format("node {}: {} is negative ({})", v, what, x), v, -1);
}

// Names the nodes of one cycle among `remaining` (nodes Kahn's algorithm could not order).
std::string describe_cycle(const Graph& g, const std::vector<EdgeId>& pred_offset,
                           const std::vector<NodeId>& pred, const std::vector<char>& remaining) {
  NodeId start = -1;
  for (std::size_t v = 0; v < remaining.size(); ++v)
    if (remaining[v]) {
      start = static_cast<NodeId>(v);
      break;
    }
  // Every remaining node has a remaining predecessor: walk backwards until a node repeats.
  std::vector<int> seen_at(remaining.size(), -1);
  std::vector<NodeId> walk;
  NodeId v = start;
  while (seen_at[static_cast<std::size_t>(v)] < 0) {
    seen_at[static_cast<std::size_t>(v)] = static_cast<int>(walk.size());
    walk.push_back(v);
    NodeId next = -1;
    for (auto i = pred_offset[static_cast<std::size_t>(v)];
         i < pred_offset[static_cast<std::size_t>(v) + 1]; ++i)
      if (remaining[static_cast<std::size_t>(pred[static_cast<std::size_t>(i)])]) {
        next = pred[static_cast<std::size_t>(i)];
        break;
      }
    v = next;
  }
  std::vector<NodeId> cycle(walk.begin() + seen_at[static_cast<std::size_t>(v)], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // walked against the edges
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string out;
  const std::size_t shown = std::min<std::size_t>(cycle.size(), 12);
  for (std::size_t i = 0; i < shown; ++i) {
    const NodeId c = cycle[i];
    out += fmt::format("{}{}", i ? " -> " : "", c);
    if (!g.node(c).name.empty()) out += "(" + g.node(c).name + ")";
  }
  if (shown < cycle.size()) out += fmt::format(" -> ... ({} ops)", cycle.size());
  out += fmt::format(" -> {}", cycle.front());
  return out;
}

}  // namespace

NodeId GraphBuilder::add_node(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<NodeId>(nodes_.size() - 1);
}

void GraphBuilder::add_edge(std::int64_t src, std::int64_t dst, std::optional<double> bytes,
                            std::optional<double> transfer_cost) {
  raw_edges_.push_back(
      {src, dst, bytes, transfer_cost, static_cast<std::int64_t>(raw_edges_.size())});
}

Graph GraphBuilder::build() {
  Graph g;
  const auto n = static_cast<std::int64_t>(nodes_.size());
  if (n > std::numeric_limits<NodeId>::max() - 1)
    throw GraphError(fmt::format("graph has {} nodes, more than supported", n), -1, -1);
  if (raw_edges_.size() > static_cast<std::size_t>(std::numeric_limits<EdgeId>::max() - 1))
    throw GraphError(fmt::format("graph has {} edges, more than supported", raw_edges_.size()), -1,
                     -1);

  bool all_ref = n > 0;
  for (NodeId v = 0; v < n; ++v) {
    const Node& nd = nodes_[static_cast<std::size_t>(v)];
    check_number(nd.flops, "flops", v);
    check_number(nd.out_bytes, "out_bytes", v);
    if (nd.compute_cost) check_number(*nd.compute_cost, "compute_cost", v);
    if (nd.transfer_cost) check_number(*nd.transfer_cost, "transfer_cost", v);
    if (nd.group < -1)
      throw GraphError(fmt::format("node {}: group {} is negative", v, nd.group), v, -1);
    all_ref = all_ref && nd.compute_cost;
  }

  for (const RawEdge& e : raw_edges_) {
    for (const std::int64_t end : {e.src, e.dst})
      if (end < 0 || end >= n)
        throw GraphError(fmt::format("edge {}->{}: unknown node {} (valid ids are 0..{})", e.src,
                                     e.dst, end, n - 1),
                         -1, e.index);
    if (e.src == e.dst)
      throw GraphError(fmt::format("edge {}->{} is a self-loop", e.src, e.dst), -1, e.index);
    if (e.bytes && (!std::isfinite(*e.bytes) || *e.bytes < 0))
      throw GraphError(fmt::format("edge {}->{}: bytes must be finite and >= 0, found {}", e.src,
                                   e.dst, *e.bytes),
                       -1, e.index);
    if (e.transfer_cost && (!std::isfinite(*e.transfer_cost) || *e.transfer_cost < 0))
      throw GraphError(fmt::format("edge {}->{}: transfer_cost must be finite and >= 0, found {}",
                                   e.src, e.dst, *e.transfer_cost),
                       -1, e.index);
  }

  std::stable_sort(raw_edges_.begin(), raw_edges_.end(), [](const RawEdge& a, const RawEdge& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  duplicates_ = 0;
  g.edges_.reserve(raw_edges_.size());
  for (const RawEdge& e : raw_edges_) {
    const auto src = static_cast<NodeId>(e.src), dst = static_cast<NodeId>(e.dst);
    if (!g.edges_.empty() && g.edges_.back().src == src && g.edges_.back().dst == dst) {
      ++duplicates_;
      auto& kept = g.edges_.back().bytes;
      if (e.bytes && (!kept || *e.bytes > *kept)) kept = e.bytes;
      auto& kept_cost = g.edges_.back().transfer_cost;
      if (e.transfer_cost && (!kept_cost || *e.transfer_cost > *kept_cost))
        kept_cost = e.transfer_cost;
      continue;
    }
    g.edges_.push_back(Edge{src, dst, e.bytes, e.transfer_cost});
  }
  // Reference costs: a compute cost per node, a transfer cost per edge (own or producer's).
  for (const Edge& e : g.edges_) {
    g.has_edge_transfer_costs_ = g.has_edge_transfer_costs_ || e.transfer_cost.has_value();
    all_ref = all_ref && (e.transfer_cost || nodes_[static_cast<std::size_t>(e.src)].transfer_cost);
  }

  const auto un = static_cast<std::size_t>(n);
  const std::size_t m = g.edges_.size();
  g.succ_offset_.assign(un + 1, 0);
  g.pred_offset_.assign(un + 1, 0);
  for (const Edge& e : g.edges_) {
    ++g.succ_offset_[static_cast<std::size_t>(e.src) + 1];
    ++g.pred_offset_[static_cast<std::size_t>(e.dst) + 1];
  }
  for (std::size_t v = 0; v < un; ++v) {
    g.succ_offset_[v + 1] += g.succ_offset_[v];
    g.pred_offset_[v + 1] += g.pred_offset_[v];
  }
  g.succ_.resize(m);
  g.pred_.resize(m);
  g.pred_edge_.resize(m);
  std::vector<EdgeId> fill(g.pred_offset_.begin(), g.pred_offset_.end() - 1);
  for (std::size_t e = 0; e < m; ++e) {
    const Edge& ed = g.edges_[e];
    g.succ_[e] = ed.dst;  // edges are sorted by src, so edge e is the e-th successor slot
    const auto slot = static_cast<std::size_t>(fill[static_cast<std::size_t>(ed.dst)]++);
    g.pred_[slot] = ed.src;
    g.pred_edge_[slot] = static_cast<EdgeId>(e);
  }

  // Kahn's algorithm, smallest ready id first (a canonical order).
  std::vector<int> indeg(un);
  for (std::size_t v = 0; v < un; ++v) indeg[v] = g.pred_offset_[v + 1] - g.pred_offset_[v];
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (std::size_t v = 0; v < un; ++v) {
    if (indeg[v] == 0) {
      ready.push(static_cast<NodeId>(v));
      g.sources_.push_back(static_cast<NodeId>(v));
    }
    if (g.succ_offset_[v + 1] == g.succ_offset_[v]) g.sinks_.push_back(static_cast<NodeId>(v));
  }
  g.topo_.reserve(un);
  while (!ready.empty()) {
    const NodeId v = ready.top();
    ready.pop();
    g.topo_.push_back(v);
    for (auto i = g.succ_offset_[static_cast<std::size_t>(v)];
         i < g.succ_offset_[static_cast<std::size_t>(v) + 1]; ++i) {
      const NodeId w = g.succ_[static_cast<std::size_t>(i)];
      if (--indeg[static_cast<std::size_t>(w)] == 0) ready.push(w);
    }
  }
  g.nodes_ = std::move(nodes_);
  if (g.topo_.size() != un) {
    std::vector<char> remaining(un, 1);
    for (NodeId v : g.topo_) remaining[static_cast<std::size_t>(v)] = 0;
    const std::string cycle = describe_cycle(g, g.pred_offset_, g.pred_, remaining);
    nodes_.clear();
    raw_edges_.clear();
    throw GraphError("the graph has a cycle: " + cycle, -1, -1);
  }
  g.topo_rank_.assign(un, 0);
  for (std::size_t i = 0; i < un; ++i)
    g.topo_rank_[static_cast<std::size_t>(g.topo_[i])] = static_cast<int>(i);
  g.has_reference_costs_ = all_ref;
  g.meta_ = std::move(meta_);
  nodes_.clear();
  raw_edges_.clear();
  meta_ = {};
  return g;
}

}  // namespace doppler
