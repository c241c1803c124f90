// planted: the planted assignment reaches the optimum L exactly on the simulator; the plan's
// invariants (back-to-back integer tasks summing to L per device, edges forward in time, cross
// edges within their slack, chains); the achieved ratio and density; placers never beat L;
// seed determinism, shuffled ids, the registry, and parameter errors.
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/sim/simulator.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/planted.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

using workloads::PlantedInstance;
using workloads::PlantedParams;

PlantedParams params(std::int64_t ops, int devices, double ratio, std::uint64_t seed,
                     double density = 2) {
  PlantedParams p;
  p.ops = ops;
  p.devices = devices;
  p.ratio = ratio;
  p.density = density;
  p.seed = seed;
  return p;
}

// Planted start and end of every op, recomputed from the assignment alone: each device runs
// its ops in `order` back to back from 0.
struct Times {
  std::vector<double> start, end;
};

Times planted_times(const Graph& g, const Assignment& a) {
  Times t{std::vector<double>(static_cast<std::size_t>(g.num_nodes())),
          std::vector<double>(static_cast<std::size_t>(g.num_nodes()))};
  std::vector<double> clock(static_cast<std::size_t>(a.devices), 0.0);
  for (NodeId v : a.order) {
    const auto vu = static_cast<std::size_t>(v);
    double& c = clock[static_cast<std::size_t>(a.device_of[vu])];
    t.start[vu] = c;
    c += *g.node(v).compute_cost;
    t.end[vu] = c;
  }
  return t;
}

// Mean edge transfer cost / mean compute cost of the graph (0 without edges).
double graph_ratio(const Graph& g) {
  if (g.num_edges() == 0) return 0;
  double c = 0, m = 0;
  for (const Node& n : g.nodes()) c += *n.compute_cost;
  for (EdgeId e = 0; e < g.num_edges(); ++e) m += g.edge_transfer_cost(e);
  return (m / g.num_edges()) / (c / g.num_nodes());
}

using Combo = std::tuple<std::int64_t, int, double, std::uint64_t>;  // N, P, R, seed

const std::vector<Combo>& combos() {
  static const std::vector<Combo> all = {
      {50, 1, 1, 0},      {50, 1, 10, 1},      {50, 16, 0.1, 2},   {50, 16, 10, 3},
      {16, 16, 1, 4},     {17, 16, 5, 5},      {333, 7, 2, 6},     {500, 4, 0.1, 7},
      {2000, 16, 0.1, 8}, {2000, 16, 10, 9},   {2000, 1, 10, 10},  {1000, 3, 1, 11},
      {2000, 64, 3, 12},  {100000, 64, 1, 13}, {1000, 16, 10, 14}, {200, 2, 0.5, 15}};
  return all;
}

TEST(Planted, PlantedAssignmentReachesTheOptimumExactly) {
  for (const auto& [n, p, r, seed] : combos()) {
    SCOPED_TRACE(::testing::Message() << "N=" << n << " P=" << p << " R=" << r);
    const PlantedInstance inst = workloads::generate_planted(params(n, p, r, seed));
    const Graph& g = inst.graph;
    ASSERT_EQ(g.num_nodes(), n);
    ASSERT_NO_THROW(inst.assignment.validate(g, p));
    double work = 0;
    for (const Node& v : g.nodes()) work += *v.compute_cost;
    EXPECT_EQ(work, p * inst.optimum);  // L = total work / P: the lower bound
    EXPECT_EQ(std::stod(g.meta().params.at("optimum")), inst.optimum);
    EXPECT_EQ(g.meta().params.at("devices"), std::to_string(p));
    const Simulator sim(g, Platform::reference(p));
    EXPECT_EQ(sim.makespan(inst.assignment), inst.optimum);
    EXPECT_EQ(sim.makespan(inst.assignment, DispatchRule::priority), inst.optimum);
  }
}

