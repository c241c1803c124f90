// Graphs without exec descriptions (the reference files, random DAGs) run synthetic kernels:
// output blocks of scale x transfer cost bytes, FLOPs proportional to the compute cost, and a
// first element that is a checksum of the inputs' first elements, so that dataflow errors show.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "engine_support.hpp"
#include "support/support.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/graph/io/graph_file.hpp"

namespace doppler {
namespace {

// The documented checksum, evaluated independently in double: out[0] = 0.5 x mean of the
// predecessors' out[0] + (v mod 7) + 1 (sources: (v mod 7) + 1).
std::vector<double> checksums(const Graph& g) {
  std::vector<double> c(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v : g.topo_order()) {
    double s = 0;
    for (NodeId u : g.predecessors(v)) s += c[static_cast<std::size_t>(u)];
    const auto k = g.predecessors(v).size();
    c[static_cast<std::size_t>(v)] = (k ? 0.5 * s / static_cast<double>(k) : 0.0) + (v % 7) + 1;
  }
  return c;
}

void check_synthetic(const Graph& g, int devices, double scale) {
  EngineOptions o;
  o.devices = devices;
  o.synthetic_scale = scale;
  Engine e(g, o);
  ASSERT_EQ(e.kernel_mode(), KernelMode::synthetic);
  EXPECT_DOUBLE_EQ(e.synthetic_scale(), scale);
  const std::vector<double> want = checksums(g);
  std::mt19937_64 rng(11);
  for (int p = 1; p <= devices; ++p) {
    e.run(test::random_assignment(g, p, rng), p % 2 ? DispatchRule::fifo : DispatchRule::priority);
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const Node& n = g.node(v);
      const double size = n.transfer_cost ? *n.transfer_cost : n.out_bytes;
      const auto elems = std::max<std::int64_t>(1, std::llround(scale * size / 4));
      ASSERT_EQ(e.output(v).size(), static_cast<std::size_t>(elems)) << v;
      EXPECT_NEAR(e.output(v)[0], want[static_cast<std::size_t>(v)],
                  1e-5 * want[static_cast<std::size_t>(v)])
          << "node " << v << " on " << p << " devices";
    }
  }
}

TEST(EngineSynthetic, RandomDagOutputsFollowTheDataflow) {
  std::mt19937_64 rng(12);
  check_synthetic(test::random_dag(rng, {40, 0.15, 10, 10, true}), 4, 2e4);
}

TEST(EngineSynthetic, ReferenceGraphRuns) {
  DOPPLER_REQUIRE_REFERENCE_GRAPHS(dir);
  const Graph g = load_graph(dir / "gdp_chain_mm_112nodes.txt");
  check_synthetic(g, 4, 1e-7);
}

TEST(EngineSynthetic, AutomaticScaleTotalsAbout1e8Flops) {
  std::mt19937_64 rng(13);
  const Graph g = test::random_dag(rng, {30, 0.2, 10, 10, true});
  Engine e(g, {});
  EXPECT_GT(e.total_flops(), 0.5e8);
  EXPECT_LT(e.total_flops(), 2e8);
}

TEST(EngineSynthetic, EmptyKernelsKeepOneElementPerNode) {
  const Graph g = test::small_workloads(2)[0].graph;
  EngineOptions o;
  o.devices = 2;
  o.kernels = KernelMode::empty;
  Engine e(g, o);
  std::mt19937_64 rng(14);
  const EngineResult r = e.run(test::random_assignment(g, 2, rng));
  EXPECT_EQ(e.total_flops(), 0);
  for (NodeId v = 0; v < g.num_nodes(); ++v) EXPECT_EQ(e.output(v).size(), 1u);
  for (const auto& t : r.schedule.transfers) EXPECT_EQ(t.bytes, 4.0);
}

}  // namespace
}  // namespace doppler
