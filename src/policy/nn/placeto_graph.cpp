#include "policy/nn/placeto_graph.hpp"

#include <algorithm>

#include "doppler/policy/features.hpp"

namespace doppler::nn {

namespace {

torch::Tensor long_tensor(const std::vector<std::int64_t>& v) {
  return torch::from_blob(const_cast<std::int64_t*>(v.data()),
                          {static_cast<std::int64_t>(v.size())}, torch::kLong)
      .clone();
}

bool test_bit(const std::uint64_t* row, int u) {
  return (row[u >> 6] >> (u & 63)) & 1u;
}

}  // namespace

PlacetoGraph make_placeto_graph(const Graph& g, const CostModel& cost) {
  PlacetoGraph p;
  const int n = g.num_nodes();
  p.num_nodes = n;
  std::vector<float> x(static_cast<std::size_t>(n * kPlacetoStatic), 0.0f);
  std::vector<float> has_parent(static_cast<std::size_t>(n)),
      has_child(static_cast<std::size_t>(n));
  std::vector<std::int64_t> src, dst;
  for (NodeId v = 0; v < n; ++v) {
    double out = 0;
    const auto succ = g.successors(v);
    for (std::size_t i = 0; i < succ.size(); ++i) {
      out = std::max(out, cost.transfer(g.out_edge_begin(v) + static_cast<EdgeId>(i)));
      src.push_back(v);
      dst.push_back(succ[i]);
    }
    x[static_cast<std::size_t>(v * kPlacetoStatic)] = static_cast<float>(cost.compute(v));
    x[static_cast<std::size_t>(v * kPlacetoStatic + 1)] = static_cast<float>(out);
    has_parent[static_cast<std::size_t>(v)] = g.predecessors(v).empty() ? 0.0f : 1.0f;
    has_child[static_cast<std::size_t>(v)] = succ.empty() ? 0.0f : 1.0f;
  }
  zscore_columns(x, n, kPlacetoStatic);
  p.x = torch::from_blob(x.data(), {n, kPlacetoStatic}, torch::kFloat).clone();
  p.edge_src = long_tensor(src);
  p.edge_dst = long_tensor(dst);
  p.has_parent = torch::from_blob(has_parent.data(), {n, 1}, torch::kFloat).clone();
  p.has_child = torch::from_blob(has_child.data(), {n, 1}, torch::kFloat).clone();

  // Reachability: ancestors in topological order, descendants in reverse.
  p.words = (n + 63) / 64;
  const auto w = static_cast<std::size_t>(p.words);
  p.anc.assign(static_cast<std::size_t>(n) * w, 0);
  p.desc.assign(static_cast<std::size_t>(n) * w, 0);
  const auto& topo = g.topo_order();
  for (NodeId v : topo) {
    std::uint64_t* row = &p.anc[static_cast<std::size_t>(v) * w];
    for (NodeId u : g.predecessors(v)) {
      const std::uint64_t* pr = &p.anc[static_cast<std::size_t>(u) * w];
      for (std::size_t k = 0; k < w; ++k) row[k] |= pr[k];
      row[u >> 6] |= std::uint64_t{1} << (u & 63);
    }
  }
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const NodeId v = *it;
    std::uint64_t* row = &p.desc[static_cast<std::size_t>(v) * w];
    for (NodeId u : g.successors(v)) {
      const std::uint64_t* cr = &p.desc[static_cast<std::size_t>(u) * w];
      for (std::size_t k = 0; k < w; ++k) row[k] |= cr[k];
      row[u >> 6] |= std::uint64_t{1} << (u & 63);
    }
  }
  return p;
}

void placeto_masks(const PlacetoGraph& g, NodeId v, bool mean, float* out) {
  const int n = g.num_nodes;
  const std::uint64_t* a = &g.anc[static_cast<std::size_t>(v) * static_cast<std::size_t>(g.words)];
  const std::uint64_t* d = &g.desc[static_cast<std::size_t>(v) * static_cast<std::size_t>(g.words)];
  float* pa = out;
  float* ch = out + n;
  float* pr = out + 2 * n;
  int na = 0, nd = 0, nr = 0;
  for (int u = 0; u < n; ++u) {
    const bool is_a = test_bit(a, u), is_d = test_bit(d, u);
    const bool is_r = !is_a && !is_d && u != v;
    pa[u] = is_a ? 1.0f : 0.0f;
    ch[u] = is_d ? 1.0f : 0.0f;
    pr[u] = is_r ? 1.0f : 0.0f;
    na += is_a;
    nd += is_d;
    nr += is_r;
  }
  if (!mean) return;
  const auto scale = [n](float* row, int count) {
    if (count > 0)
      for (int u = 0; u < n; ++u) row[u] /= static_cast<float>(count);
  };
  scale(pa, na);
  scale(ch, nd);
  scale(pr, nr);
}

}  // namespace doppler::nn