TEST(Planted, EdgesRespectThePlantedScheduleAndItsSlack) {
  for (const auto& [n, p, r, seed] : combos()) {
    SCOPED_TRACE(::testing::Message() << "N=" << n << " P=" << p << " R=" << r);
    const PlantedInstance inst = workloads::generate_planted(params(n, p, r, seed));
    const Graph& g = inst.graph;
    const Assignment& a = inst.assignment;
    const Times t = planted_times(g, a);
    // Every device is busy from 0 to exactly L with positive integer tasks.
    std::vector<double> busy(static_cast<std::size_t>(p), 0.0);
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const double c = *g.node(v).compute_cost;
      EXPECT_GT(c, 0);
      EXPECT_EQ(c, std::floor(c));
      EXPECT_EQ(*g.node(v).transfer_cost, 0);
      busy[static_cast<std::size_t>(a.device_of[static_cast<std::size_t>(v)])] += c;
    }
    for (double b : busy) EXPECT_EQ(b, inst.optimum);
    int violations = 0;
    for (EdgeId e = 0; e < g.num_edges(); ++e) {
      const Edge& ed = g.edge(e);
      const auto u = static_cast<std::size_t>(ed.src), v = static_cast<std::size_t>(ed.dst);
      ASSERT_TRUE(ed.transfer_cost.has_value());
      const double cost = g.edge_transfer_cost(e);
      EXPECT_EQ(cost, std::floor(cost));
      EXPECT_GE(cost, 0);
      violations += t.end[u] > t.start[v];
      if (a.device_of[u] != a.device_of[v]) violations += cost > t.start[v] - t.end[u];
    }
    EXPECT_EQ(violations, 0);
    // Consecutive ops of a device are chained.
    std::vector<NodeId> last(static_cast<std::size_t>(p), -1);
    for (NodeId v : a.order) {
      NodeId& l = last[static_cast<std::size_t>(a.device_of[static_cast<std::size_t>(v)])];
      if (l >= 0) {
        EXPECT_GE(g.find_edge(l, v), 0);
      }
      l = v;
    }
  }
}

// A copy of `g` whose edge `bumped` costs `cost` instead.
Graph with_edge_cost(const Graph& g, EdgeId bumped, double cost) {
  GraphBuilder b;
  for (const Node& n : g.nodes()) b.add_node(n);
  for (EdgeId e = 0; e < g.num_edges(); ++e)
    b.add_edge(g.edge(e).src, g.edge(e).dst, g.edge(e).bytes,
               e == bumped ? cost : g.edge_transfer_cost(e));
  return b.build();
}

