// The stand-in of a graph of repeated layers (repeat_proxy): its first layers, the ops outside
// them, the edges out of later layers redirected; on a generated Llama model it is the model
// generated with that many layers, and multilevel's tied search runs on it first.
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "support/llama_graphs.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/groups.hpp"
#include "doppler/heuristics/multilevel.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/heuristics/repeat_proxy.hpp"

namespace doppler {
namespace {

using NamedEdges = std::set<std::pair<std::string, std::string>>;

// A graph of these names (compute cost 1 each) and edges between them (by name).
Graph chain_graph(const std::vector<std::string>& names,
                  const std::vector<std::pair<int, int>>& edges) {
  GraphBuilder b;
  for (const auto& name : names) {
    Node n;
    n.name = name;
    n.flops = 1;
    n.compute_cost = 1;
    n.transfer_cost = 1;
    b.add_node(n);
  }
  for (const auto& [s, d] : edges) b.add_edge(s, d);
  return b.build();
}

std::vector<std::string> names_of(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) out.push_back(n.name);
  return out;
}

NamedEdges edges_of(const Graph& g) {
  NamedEdges out;
  for (const Edge& e : g.edges()) out.emplace(g.node(e.src).name, g.node(e.dst).name);
  return out;
}

// emb -> layers.0.a -> layers.0.b -> layers.1.a -> ... -> layers.<n-1>.b -> head.
Graph layered_chain(int layers) {
  std::vector<std::string> names = {"emb"};
  std::vector<std::pair<int, int>> edges;
  for (int l = 0; l < layers; ++l)
    for (const char* role : {"a", "b"}) {
      names.push_back("layers." + std::to_string(l) + "." + role);
      edges.emplace_back(static_cast<int>(names.size()) - 2, static_cast<int>(names.size()) - 1);
    }
  names.push_back("head");
  edges.emplace_back(static_cast<int>(names.size()) - 2, static_cast<int>(names.size()) - 1);
  return chain_graph(names, edges);
}

TEST(RepeatProxy, KeepsTheFirstLayersAndRedirectsTheEdgesOutOfTheRest) {
  const Graph g = layered_chain(6);
  const auto proxy = repeat_proxy(g, repeat_classes(g), 2);
  ASSERT_TRUE(proxy.has_value());
  EXPECT_EQ(proxy->layers, 2);
  EXPECT_EQ(proxy->of_layers, 6);
  const std::vector<std::string> names = {"emb",        "layers.0.a", "layers.0.b",
                                          "layers.1.a", "layers.1.b", "head"};
  EXPECT_EQ(names_of(proxy->graph), names);
  const NamedEdges edges = {{"emb", "layers.0.a"},
                            {"layers.0.a", "layers.0.b"},
                            {"layers.0.b", "layers.1.a"},
                            {"layers.1.a", "layers.1.b"},
                            {"layers.1.b", "head"}};  // from layers.5.b in the graph
  EXPECT_EQ(edges_of(proxy->graph), edges);
  // Later layers are placed by their role's op in layer 1; the kept ops by their copies.
  EXPECT_EQ(proxy->proxy_of[9], 3);   // layers.4.a (id 9) -> layers.1.a (stand-in id 3)
  EXPECT_EQ(proxy->proxy_of[12], 4);  // layers.5.b -> layers.1.b
  EXPECT_EQ(proxy->proxy_of[13], 5);  // head
  const std::vector<DeviceId> small = {0, 1, 2, 3, 0, 1};
  const std::vector<DeviceId> expanded = expand_proxy(*proxy, small, std::vector<DeviceId>(14, 0));
  const std::vector<DeviceId> expected = {0, 1, 2, 3, 0, 3, 0, 3, 0, 3, 0, 3, 0, 1};
  EXPECT_EQ(expanded, expected);
  EXPECT_EQ(restrict_to_proxy(*proxy, expected), small);
}

TEST(RepeatProxy, NeedsTwiceTheLayersItKeeps) {
  const Graph g = layered_chain(6);
  const auto classes = repeat_classes(g);
  EXPECT_TRUE(repeat_proxy(g, classes, 3).has_value());
  EXPECT_FALSE(repeat_proxy(g, classes, 4).has_value());
  EXPECT_FALSE(repeat_proxy(g, classes, 0).has_value());
}

TEST(RepeatProxy, AnOpOutsideTheLayersBetweenTwoOfThemLeavesNoStandIn) {
  // layers.0.a -> layers.1.a -> mid -> layers.2.a -> layers.3.a: with 2 layers kept, mid's
  // edge to layers.2.a would go to layers.1.a, which feeds mid: a cycle.
  const Graph g = chain_graph({"layers.0.a", "layers.1.a", "mid", "layers.2.a", "layers.3.a"},
                              {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  EXPECT_FALSE(repeat_proxy(g, repeat_classes(g), 2).has_value());
}

// On a generated Llama model the stand-in of K layers is the model generated with K layers:
// the same ops in the same order, the same edges, and the same makespan for every placement
// that puts each role on one device (here: a hash of the name with its layer index dropped).
void expect_stand_in_is_the_smaller_model(bool training) {
  const auto model = [&](int layers) {
    workloads::LlamaModelParams p;
    p.dim = 256;
    p.heads = 4;
    p.ffn = 512;
    p.seq = 512;
    p.vocab = 1000;
    p.layers = layers;
    p.training = training;
    p.set_partition_for(4);
    return workloads::generate_llama_model(p);
  };
  const Graph big = model(6), small = model(2);
  const auto proxy = repeat_proxy(big, repeat_classes(big), 2);
  ASSERT_TRUE(proxy.has_value());
  EXPECT_EQ(names_of(proxy->graph), names_of(small));
  EXPECT_EQ(edges_of(proxy->graph), edges_of(small));
  const auto device = [](const std::string& name) {
    std::string role = name;
    const int layer = repeat_layer(name);
    if (layer >= 0) role.replace(role.find(std::to_string(layer)), 1, "#");
    return static_cast<DeviceId>(std::hash<std::string>{}(role) % 4);
  };
  std::vector<DeviceId> a;
  for (const Node& n : big.nodes()) a.push_back(device(n.name));
  std::vector<DeviceId> b;
  for (const Node& n : small.nodes()) b.push_back(device(n.name));
  const Problem small_problem(small, Platform::reference(4));
  const Problem proxy_problem(proxy->graph, Platform::reference(4));
  EXPECT_DOUBLE_EQ(proxy_problem.simulator().makespan(restrict_to_proxy(*proxy, a)),
                   small_problem.simulator().makespan(b));
}

TEST(RepeatProxy, OfAGeneratedLlamaForwardPassIsTheModelWithThatManyLayers) {
  expect_stand_in_is_the_smaller_model(false);
}

TEST(RepeatProxy, OfAGeneratedLlamaTrainingStepIsTheModelWithThatManyLayers) {
  expect_stand_in_is_the_smaller_model(true);
}

TEST(TiedSearch, WithAStandInKeepsEveryLayerAlikeAndIsRepeatable) {
  const Graph g = test::small_llama(8, 512, 4);
  const Problem problem(g, Platform::hardware(load_hardware_profile("h100"), 4));
  const auto classes = repeat_classes(g);
  PlaceOptions o;
  o.seed = 5;
  o.threads = 1;
  o.budget.evaluations = 600;
  MultilevelSettings s;
  s.inner = "dsc";
  s.tied = 0.99;  // the refinement's 1% of the calls could untie a few ops
  s.tied_proxy = 2;
  const PlaceResult r = MultilevelPlacer(s).place(problem, o);
  EXPECT_NE(r.note.find("stand-in of 2 of 8 layers"), std::string::npos) << r.note;
  EXPECT_LE(r.spent.calls, 600);
  const PlaceResult again = MultilevelPlacer(s).place(problem, o);
  EXPECT_EQ(r.assignment.device_of, again.assignment.device_of);
  // Every class on one device but for the refinement's few moves of single ops.
  int untied = 0;
  for (const auto& c : classes)
    for (NodeId v : c)
      untied += r.assignment.device_of[static_cast<std::size_t>(v)] !=
                r.assignment.device_of[static_cast<std::size_t>(c.front())];
  EXPECT_LE(untied, 6);
}

// The stand-in's best is carried to the graph now and then while it is searched, so the run's
// curve moves in that phase, and a run stopped there ends with what it was told, not the start.
TEST(TiedSearch, ARunStoppedDuringTheStandInKeepsTheBestItReported) {
  const Graph g = test::small_llama(8, 512, 4);
  const Problem problem(g, Platform::hardware(load_hardware_profile("h100"), 4));
  MultilevelSettings s;
  s.inner = "dsc";
  s.tied = 0.99;
  s.tied_proxy = 2;
  constexpr std::int64_t kCalls = 4000;  // the stand-in's share ends near 0.75 x 0.99 of them
  PlaceOptions o;
  o.seed = 3;
  o.threads = 1;
  o.budget.evaluations = kCalls;
  ProgressPoint told{0, 0, std::numeric_limits<double>::infinity()};
  o.progress = [&](const ProgressPoint& p) {
    if (!(p.makespan < told.makespan)) return true;  // a heartbeat: nothing new
    told = p;
    return p.calls < kCalls / 4;  // stop at the first improvement past a quarter of the calls
  };
  const PlaceResult r = MultilevelPlacer(s).place(problem, o);
  EXPECT_LT(r.spent.calls, kCalls / 2) << "no report during the stand-in's search: " << r.note;
  EXPECT_GE(told.calls, kCalls / 4) << r.note;
  EXPECT_LE(problem.simulator().makespan(r.assignment.device_of), told.makespan) << r.note;
}

}  // namespace
}  // namespace doppler
