// Per-edge transfer costs (the classic P|prec,c_ij|Cmax model): makespans computed by hand on
// graphs where two edges of one producer cost differently, and the cost model, analyses, list
// schedulers and file formats that must agree with them.
#include <gtest/gtest.h>

#include "support/builders.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/io/reference_text.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {
namespace {

using test::edge_cost_graph;

Schedule run(const Graph& g, int p, std::vector<DeviceId> dev) {
  const Simulator sim(g, Platform::reference(p));
  const Assignment a{p, std::move(dev), {}, ""};
  const Schedule s = sim.simulate(a);
  EXPECT_EQ(sim.makespan(a), s.makespan) << "makespan() and simulate() agree";
  return s;
}

// a (2) feeds b (3) over an edge of cost 7 and c (4) over an edge of cost 1.
// a on 0, b and c on 1: c is ready at 2 + 1 = 3 and runs 3-7; b is ready at 2 + 7 = 9, 9-12.
// With one cost per producer (the old model) both would arrive together.
TEST(PerEdgeCosts, TwoEdgesOfOneProducerArriveAtTheirOwnTimes) {
  const Graph g = edge_cost_graph({2, 3, 4}, {{0, 1, 7}, {0, 2, 1}});
  ASSERT_TRUE(g.has_edge_transfer_costs());
  ASSERT_TRUE(g.has_reference_costs());
  const Schedule s = run(g, 2, {0, 1, 1});
  EXPECT_EQ(s.ready, (std::vector<double>{0, 9, 3}));
  EXPECT_EQ(s.start, (std::vector<double>{0, 9, 3}));
  EXPECT_EQ(s.makespan, 12);
  EXPECT_EQ(s.cross_transfers, 2);  // one per crossing edge
  // b local to a: b 2-5, c (edge 1) arrives at 3 on device 1: 3-7.
  EXPECT_EQ(run(g, 2, {0, 0, 1}).makespan, 7);
  // Everything on one device: 2 + 3 + 4, no transfer paid.
  EXPECT_EQ(run(g, 2, {1, 1, 1}).makespan, 9);
}

// An edge without its own cost falls back on its producer's transfer_cost.
// a (C 1, M 5) -> b over an edge of cost 2, a -> c with no own cost (5). All three on
// different devices: b ready at 3, c at 6.
TEST(PerEdgeCosts, EdgesWithoutACostUseTheProducers) {
  GraphBuilder b;
  for (double c : {1.0, 1.0, 1.0}) {
    Node n;
    n.compute_cost = c;
    n.transfer_cost = 5;
    b.add_node(n);
  }
  b.add_edge(0, 1, std::nullopt, 2.0);
  b.add_edge(0, 2);
  const Graph g = b.build();
  EXPECT_EQ(g.edge_transfer_cost(0), 2);
  EXPECT_EQ(g.edge_transfer_cost(1), 5);
  const Schedule s = run(g, 3, {0, 1, 2});
  EXPECT_EQ(s.ready, (std::vector<double>{0, 3, 6}));
  EXPECT_EQ(s.makespan, 7);
}

// Fan-in with different costs: c (1) on device 0 reads a (on 1, edge 4) and b (on 2, edge 6):
// a and b finish at 1, c is ready at max(1 + 4, 1 + 6) = 7 and finishes at 8.
TEST(PerEdgeCosts, FanInWaitsForTheCostliestEdge) {
  const Graph g = edge_cost_graph({1, 1, 1}, {{0, 2, 4}, {1, 2, 6}});
  EXPECT_EQ(run(g, 3, {1, 2, 0}).makespan, 8);
  EXPECT_EQ(run(g, 3, {0, 2, 0}).makespan, 8);  // a local: still waits for b (7)
  EXPECT_EQ(run(g, 3, {2, 0, 0}).makespan, 6);  // b local, a on 2: ready at 1 + 4 = 5, runs 5-6
}

// The cost model, b-levels and the list schedulers read the same per-edge costs.
TEST(PerEdgeCosts, CostModelAndAnalysesUseEdgeCosts) {
  const Graph g = edge_cost_graph({2, 3, 4}, {{0, 1, 7}, {0, 2, 1}});
  const CostModel cost = CostModel::reference(g);
  EXPECT_EQ(cost.transfer(0, 0, 1), 7);
  EXPECT_EQ(cost.transfer(1, 0, 1), 1);
  EXPECT_EQ(cost.transfer(0, 1, 1), 0);
  EXPECT_EQ(g.max_out_transfer_cost(0), 7);
  EXPECT_EQ(g.max_out_transfer_cost(2), 0);  // a sink
  const GraphAnalysis an(g, cost);
  // b-level(a) = 2 + max(7 + 3, 1 + 4) = 12; critical path 12.
  EXPECT_EQ(an.b_level()[0], 12);
  // HEFT (rank order a 12, c 4, b 3) with the edge costs: c finishes at 6 on a's device and at
  // 2 + 1 + 4 = 7 on the other, so it stays; b at 6 + 3 = 9 there or 2 + 7 + 3 = 12 on the other:
  // everything on one device, 9. Had HEFT read the producer's cost (0) instead, b would go to the
  // other device (2 + 0 + 3 = 5) and really finish at 12.
  const Problem problem(g, Platform::reference(2));
  const Assignment a = make_placer("heft")->place(problem, {}).assignment;
  EXPECT_EQ(a.device_of[0], a.device_of[1]);
  EXPECT_EQ(a.device_of[0], a.device_of[2]);
  EXPECT_EQ(Simulator(g, Platform::reference(2)).makespan(a), 9);
}

TEST(PerEdgeCosts, JsonRoundTripKeepsEdgeCosts) {
  const Graph g = edge_cost_graph({2, 3, 4}, {{0, 1, 7.5}, {0, 2, 1}});
  const std::string text = format_graph_json(g);
  EXPECT_NE(text.find("[0,1,{\"transfer_cost\":7.5}]"), std::string::npos) << text;
  const Graph back = parse_graph_json(text, "g.json");
  ASSERT_EQ(back.num_edges(), 2);
  EXPECT_EQ(back.edge_transfer_cost(0), 7.5);
  EXPECT_EQ(back.edge_transfer_cost(1), 1);
  EXPECT_EQ(format_graph_json(back), text);
  // The reference text format has one cost per op: writing per-edge costs is refused.
  EXPECT_THROW(format_reference_text(g), InputError);
}

TEST(PerEdgeCosts, JsonRejectsBadEdgeCosts) {
  const std::string head =
      R"({"format": "doppler-graph", "version": 1, "nodes": [{"id": 0, "compute_cost": 1},
{"id": 1, "compute_cost": 1}], "edges": [)";
  for (const char* bad : {R"([0, 1, {"transfer_cost": -1}])", R"([0, 1, {"transfer_cost": "x"}])",
                          R"([0, 1, {"cost": 1}])"}) {
    try {
      parse_graph_json(head + bad + "]}", "g.json");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("g.json:2:", 0), 0u) << e.what();
    }
  }
  // Duplicate edges keep the larger cost.
  const Graph g = parse_graph_json(
      head + R"([0, 1, {"transfer_cost": 2}], [0, 1, {"transfer_cost": 5}]]})", "g.json");
  EXPECT_EQ(g.edge_transfer_cost(0), 5);
}

}  // namespace
}  // namespace doppler