TEST(Planted, EveryDeviceIsPackedSoOneCostlierCrossEdgeMissesTheOptimum) {
  const PlantedInstance inst = workloads::generate_planted(params(300, 6, 2, 21));
  const Graph& g = inst.graph;
  const Assignment& a = inst.assignment;
  const Times t = planted_times(g, a);
  int checked = 0;
  for (EdgeId e = 0; e < g.num_edges() && checked < 5; ++e) {
    const auto u = static_cast<std::size_t>(g.edge(e).src);
    const auto v = static_cast<std::size_t>(g.edge(e).dst);
    if (a.device_of[u] == a.device_of[v]) continue;
    const double slack = t.start[v] - t.end[u];
    EXPECT_EQ(Simulator(with_edge_cost(g, e, slack), Platform::reference(6)).makespan(a),
              inst.optimum);  // a transfer of exactly the slack still arrives in time
    EXPECT_GT(Simulator(with_edge_cost(g, e, slack + 1), Platform::reference(6)).makespan(a),
              inst.optimum);  // one unit more delays a device that has no idle time
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST(Planted, AchievedRatioIsTheTargetAndCrossEdgesCarryItWhenDevicesHaveManyTasks) {
  for (const auto& [n, p, r, seed] : combos()) {
    SCOPED_TRACE(::testing::Message() << "N=" << n << " P=" << p << " R=" << r);
    const PlantedInstance inst = workloads::generate_planted(params(n, p, r, seed));
    const Graph& g = inst.graph;
    const double achieved = graph_ratio(g);
    EXPECT_NEAR(std::stod(g.meta().params.at("ratio")), achieved, 1e-5 * achieved);
    if (n == p) {
      EXPECT_EQ(g.num_edges(), 0);  // one task per device: no task ends before another starts
    } else {
      EXPECT_NEAR(achieved, r, 1e-6 * r);  // costs are rounded down to integers (~1e9 each)
    }
    // The mean over the edges that cross devices in the planted assignment alone.
    double cross = 0, count = 0, compute = 0;
    for (const Node& v : g.nodes()) compute += *v.compute_cost;
    for (EdgeId e = 0; e < g.num_edges(); ++e)
      if (inst.assignment.device_of[static_cast<std::size_t>(g.edge(e).src)] !=
          inst.assignment.device_of[static_cast<std::size_t>(g.edge(e).dst)]) {
        cross += g.edge_transfer_cost(e);
        ++count;
      }
    const double cross_ratio = count > 0 ? (cross / count) / (compute / n) : 0.0;
    EXPECT_NEAR(std::stod(g.meta().params.at("cross_ratio")), cross_ratio, 1e-5 * cross_ratio);
    if (n >= 100 * p && p > 1) {
      EXPECT_NEAR(cross_ratio, r, 0.1 * r);
    }
  }
}

TEST(Planted, DensityIsTheMeanExtraInDegree) {
  for (double density : {0.5, 2.0, 5.0}) {
    const PlantedParams p = params(4000, 8, 1, 3, density);
    const Graph g = workloads::generate_planted(p).graph;
    const double chain = static_cast<double>(p.ops - p.devices);
    EXPECT_NEAR((g.num_edges() - chain) / static_cast<double>(p.ops), density, 0.05 * density);
  }
}

TEST(Planted, PlacersNeverBeatTheOptimum) {
  for (const auto& [n, p, r, seed] :
       std::vector<Combo>{{120, 4, 1, 1}, {200, 8, 10, 2}, {150, 3, 0.1, 3}, {60, 16, 2, 4}}) {
    const PlantedInstance inst = workloads::generate_planted(params(n, p, r, seed));
    const Problem problem(inst.graph, Platform::reference(p));
    const Simulator sim(inst.graph, Platform::reference(p));
    for (const char* method : {"critical-path", "heft", "random", "balanced", "local-search"}) {
      SCOPED_TRACE(method);
      const Assignment a = make_placer(method)->place(problem, {7, {400, 0}}).assignment;
      EXPECT_GE(sim.makespan(a), inst.optimum);
    }
  }
}

TEST(Planted, SeedDeterminesTheInstanceAndIdsAreShuffled) {
  const PlantedParams p = params(800, 16, 2, 5);
  const PlantedInstance a = workloads::generate_planted(p), b = workloads::generate_planted(p);
  EXPECT_EQ(format_graph(a.graph, GraphFormat::json), format_graph(b.graph, GraphFormat::json));
  EXPECT_EQ(a.assignment.device_of, b.assignment.device_of);
  EXPECT_EQ(a.assignment.order, b.assignment.order);
  PlantedParams q = p;
  q.seed = 6;
  const PlantedInstance c = workloads::generate_planted(q);
  EXPECT_NE(format_graph(a.graph, GraphFormat::json), format_graph(c.graph, GraphFormat::json));
  EXPECT_NE(a.assignment.device_of, c.assignment.device_of);
  // Ids reveal neither devices nor times: device changes between consecutive ids are frequent,
  // and the planted order is far from the identity.
  int changes = 0, in_place = 0;
  for (std::size_t v = 0; v + 1 < a.assignment.device_of.size(); ++v)
    changes += a.assignment.device_of[v] != a.assignment.device_of[v + 1];
  for (std::size_t k = 0; k < a.assignment.order.size(); ++k)
    in_place += a.assignment.order[k] == static_cast<NodeId>(k);
  EXPECT_GT(changes, 600);
  EXPECT_LT(in_place, 20);
}

TEST(Planted, RegistryReturnsTheGraphAndItsAssignment) {
  workloads::WorkloadSpec s;
  s.name = "planted";
  s.devices = 5;
  s.params = {{"ops", "300"}, {"ratio", "3"}, {"density", "1.5"}, {"seed", "9"}};
  const auto w = workloads::generate_workload_with_assignment(s);
  ASSERT_TRUE(w.optimal.has_value());
  EXPECT_EQ(w.graph.meta().name, "planted");
  EXPECT_EQ(w.graph.meta().origin, "generated");
  EXPECT_EQ(w.graph.meta().params.at("devices"), "5");
  EXPECT_EQ(w.graph.meta().params.at("target_ratio"), "3");
  const PlantedInstance direct = workloads::generate_planted(params(300, 5, 3, 9, 1.5));
  EXPECT_EQ(format_graph(w.graph, GraphFormat::json),
            format_graph(direct.graph, GraphFormat::json));
  EXPECT_EQ(w.optimal->device_of, direct.assignment.device_of);
  EXPECT_EQ(Simulator(w.graph, Platform::reference(5)).makespan(*w.optimal), direct.optimum);
  s.name = "random-dag";
  s.params = {{"ops", "30"}};
  EXPECT_FALSE(workloads::generate_workload_with_assignment(s).optimal.has_value());
}

TEST(Planted, InvalidParametersNameTheProblem) {
  const auto error_of = [](const PlantedParams& p) -> std::string {
    try {
      workloads::generate_planted(p);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(params(3, 4, 1, 0)).find("parameter ops"), std::string::npos);
  EXPECT_NE(error_of(params(2'000'000, 4, 1, 0)).find("parameter ops"), std::string::npos);
  EXPECT_NE(error_of(params(10, 0, 1, 0)).find("parameter devices"), std::string::npos);
  EXPECT_NE(error_of(params(2000, 1025, 1, 0)).find("parameter devices"), std::string::npos);
  EXPECT_NE(error_of(params(10, 2, -1, 0)).find("parameter ratio"), std::string::npos);
  EXPECT_NE(error_of(params(10, 2, NAN, 0)).find("parameter ratio"), std::string::npos);
  EXPECT_NE(error_of(params(10, 2, 101, 0)).find("parameter ratio"), std::string::npos);
  EXPECT_NE(error_of(params(10, 2, 1, 0, -1)).find("parameter density"), std::string::npos);
  EXPECT_NE(error_of(params(1'000'000, 2, 1, 0, 60)).find("extra edges"), std::string::npos);
  EXPECT_EQ(error_of(params(4, 4, 0, 0, 0)), "");  // the smallest instance is valid
}

}  // namespace
}  // namespace doppler
