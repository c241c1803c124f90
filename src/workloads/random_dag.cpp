#include "doppler/workloads/random_dag.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "split_rng.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/kernels.hpp"

namespace doppler::workloads {

namespace {

constexpr std::int64_t kMaxOps = 1'000'000;
constexpr double kMaxExpectedEdges = 5e7;

using Rng = SplitRng;

}  // namespace

Graph generate_random_dag(const RandomDagParams& p) {
  if (p.ops < 1 || p.ops > kMaxOps)
    throw InputError(fmt::format("parameter ops must be in 1..{}, got {}", kMaxOps, p.ops));
  if (p.width < 1 || p.width > p.ops)
    throw InputError(fmt::format("parameter width must be in 1..ops ({}), got {}", p.ops, p.width));
  if (!(p.density > 0 && p.density <= 1))
    throw InputError(fmt::format("parameter density must be in (0, 1], got {}", p.density));
  if (!(p.ccr > 0 && std::isfinite(p.ccr)))
    throw InputError(fmt::format("parameter ccr must be a positive number, got {}", p.ccr));
  if (static_cast<double>(p.ops) * static_cast<double>(p.width) * p.density > kMaxExpectedEdges)
    throw InputError(fmt::format(
        "parameters ops x width x density = {:.3g} expected edges, more than {:.0e}",
        static_cast<double>(p.ops) * static_cast<double>(p.width) * p.density, kMaxExpectedEdges));
  Rng rng(p.seed);
  GraphBuilder b;
  std::vector<double> transfer_raw;
  transfer_raw.reserve(static_cast<std::size_t>(p.ops));
  double compute_sum = 0;
  // Layers: sizes uniform in [1, width], the last one truncated to reach `ops`.
  std::vector<NodeId> prev, cur;
  std::vector<char> has_parent;
  std::vector<std::pair<NodeId, NodeId>> edges;
  const double log_q = p.density < 1 ? std::log1p(-p.density) : 0;
  for (std::int64_t layer = 0, made = 0; made < p.ops; ++layer) {
    const std::int64_t size = std::min<std::int64_t>(1 + rng.below(p.width), p.ops - made);
    cur.clear();
    for (std::int64_t j = 0; j < size; ++j) {
      Node n;
      n.name = fmt::format("L{}.{}", layer, j);
      n.kind = OpKind::other;
      n.compute_cost = 0.5e9 + 1e9 * rng.uniform();
      compute_sum += *n.compute_cost;
      transfer_raw.push_back(0.5 + rng.uniform());
      cur.push_back(b.add_node(std::move(n)));
    }
    made += size;
    if (!prev.empty()) {
      // Each (parent, child) pair independently with probability density: geometric skips.
      has_parent.assign(cur.size(), 0);
      const std::int64_t pairs = static_cast<std::int64_t>(prev.size() * cur.size());
      for (std::int64_t pos = -1;;) {
        const double skip = p.density < 1 ? std::floor(std::log1p(-rng.uniform()) / log_q) : 0;
        if (skip >= static_cast<double>(pairs - pos - 1)) break;
        pos += 1 + static_cast<std::int64_t>(skip);
        const auto child = static_cast<std::size_t>(pos) % cur.size();
        edges.emplace_back(prev[static_cast<std::size_t>(pos) / cur.size()], cur[child]);
        has_parent[child] = 1;
      }
      for (std::size_t c = 0; c < cur.size(); ++c)
        if (!has_parent[c])
          edges.emplace_back(
              prev[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(prev.size())))],
              cur[c]);
    }
    std::swap(prev, cur);
  }
  // Scale transfers so that mean compute (over nodes) / mean transfer (over edges) = ccr.
  double edge_transfer = 0;
  for (const auto& [s, d] : edges) edge_transfer += transfer_raw[static_cast<std::size_t>(s)];
  const double mean_compute = compute_sum / static_cast<double>(p.ops);
  double mean_transfer = 0;
  if (!edges.empty()) {
    mean_transfer = edge_transfer / static_cast<double>(edges.size());
  } else {
    for (double t : transfer_raw) mean_transfer += t;
    mean_transfer /= static_cast<double>(p.ops);
  }
  const double factor = mean_compute / p.ccr / mean_transfer;
  for (NodeId v = 0; v < b.num_nodes(); ++v) {
    Node& n = b.node(v);
    n.transfer_cost = transfer_raw[static_cast<std::size_t>(v)] * factor;
    n.flops = 2 * *n.compute_cost;
    n.out_bytes = *n.transfer_cost;
  }
  for (const auto& [s, d] : edges) b.add_edge(s, d);
  GraphMeta meta;
  meta.name = "random-dag";
  meta.origin = "generated";
  meta.params = {{"ops", std::to_string(p.ops)},
                 {"width", std::to_string(p.width)},
                 {"density", fmt::format("{}", p.density)},
                 {"ccr", fmt::format("{}", p.ccr)},
                 {"seed", std::to_string(p.seed)}};
  b.set_meta(std::move(meta));
  return b.build();
}

}  // namespace doppler::workloads
