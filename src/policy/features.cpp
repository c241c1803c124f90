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

namespace {

double clamp_log(double x) {
  if (!(x > 0)) return -kGlobalClamp;
  return std::clamp(std::log(x), -kGlobalClamp, kGlobalClamp);
}

// Mean transfer cost per edge (0 without edges).
double mean_transfer(const Graph& g, const CostModel& cost) {
  double t = 0;
  for (EdgeId k = 0; k < g.num_edges(); ++k) t += cost.transfer(k);
  return g.num_edges() > 0 ? t / g.num_edges() : 0.0;
}

// Raw node features (N x 5): compute, b-level, t-level, incoming and outgoing transfer.
std::vector<float> raw_node_features(const Graph& g, const CostModel& cost,
                                     const GraphAnalysis& an) {
  const int n = g.num_nodes();
  std::vector<float> m(static_cast<std::size_t>(n * kNodeFeatures), 0.0f);
  for (NodeId v = 0; v < n; ++v) {
    double in = 0, out = 0;
    for (EdgeId k : g.in_edges(v)) in += cost.transfer(k);
    for (EdgeId k = g.out_edge_begin(v);
         k < g.out_edge_begin(v) + static_cast<EdgeId>(g.successors(v).size()); ++k)
      out += cost.transfer(k);
    float* row = &m[static_cast<std::size_t>(v * kNodeFeatures)];
    row[0] = static_cast<float>(cost.compute(v));
    row[1] = static_cast<float>(an.b_level()[static_cast<std::size_t>(v)]);
    row[2] = static_cast<float>(an.t_level()[static_cast<std::size_t>(v)]);
    row[3] = static_cast<float>(in);
    row[4] = static_cast<float>(out);
  }
  return m;
}

// The scaled mode's node rows: 5 scaled columns, then the global features.
std::vector<float> scaled_node_features(const std::vector<float>& raw, int n, double unit,
                                        double cp, const std::vector<float>& global) {
  const int cols = kNodeFeatures + static_cast<int>(global.size());
  std::vector<float> m(static_cast<std::size_t>(n * cols));
  const double len = cp > 0 ? cp : 1.0;
  for (int v = 0; v < n; ++v) {
    const float* r = &raw[static_cast<std::size_t>(v * kNodeFeatures)];
    float* row = &m[static_cast<std::size_t>(v * cols)];
    row[0] = static_cast<float>(std::log1p(r[0] / unit));
    row[1] = static_cast<float>(std::log1p(r[3] / unit));
    row[2] = static_cast<float>(std::log1p(r[4] / unit));
    row[3] = static_cast<float>(r[1] / len);
    row[4] = static_cast<float>(r[2] / len);
    std::copy(global.begin(), global.end(), row + kNodeFeatures);
  }
  return m;
}

}  // namespace

double feature_unit(const Graph& g, const CostModel& cost) {
  double c = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) c += cost.compute(v);
  if (g.num_nodes() > 0 && c > 0) return c / g.num_nodes();
  const double t = mean_transfer(g, cost);
  return t > 0 ? t : 1.0;
}

std::vector<float> global_features(const Graph& g, const CostModel& cost, const GraphAnalysis& an,
                                   int devices) {
  const double unit = feature_unit(g, cost);
  const int p = std::max(1, devices);
  const double per_device = an.total_work() / p;
  return {
      static_cast<float>(clamp_log(mean_transfer(g, cost) / unit)),
      static_cast<float>(std::log2(static_cast<double>(p)) / 4.0),
      static_cast<float>(per_device > 0 ? clamp_log(an.critical_path_length() / per_device) : 0.0),
      static_cast<float>(std::log10(std::max(1, g.num_nodes())) / 4.0)};
}

void normalise_device_features(std::vector<float>& y, int p, FeatureMode mode, double unit) {
  if (mode == FeatureMode::zscore) {
    zscore_columns(y, p, kDeviceFeatures);
    return;
  }
  constexpr int cols = 2 * kDeviceFeatures;
  std::vector<float> out(static_cast<std::size_t>(p * cols));
  for (int c = 0; c < kDeviceFeatures; ++c) {
    float lo = y[static_cast<std::size_t>(c)];
    for (int d = 1; d < p; ++d)
      lo = std::min(lo, y[static_cast<std::size_t>(d * kDeviceFeatures + c)]);
    for (int d = 0; d < p; ++d)
      out[static_cast<std::size_t>(d * cols + kDeviceFeatures + c)] = static_cast<float>(
          std::log1p((y[static_cast<std::size_t>(d * kDeviceFeatures + c)] - lo) / unit));
  }
  // z-scores of the values in units (the 1e-6 of zscore_columns must not depend on the units).
  for (float& x : y) x = static_cast<float>(x / unit);
  zscore_columns(y, p, kDeviceFeatures);
  for (int d = 0; d < p; ++d)
    std::copy_n(&y[static_cast<std::size_t>(d * kDeviceFeatures)], kDeviceFeatures,
                &out[static_cast<std::size_t>(d * cols)]);
  y = std::move(out);
}

std::vector<int> path_to_exit(const GraphFeatures& f, int v) {
  std::vector<int> path;
  for (int u = v; u >= 0; u = f.b_next[static_cast<std::size_t>(u)]) path.push_back(u);
  return path;
}

std::vector<int> path_from_entry(const GraphFeatures& f, int v) {
  std::vector<int> path;
  for (int u = v; u >= 0; u = f.t_prev[static_cast<std::size_t>(u)]) path.push_back(u);
  std::reverse(path.begin(), path.end());
  return path;
}

GraphFeatures graph_features(const Graph& g, const CostModel& cost, const GraphAnalysis& an,
                             int devices, FeatureMode mode) {
  GraphFeatures f;
  const int n = g.num_nodes();
  const int e = g.num_edges();
  f.num_nodes = n;
  f.mode = mode;
  f.cols = node_feature_count(mode);
  const bool scaled = mode == FeatureMode::scaled;
  f.unit = scaled ? feature_unit(g, cost) : 1.0;
  f.node = raw_node_features(g, cost, an);
  if (scaled)
    f.node = scaled_node_features(f.node, n, f.unit, an.critical_path_length(),
                                  global_features(g, cost, an, devices));
  else
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
    f.edge[a] = f.edge[b] =
        static_cast<float>(scaled ? std::log1p(cost.transfer(k) / f.unit) : cost.transfer(k));
  }
  if (!scaled) zscore_columns(f.edge, 2 * e, 1);

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
  f.b_next = std::move(next);
  f.t_prev = std::move(prev);
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
