#include "policy/nn/graph_tensors.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace doppler::nn {

namespace {
torch::Tensor to_long(const std::vector<std::int64_t>& v) {
  return torch::from_blob(const_cast<std::int64_t*>(v.data()),
                          {static_cast<std::int64_t>(v.size())}, torch::kLong)
      .clone();
}
}  // namespace

namespace {

// Euler tour of the forest where v's parent is parent[v], the node after v on its path (-1: a
// root).
PathTour make_tour(const std::vector<int>& parent_of) {
  const auto n = static_cast<int>(parent_of.size());
  std::vector<std::vector<int>> children(static_cast<std::size_t>(n));
  std::vector<int> roots;
  for (int v = 0; v < n; ++v) {
    const int parent = parent_of[static_cast<std::size_t>(v)];
    (parent < 0 ? roots : children[static_cast<std::size_t>(parent)]).push_back(v);
  }
  std::vector<std::int64_t> node, entry(static_cast<std::size_t>(n), -1);
  std::vector<float> sign;
  node.reserve(2 * static_cast<std::size_t>(n));
  sign.reserve(2 * static_cast<std::size_t>(n));
  std::vector<std::pair<int, std::size_t>> stack;  // (node, next child index)
  for (int r : roots) {
    stack.push_back({r, 0});
    entry[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(node.size());
    node.push_back(r);
    sign.push_back(1.0f);
    while (!stack.empty()) {
      auto& [u, i] = stack.back();
      const auto& ch = children[static_cast<std::size_t>(u)];
      if (i < ch.size()) {
        const int c = ch[i++];
        entry[static_cast<std::size_t>(c)] = static_cast<std::int64_t>(node.size());
        node.push_back(c);
        sign.push_back(1.0f);
        stack.push_back({c, 0});
      } else {
        node.push_back(u);
        sign.push_back(-1.0f);
        stack.pop_back();
      }
    }
  }
  PathTour t;
  t.node = to_long(node);
  t.sign = torch::from_blob(sign.data(), {static_cast<std::int64_t>(sign.size()), 1}, torch::kFloat)
               .clone();
  t.entry = to_long(entry);
  return t;
}

}  // namespace

torch::Tensor path_sums(const torch::Tensor& h, const PathTour& tour) {
  const auto seq = (h.index_select(0, tour.node) * tour.sign).to(torch::kDouble);
  return seq.cumsum(0).index_select(0, tour.entry).to(h.scalar_type());
}

GraphTensors make_graph_tensors(const GraphFeatures& f, int max_levels) {
  GraphTensors t;
  const int n = f.num_nodes;
  t.num_nodes = n;
  t.unit = f.unit;
  t.x = torch::from_blob(const_cast<float*>(f.node.data()), {n, f.cols}, torch::kFloat).clone();

  // Levels of edge features (exact distinct values, or quantile bins).
  const std::size_t m = f.edge.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return f.edge[a] < f.edge[b]; });
  std::vector<int> level(m, 0);
  std::vector<float> values;
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < m; ++i)
    distinct += i == 0 || f.edge[order[i]] != f.edge[order[i - 1]];
  if (distinct <= static_cast<std::size_t>(max_levels)) {
    for (std::size_t i = 0; i < m; ++i) {
      if (i == 0 || f.edge[order[i]] != f.edge[order[i - 1]]) values.push_back(f.edge[order[i]]);
      level[order[i]] = static_cast<int>(values.size()) - 1;
    }
  } else {
    t.quantized = true;
    const std::size_t bins = static_cast<std::size_t>(max_levels);
    std::vector<double> sum(bins, 0.0);
    std::vector<int> count(bins, 0);
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t b = i * bins / m;
      level[order[i]] = static_cast<int>(b);
      sum[b] += f.edge[order[i]];
      ++count[b];
    }
    for (std::size_t b = 0; b < bins; ++b)
      values.push_back(count[b] ? static_cast<float>(sum[b] / count[b]) : 0.0f);
  }
  // Edges sorted by level.
  std::vector<std::size_t> by_level(m);
  std::iota(by_level.begin(), by_level.end(), 0);
  std::stable_sort(by_level.begin(), by_level.end(),
                   [&](std::size_t a, std::size_t b) { return level[a] < level[b]; });
  std::vector<std::int64_t> src(m), dst(m);
  t.level_begin.assign(values.size() + 1, 0);
  for (std::size_t i = 0; i < m; ++i) {
    src[i] = f.edge_src[by_level[i]];
    dst[i] = f.edge_dst[by_level[i]];
    ++t.level_begin[static_cast<std::size_t>(level[by_level[i]]) + 1];
  }
  for (std::size_t k = 0; k < values.size(); ++k) t.level_begin[k + 1] += t.level_begin[k];
  t.edge_src = to_long(src);
  t.edge_dst = to_long(dst);
  t.level_values =
      torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size()), 1}, torch::kFloat)
          .clone();

  // Path sums: parent of v = the next node of its path (b: toward the exit, t: the entry).
  t.b_tour = make_tour(f.b_next);
  t.t_tour = make_tour(f.t_prev);
  return t;
}

GraphTensors problem_tensors(const Problem& p, const PolicyConfig& c) {
  return make_graph_tensors(
      graph_features(p.graph(), p.cost(), p.analysis(), p.devices(), c.features), c.max_levels);
}

}  // namespace doppler::nn
