// random-dag: exact op count, layered structure with at least one parent per node, width,
// density, the exact computation-to-communication ratio, and seed determinism.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

using workloads::RandomDagParams;

int layer_of(const Node& n) {
  return std::stoi(n.name.substr(1, n.name.find('.') - 1));
}

TEST(RandomDag, LayeredWithParentsWidthAndExactCcr) {
  for (const auto& [ops, width, density, ccr] : std::vector<std::tuple<int, int, double, double>>{
           {1, 1, 0.5, 1}, {200, 10, 0.3, 0.5}, {1000, 40, 0.1, 4}, {500, 5, 1.0, 1}}) {
    RandomDagParams p;
    p.ops = ops;
    p.width = width;
    p.density = density;
    p.ccr = ccr;
    p.seed = 7;
    const Graph g = workloads::generate_random_dag(p);
    ASSERT_EQ(g.num_nodes(), ops);
    std::map<int, int> layer_size;
    for (const Node& n : g.nodes()) ++layer_size[layer_of(n)];
    for (const auto& [l, size] : layer_size) EXPECT_LE(size, width);
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const int l = layer_of(g.node(v));
      EXPECT_EQ(g.predecessors(v).empty(), l == 0) << g.label(v);
      for (NodeId u : g.predecessors(v)) EXPECT_EQ(layer_of(g.node(u)), l - 1);
    }
    if (density == 1.0) {  // complete bipartite between consecutive layers
      std::int64_t pairs = 0;
      for (const auto& [l, size] : layer_size)
        if (l > 0) pairs += static_cast<std::int64_t>(layer_size[l - 1]) * size;
      EXPECT_EQ(g.num_edges(), pairs);
    }
    // ccr = (mean compute over nodes) / (mean transfer over edges), exactly.
    double c = 0, m = 0;
    for (const Node& n : g.nodes()) {
      c += *n.compute_cost;
      EXPECT_DOUBLE_EQ(n.flops, 2 * *n.compute_cost);
      EXPECT_DOUBLE_EQ(n.out_bytes, *n.transfer_cost);
    }
    for (const Edge& e : g.edges()) m += *g.node(e.src).transfer_cost;
    if (g.num_edges() > 0) {
      EXPECT_NEAR((c / ops) / (m / g.num_edges()), ccr, 1e-9 * ccr);
    }
  }
}

TEST(RandomDag, DensityIsTheEdgeProbability) {
  RandomDagParams p;
  p.ops = 20000;
  p.width = 60;
  p.density = 0.25;
  const Graph g = workloads::generate_random_dag(p);
  std::map<int, int> size;
  for (const Node& n : g.nodes()) ++size[layer_of(n)];
  double pairs = 0;
  for (const auto& [l, s] : size)
    if (l > 0) pairs += static_cast<double>(size[l - 1]) * s;
  // Orphans get one extra edge, which only adds a little at this density.
  EXPECT_NEAR(g.num_edges() / pairs, 0.25, 0.01);
}

TEST(RandomDag, SeedDeterminesTheGraph) {
  RandomDagParams p;
  p.ops = 300;
  const Graph a = workloads::generate_random_dag(p), b = workloads::generate_random_dag(p);
  p.seed = 1;
  const Graph c = workloads::generate_random_dag(p);
  ASSERT_EQ(a.num_edges(), b.num_edges());
  for (EdgeId e = 0; e < a.num_edges(); ++e) {
    EXPECT_EQ(a.edge(e).src, b.edge(e).src);
    EXPECT_EQ(a.edge(e).dst, b.edge(e).dst);
  }
  for (NodeId v = 0; v < a.num_nodes(); ++v)
    EXPECT_EQ(a.node(v).compute_cost, b.node(v).compute_cost);
  bool differs = a.num_edges() != c.num_edges();
  for (NodeId v = 0; v < a.num_nodes() && !differs; ++v)
    differs = a.node(v).compute_cost != c.node(v).compute_cost;
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace doppler
