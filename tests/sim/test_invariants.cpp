// Invariants of simulated schedules on random DAGs and assignments (both models).
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {
namespace {

std::vector<DeviceId> random_assignment(std::mt19937_64& rng, int n, int p) {
  std::vector<DeviceId> dev(static_cast<std::size_t>(n));
  for (auto& d : dev) d = static_cast<DeviceId>(rng() % static_cast<unsigned>(p));
  return dev;
}

// Adds physical costs to a reference-cost random DAG (flops = 1e9 x C, bytes = 1e8 x M).
Graph with_physical_costs(const Graph& g) {
  GraphBuilder b;
  for (const Node& n : g.nodes()) {
    Node m = n;
    m.flops = 1e9 * *n.compute_cost;
    m.out_bytes = 1e8 * *n.transfer_cost;
    b.add_node(m);
  }
  for (const Edge& e : g.edges()) b.add_edge(e.src, e.dst);
  return b.build();
}

// Checks one schedule: dependencies, exclusivity per device slot, work conservation.
void check_schedule(const Graph& g, const Schedule& s, const CostModel* ref) {
  const int n = g.num_nodes();
  double last = 0;
  for (NodeId v = 0; v < n; ++v) {
    const auto i = static_cast<std::size_t>(v);
    EXPECT_GE(s.start[i], s.ready[i]);
    last = std::max(last, s.finish[i]);
    for (EdgeId e : g.in_edges(v)) {
      const NodeId u = g.edge(e).src;
      const auto ui = static_cast<std::size_t>(u);
      double arrive = s.finish[ui];
      if (s.device[ui] != s.device[i] && ref) arrive += ref->transfer(e, 0, 1);
      EXPECT_GE(s.ready[i] + 1e-9, arrive)
          << "op " << v << " started before input " << u << " arrived";
    }
  }
  EXPECT_DOUBLE_EQ(s.makespan, last);
  for (DeviceId d = 0; d < s.devices; ++d) {
    std::vector<std::pair<double, double>> iv;
    for (NodeId v = 0; v < n; ++v)
      if (s.device[static_cast<std::size_t>(v)] == d)
        iv.push_back({s.start[static_cast<std::size_t>(v)], s.finish[static_cast<std::size_t>(v)]});
    std::sort(iv.begin(), iv.end());
    for (std::size_t k = 1; k < iv.size(); ++k)
      EXPECT_LE(iv[k - 1].second, iv[k].first + 1e-12) << "device " << d << " runs two ops at once";
    // Work conservation: while an op waits (ready < start), the device is busy.
    for (NodeId v = 0; v < n; ++v) {
      const auto i = static_cast<std::size_t>(v);
      if (s.device[i] != d || s.start[i] <= s.ready[i]) continue;
      double covered = s.ready[i];
      for (const auto& [a, b] : iv)
        if (a <= covered + 1e-12 && b > covered) covered = b;
      EXPECT_GE(covered + 1e-9, s.start[i])
          << "device " << d << " idled while op " << v << " was ready";
    }
  }
}

TEST(Invariants, ReferenceModelOnRandomDags) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 1 + static_cast<int>(rng() % 40);
    opt.edge_prob = static_cast<double>(rng() % 40) / 100;
    const Graph g = test::random_dag(rng, opt);
    const CostModel cost = CostModel::reference(g);
    const GraphAnalysis an(g, cost);
    const int p = 1 + static_cast<int>(rng() % 5);
    const Simulator sim(g, Platform::reference(p));
    const Assignment a{p, random_assignment(rng, g.num_nodes(), p), {}, ""};
    const Schedule s = sim.simulate(a);
    check_schedule(g, s, &cost);
    EXPECT_GE(s.makespan + 1e-9, an.lower_bound(p));
    EXPECT_EQ(sim.makespan(a), s.makespan) << "same input, same output";

    // One device: makespan = total compute.
    const Simulator one(g, Platform::reference(1));
    EXPECT_EQ(one.makespan(std::vector<DeviceId>(static_cast<std::size_t>(g.num_nodes()), 0)),
              an.total_work());
  }
}

TEST(Invariants, OneOpPerDeviceWithoutTransfersGivesTheCriticalPath) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 100; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 1 + static_cast<int>(rng() % 30);
    opt.max_transfer = 0;
    const Graph g = test::random_dag(rng, opt);
    const CostModel cost = CostModel::reference(g);
    const GraphAnalysis an(g, cost);
    const Simulator sim(g, Platform::reference(g.num_nodes()));
    std::vector<DeviceId> dev(static_cast<std::size_t>(g.num_nodes()));
    for (NodeId v = 0; v < g.num_nodes(); ++v) dev[static_cast<std::size_t>(v)] = v;
    EXPECT_EQ(sim.makespan(dev), an.critical_path_no_transfer());
  }
}

