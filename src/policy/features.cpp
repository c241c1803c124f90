#include "doppler/policy/features.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace doppler {

void zscore_columns(std::vector<float>& m, int rows, int cols) {
  for (int c = 0; c < cols; ++c) {
    double mean = 0, var = 0;
    for (int r = 0; r < rows; ++r) mean += m[static_cast<std::size_t>(r * cols + c)];
    mean /= std::max(1, rows);
    for (int r = 0; r < rows; ++r) {
      const double d = m[static_cast<std::size_t>(r * cols + c)] - mean;
      var += d * d;
    }
    const double sd = std::sqrt(var / std::max(1, rows));
    for (int r = 0; r < rows; ++r) {
      float& x = m[static_cast<std::size_t>(r * cols + c)];
      x = static_cast<float>((x - mean) / (sd + 1e-6));
    }
  }
}

GraphFeatures graph_features(const Graph& g, const CostModel& cost, const GraphAnalysis& an) {
  GraphFeatures f;
  const int n = g.num_nodes();
  const int e = g.num_edges();
  f.num_nodes = n;
  f.node.assign(static_cast<std::size_t>(n * kNodeFeatures), 0.0f);
  for (NodeId v = 0; v < n; ++v) {
    double in = 0, out = 0;
    for (EdgeId k : g.in_edges(v)) in += cost.transfer(k);
    for (EdgeId k = g.out_edge_begin(v);
         k < g.out_edge_begin(v) + static_cast<EdgeId>(g.successors(v).size()); ++k)
      out += cost.transfer(k);
    float* row = &f.node[static_cast<std::size_t>(v * kNodeFeatures)];
    row[0] = static_cast<float>(cost.compute(v));
    row[1] = static_cast<float>(an.b_level()[static_cast<std::size_t>(v)]);
    row[2] = static_cast<float>(an.t_level()[static_cast<std::size_t>(v)]);
    row[3] = static_cast<float>(in);
    row[4] = static_cast<float>(out);
  }
  zscore_columns(f.node, n, kNodeFeatures);

  f.edge_src.resize(static_cast<std::size_t>(2 * e));
  f.edge_dst.resize(static_cast<std::size_t>(2 * e));
  f.edge.resize(static_cast<std::size_t>(2 * e));
  for (EdgeId k = 0; k < e; ++k) {
    const Edge& ed = g.edge(k);
    const auto a = static_cast<std::size_t>(k), b = static_cast<std::size_t>(k + e);
    f.edge_src[a] = ed.src;
    f.edge_dst[a] = ed.dst;
    f.edge_src[b] = ed.dst;
    f.edge_dst[b] = ed.src;
    f.edge[a] = f.edge[b] = static_cast<float>(cost.transfer(k));
  }
  zscore_columns(f.edge, 2 * e, 1);

  // Longest paths: next hop to an exit realising the b-level, previous hop from an entry
  // realising the t-level (ties: lowest id).
  const auto& bl = an.b_level();
  const auto& tl = an.t_level();
  std::vector<NodeId> next(static_cast<std::size_t>(n), -1), prev(static_cast<std::size_t>(n), -1);
  for (NodeId v = 0; v < n; ++v) {
    double best = -std::numeric_limits<double>::infinity();
    const auto succ = g.successors(v);
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const double via = cost.transfer(g.out_edge_begin(v) + static_cast<EdgeId>(i)) +
                         bl[static_cast<std::size_t>(succ[i])];
      if (via > best) {
        best = via;
        next[static_cast<std::size_t>(v)] = succ[i];
      }
    }
    best = -std::numeric_limits<double>::infinity();
    for (EdgeId k : g.in_edges(v)) {
      const NodeId u = g.edge(k).src;
      const double via = tl[static_cast<std::size_t>(u)] + cost.compute(u) + cost.transfer(k);
      if (via > best || (via == best && u < prev[static_cast<std::size_t>(v)])) {
        best = via;
        prev[static_cast<std::size_t>(v)] = u;
      }
    }
  }
  f.b_path.assign(static_cast<std::size_t>(n), {});
  f.t_path.assign(static_cast<std::size_t>(n), {});
  for (NodeId v = 0; v < n; ++v) {
    for (NodeId u = v; u >= 0; u = next[static_cast<std::size_t>(u)])
      f.b_path[static_cast<std::size_t>(v)].push_back(u);
    std::vector<int>& t = f.t_path[static_cast<std::size_t>(v)];
    for (NodeId u = v; u >= 0; u = prev[static_cast<std::size_t>(u)]) t.push_back(u);
    std::reverse(t.begin(), t.end());
  }
  return f;
}

std::vector<float> device_features(const ListSchedule& s, NodeId v) {
  const Graph& g = s.graph();
  const CostModel& cost = s.cost();
  const int p = s.devices();
  std::vector<float> y(static_cast<std::size_t>(p * kDeviceFeatures), 0.0f);
  std::vector<double> parent_compute(static_cast<std::size_t>(p), 0.0),
      min_start(static_cast<std::size_t>(p), -1.0), max_finish(static_cast<std::size_t>(p), 0.0);
  for (NodeId u : g.predecessors(v)) {
    if (s.device(u) < 0) continue;  // a deferred input: it goes wherever v goes
    const auto d = static_cast<std::size_t>(s.device(u));
    parent_compute[d] += cost.compute(u, s.device(u));
    min_start[d] = min_start[d] < 0 ? s.start(u) : std::min(min_start[d], s.start(u));
    max_finish[d] = std::max(max_finish[d], s.finish(u));
  }
  for (DeviceId d = 0; d < p; ++d) {
    float* row = &y[static_cast<std::size_t>(d * kDeviceFeatures)];
    const auto du = static_cast<std::size_t>(d);
    row[0] = static_cast<float>(s.load(d));
    row[1] = static_cast<float>(parent_compute[du]);
    row[2] = static_cast<float>(std::max(0.0, min_start[du]));
    row[3] = static_cast<float>(max_finish[du]);
    row[4] = static_cast<float>(s.earliest_start(v, d));
  }
  return y;
}

}  // namespace doppler