TEST(Invariants, APriorityOrderMustBeAPermutationOfTheOps) {
  std::mt19937_64 rng(3);
  const Graph g = test::random_dag(rng, {8, 0.3, 9, 9, true});
  const Simulator sim(g, Platform::reference(2));
  SimWorkspace ws;
  const std::vector<DeviceId> dev(8, 0);
  std::vector<NodeId> order = g.topo_order();
  const double ok = sim.makespan(dev, ws, DispatchRule::priority, order);
  EXPECT_GT(ok, 0);
  std::vector<NodeId> repeated = order;
  repeated[5] = repeated[2];  // op repeated, another one missing
  EXPECT_NE(test::error_of([&] {
              sim.makespan(dev, ws, DispatchRule::priority, repeated);
            }).find("a repeated op"),
            std::string::npos);
  std::vector<NodeId> outside = order;
  outside[1] = 8;
  EXPECT_NE(test::error_of([&] {
              sim.makespan(dev, ws, DispatchRule::priority, outside);
            }).find("not an op"),
            std::string::npos);
  outside[1] = -3;
  EXPECT_NE(test::error_of([&] { sim.makespan(dev, ws, DispatchRule::priority, outside); }), "");
  // The workspace is still good after the errors.
  EXPECT_EQ(sim.makespan(dev, ws, DispatchRule::priority, order), ok);
}

TEST(Invariants, HardwareModelOnRandomDags) {
  std::mt19937_64 rng(13);
  for (const char* name : {"p100", "v100", "a100"}) {
    const HardwareProfile hw = load_hardware_profile(name);
    for (int trial = 0; trial < 60; ++trial) {
      test::RandomDagOptions opt;
      opt.nodes = 1 + static_cast<int>(rng() % 40);
      opt.edge_prob = static_cast<double>(rng() % 40) / 100;
      const Graph g = with_physical_costs(test::random_dag(rng, opt));
      const int p = 1 + static_cast<int>(rng() % hw.num_devices());
      const Platform platform = Platform::hardware(hw, p);
      const Simulator sim(g, platform);
      const Assignment a{p, random_assignment(rng, g.num_nodes(), p), {}, ""};
      const Schedule s = sim.simulate(a);
      check_schedule(g, s, nullptr);
      const CostModel cost = platform.cost_model(g);
      EXPECT_GE(s.makespan * (1 + 1e-12), GraphAnalysis(g, cost).lower_bound(p));
      // Transfers: start after the producer, never overlap on a link, deliver before consumers.
      std::vector<std::vector<std::pair<double, double>>> per_link(s.link_names.size());
      for (const TransferRecord& t : s.transfers) {
        EXPECT_GE(t.start, s.finish[static_cast<std::size_t>(t.src)]);
        EXPECT_NEAR(t.finish - t.start, hw.transfer_time(t.from, t.to, t.bytes), 1e-12);
        for (int l : t.links) per_link[static_cast<std::size_t>(l)].push_back({t.start, t.finish});
        for (NodeId w : g.successors(t.src))
          if (s.device[static_cast<std::size_t>(w)] == t.to) {
            EXPECT_GE(s.ready[static_cast<std::size_t>(w)], t.finish);
          }
      }
      for (auto& iv : per_link) {
        std::sort(iv.begin(), iv.end());
        for (std::size_t k = 1; k < iv.size(); ++k) EXPECT_LE(iv[k - 1].second, iv[k].first);
      }
    }
  }
}

TEST(Invariants, BatchEqualsSequentialAndIsDeterministic) {
  std::mt19937_64 rng(14);
  const Graph g = test::random_dag(rng, {60, 0.1, 10, 10, true});
  const Simulator sim(g, Platform::reference(4));
  std::vector<std::vector<DeviceId>> batch;
  for (int i = 0; i < 200; ++i) batch.push_back(random_assignment(rng, g.num_nodes(), 4));
  const auto par = sim.makespans(batch, 2);
  SimWorkspace ws;
  for (std::size_t i = 0; i < batch.size(); ++i) EXPECT_EQ(par[i], sim.makespan(batch[i], ws));
  EXPECT_EQ(sim.makespans(batch, 2), par);
}

}  // namespace
}  // namespace doppler
