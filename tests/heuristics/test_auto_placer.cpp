// `auto`: on problems whose optimum is known by construction or by brute force, it returns the
// optimum; its note names what it ran.
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/llama_graphs.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/auto_placer.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

// The starved rule's search (auto_placer.cpp's kStarvedSearch): torch-free, no policy needed.
const std::string kStarved = "local-search:t0=0.0001,focus=1,aim=1,swaps=0,dsc=1,levels=1";

// 40 ops in a chain with transfers: any cut adds a transfer, so the optimum is the sum of the
// compute costs (`sum`), on one device.
Graph transfer_chain(double& sum) {
  std::vector<test::RefNode> nodes;
  std::vector<std::pair<int, int>> edges;
  sum = 0;
  for (int i = 0; i < 40; ++i) {
    nodes.push_back({1.0 + i % 5, 3});
    sum += 1.0 + i % 5;
    if (i > 0) edges.emplace_back(i - 1, i);
  }
  return test::ref_graph(nodes, edges);
}

TEST(Auto, AChainGoesOnOneDevice) {
  double sum = 0;
  const Graph g = transfer_chain(sum);
  const Problem problem(g, Platform::reference(4));
  for (int threads : {1, 2}) {
    PlaceOptions o;
    o.threads = threads;
    o.budget = {4000, 0};
    const PlaceResult r = AutoPlacer().place(problem, o);
    EXPECT_DOUBLE_EQ(problem.simulator().makespan(r.assignment.device_of), sum);
    EXPECT_NE(r.note.find("multilevel"), std::string::npos) << r.note;
  }
}

// tiebreak=T reaches every annealing member (the note names their specs) and leaves the chain's
// optimum in reach.
TEST(Auto, TheTieRuleReachesEveryAnnealingMember) {
  double sum = 0;
  const Graph g = transfer_chain(sum);
  const Problem problem(g, Platform::reference(4));
  PlaceOptions o;
  o.budget = {4000, 0};
  const PlaceResult r = AutoPlacer(-1, -1, TieBreak::metropolis).place(problem, o);
  EXPECT_DOUBLE_EQ(problem.simulator().makespan(r.assignment.device_of), sum);
  EXPECT_NE(r.note.find("multilevel:inner=dsc,t0=0.0005,tiebreak=2 "), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("search:tiebreak=2 "), std::string::npos) << r.note;  // local- or doppler-
}

TEST(Auto, AnIndependentSetIsSpreadEvenly) {
  // 30 unit ops, no edges, 4 devices: the optimum is ceil(30 / 4) = 8.
  const Graph g = test::ref_graph(std::vector<test::RefNode>(30, {1, 1}), {});
  const Problem problem(g, Platform::reference(4));
  PlaceOptions o;
  o.budget = {2000, 0};
  const PlaceResult r = AutoPlacer().place(problem, o);
  EXPECT_DOUBLE_EQ(problem.simulator().makespan(r.assignment.device_of), 8.0);
}

// Where the level placer is far ahead of every member at a short budget (a deep DAG on 64
// devices, 600 calls: a sixteenth is 37, room for its 30 passes and the chain refinement),
// `auto` starts its refinement from that placement: never worse than it, and the note names it.
TEST(Auto, TheLevelPlacersCandidateStartsTheRefinementWhereItLeads) {
  const Graph g = workloads::generate_random_dag({2000, 32, 0.2, 1.0, 1});
  const Problem problem(g, Platform::reference(64));
  const double levels =
      problem.simulator().makespan(make_placer("levels")->place(problem, {}).assignment.device_of);
  PlaceOptions o;
  o.budget = {600, 0};
  const PlaceResult r = AutoPlacer().place(problem, o);
  EXPECT_LE(problem.simulator().makespan(r.assignment.device_of), levels);
  EXPECT_NE(r.note.find("best levels"), std::string::npos) << r.note;
}

// Where moving data costs more than the devices parallelise, `auto` ends no worse than the whole
// graph on one device, its `single` candidate (one call), whatever the budget: 6 layers of 4 unit
// blocks, each block reading every block of the layer before (a relayout's all-to-all), an edge
// costing 10 units. One device: 24. Its members (24 ops: `optimal` beside `local-search`) end at
// 56 with 3 calls without it (local-search still at 56 after 198 calls).
TEST(Auto, NeverWorseThanOneDevice) {
  const int layers = 6, width = 4;
  std::vector<test::RefNode> nodes(layers * width, {1, 10});
  std::vector<std::pair<int, int>> edges;
  for (int l = 1; l < layers; ++l)
    for (int a = 0; a < width; ++a)
      for (int b = 0; b < width; ++b) edges.emplace_back((l - 1) * width + a, l * width + b);
  const Graph g = test::ref_graph(nodes, edges);
  const Problem problem(g, Platform::reference(4));
  const double one = problem.simulator().makespan(
      std::vector<DeviceId>(static_cast<std::size_t>(g.num_nodes()), 0));
  ASSERT_DOUBLE_EQ(one, 24);
  for (const std::int64_t calls : {3, 40, 400}) {
    PlaceOptions o;
    o.budget = {calls, 0};
    const PlaceResult r = AutoPlacer().place(problem, o);
    EXPECT_LE(problem.simulator().makespan(r.assignment.device_of), one) << calls << r.note;
    EXPECT_NE(r.note.find("single 24 (0 calls)"), std::string::npos) << r.note;
  }
}

// The least makespan over every assignment of `problem`, ops before `first` kept on device 0
// (1: the first op fixed, which loses nothing where devices are interchangeable).
double brute_force_optimum(const Problem& problem, int first) {
  const int n = problem.graph().num_nodes(), p = problem.devices();
  std::vector<DeviceId> dev(static_cast<std::size_t>(n), 0);
  double best = 1e300;
  for (;;) {
    best = std::min(best, problem.simulator().makespan(dev));
    int i = first;  // the next assignment, as a base-P counter over ops first..n-1
    while (i < n && ++dev[static_cast<std::size_t>(i)] == p) dev[static_cast<std::size_t>(i++)] = 0;
    if (i == n) return best;
  }
}

TEST(Auto, TinyProblemsGetTheBruteForceOptimum) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    const Graph g = test::random_dag(rng, {8, 0.3, 9, 12, true});
    const Problem problem(g, Platform::reference(3));
    const double best = brute_force_optimum(problem, 0);  // 3^8 assignments
    const PlaceResult r = AutoPlacer().place(problem, {});
    EXPECT_EQ(problem.simulator().makespan(r.assignment.device_of), best);
    EXPECT_NE(r.note.find("enumeration"), std::string::npos) << r.note;
  }
}

TEST(Auto, SmallGraphsGetTheBranchAndBoundOptimum) {
  // 9 ops on 4 devices (4^9 = 262,144 assignments, past enumeration): auto's branch and bound
  // must reach the brute-force optimum. The reference model's devices are interchangeable, so
  // op 0 on device 0 loses nothing and leaves 4^8 assignments to try.
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 3; ++trial) {
    const Graph g = test::random_dag(rng, {9, 0.3, 9, 12, true});
    const Problem problem(g, Platform::reference(4));
    const double best = brute_force_optimum(problem, 1);  // 4^8 assignments
    PlaceOptions o;
    o.budget = {20000, 0};
    const PlaceResult r = AutoPlacer().place(problem, o);
    EXPECT_EQ(problem.simulator().makespan(r.assignment.device_of), best) << trial;
    EXPECT_NE(r.note.find("branch and bound"), std::string::npos) << r.note;
  }
  AutoFeatures f;
  f.devices = 16;
  f.ops = 30;
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{"optimal", "local-search"}));
  EXPECT_EQ(plan_auto(f).refine_share, 0);
  f.ops = 31;
  EXPECT_EQ(plan_auto(f).members.front(), "multilevel:inner=dsc");
}

TEST(Auto, TheRuleFollowsTheGraphSize) {
  AutoFeatures f;
  f.devices = 8;
  f.ops = 1000;
  const AutoPlan small = plan_auto(f);
  EXPECT_FALSE(small.exhaustive);
  EXPECT_EQ(small.members, (std::vector<std::string>{"multilevel:inner=dsc", "local-search"}));
  EXPECT_EQ(small.refine_t0, 0.005);
  f.learned = true;  // the learned prior's search replaces local-search at short budgets
  f.seconds = 10;    // the time of a call unknown: the methods as they ship
  EXPECT_EQ(plan_auto(f).members.back(), "doppler-search");
  f.seconds = 60;
  EXPECT_EQ(plan_auto(f).members.back(), "local-search");
  f.seconds = 0;
  f.calls = 1000000;  // 1,000 calls per op: time for the hot phase to pay
  EXPECT_EQ(plan_auto(f).members,
            (std::vector<std::string>{"multilevel:inner=dsc", "doppler-search"}));
  f.learned = false;
  f.ops = 30000;  // local-search loses on large graphs; a second multilevel with V-cycles
  f.calls = 30000000;
  EXPECT_EQ(plan_auto(f).members,
            (std::vector<std::string>{"multilevel:inner=dsc", "multilevel:inner=dsc,cycles=2"}));
  f.learned = true;
  EXPECT_EQ(plan_auto(f).members,
            (std::vector<std::string>{"multilevel:inner=dsc", "doppler-search"}));
  f.ops = 5;
  f.devices = 4;  // 4^5 = 1024 assignments
  EXPECT_TRUE(plan_auto(f).exhaustive);
}

// The features of a run with a policy on `ops` ops and `devices` devices, `seconds` of budget and
// `call_seconds` per simulator call.
AutoFeatures timed_features(int ops, int devices, double seconds, double call_seconds) {
  AutoFeatures f;
  f.ops = ops;
  f.devices = devices;
  f.learned = true;
  f.seconds = seconds;
  f.call_seconds = call_seconds;
  return f;
}

// With a time budget the learned search runs only where its first rollout (estimated at N x
// (30 us + 2 us x P)) takes at most half of it: on 5,000 ops on 64 devices (0.79 s) not at 1 s,
// but at 2 s; under a call budget alone, as before. The starved rule needs no policy: on
// 100,000 ops on 64 devices at 5 s (where the learned search once ran alone for 15.7 s) the
// focused search runs, policy or not.
TEST(Auto, TheLearnedSearchRunsOnlyWhereItsFirstRolloutFits) {
  AutoFeatures f = timed_features(5000, 64, 1, 1e-5);  // 20 calls per op: a short, cold budget
  AutoPlan plan = plan_auto(f);
  EXPECT_EQ(plan.members,
            (std::vector<std::string>{"multilevel:inner=dsc,t0=0.0005", "local-search"}));
  EXPECT_NE(plan.why.find("no learned search"), std::string::npos) << plan.why;
  f.seconds = 1.5;  // 2 x 0.79 s = 1.58 s: still too short
  EXPECT_EQ(plan_auto(f).members.back(), "local-search");
  f.seconds = 2;
  EXPECT_EQ(plan_auto(f).members.back(), "doppler-search:t0=0.0001");
  f.seconds = 0;
  f.calls = 100000;
  EXPECT_EQ(plan_auto(f).members.back(), "doppler-search:t0=0.0001");
  f = timed_features(100000, 64, 5, 0.02);  // 0.0025 calls per op: starved
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
  f.learned = false;
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
}

// Under 200 calls per op (from a call budget, or from the seconds, threads and the measured time
// of a call) the annealing members and the refinement start cold; under 32 calls per op on a
// large graph the cold focused search runs alone, without refinement.
TEST(Auto, FewCallsPerOpStartTheAnnealingCold) {
  AutoFeatures f = timed_features(1000, 8, 10, 1e-4);  // 10 / 1e-4 / 1000 = 100 calls per op
  EXPECT_NEAR(calls_per_op(f), 100, 1e-9);
  AutoPlan plan = plan_auto(f);
  EXPECT_EQ(plan.members, (std::vector<std::string>{"multilevel:inner=dsc,t0=0.0005",
                                                    "doppler-search:t0=0.0001"}));
  EXPECT_EQ(plan.refine_t0, 0.0005);
  f.call_seconds = 1e-5;  // 1,000 calls per op: as they ship
  EXPECT_EQ(plan_auto(f).members,
            (std::vector<std::string>{"multilevel:inner=dsc", "doppler-search"}));
  f.seconds = 0;
  f.calls = 20000;  // 20 calls per op
  EXPECT_EQ(plan_auto(f).members.back(), "doppler-search:t0=0.0001");
  f.learned = false;
  f.ops = 10000;  // 2 calls per op, no policy: both multilevel members cold
  EXPECT_EQ(plan_auto(f).members,
            (std::vector<std::string>{"multilevel:inner=dsc,t0=0.0005",
                                      "multilevel:inner=dsc,cycles=2,t0=0.0005"}));
  f.learned = true;
  f.ops = 30000;  // 0.67 calls per op on a large graph: the cold focused search alone
  plan = plan_auto(f);
  EXPECT_EQ(plan.members, (std::vector<std::string>{kStarved}));
  EXPECT_EQ(plan.refine_share, 0);
  f.calls = 0;  // the same from the seconds: 2 x 60 / 0.007 = 17,143 calls for 30,000 ops
  f.seconds = 60;
  f.threads = 2;
  f.call_seconds = 0.007;
  EXPECT_NEAR(calls_per_op(f), 2 * 60 / 0.007 / 30000, 1e-12);
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
  f.call_seconds = 0.002;  // 2 calls per op: still alone (the 20,000-op DAG at 60 s)
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
  f.call_seconds = 0.0005;  // 8 calls per op: still alone (the DAG at 240 s on two threads)
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
  f.call_seconds = 0.0003;  // 13.3 calls per op: still alone
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
  f.call_seconds = 0.00016;  // 25 calls per op: still alone (the DAG at 400 s on a faster VM)
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
  f.call_seconds = 0.0001;  // 40 calls per op: the portfolio, cold
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{"multilevel:inner=dsc,t0=0.0005",
                                                            "doppler-search:t0=0.0001"}));
  f.learned = false;  // no policy: the portfolio without the learned search
  EXPECT_EQ(plan_auto(f).members,
            (std::vector<std::string>{"multilevel:inner=dsc,t0=0.0005",
                                      "multilevel:inner=dsc,cycles=2,t0=0.0005"}));
  f.call_seconds = 0.007;  // and the focused search alone under 32 calls per op
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
}

// Under one call per op on a large graph with half of its ops or more in repeated layers, the
// tied multilevel search runs alone, policy or not; elsewhere the rule is unchanged.
TEST(Auto, StarvedGraphsWithRepeatedLayersRunTheTiedSearchAlone) {
  const std::vector<std::string> tied = {"multilevel:inner=dsc,tied=0.8,t0=0.0005,proxy=4"};
  AutoFeatures f = timed_features(61846, 16, 60, 0.007);  // the training step: 0.14 calls per op
  f.repeated = 0.99;
  AutoPlan plan = plan_auto(f);
  EXPECT_EQ(plan.members, tied);
  EXPECT_EQ(plan.refine_share, 0);
  EXPECT_NE(plan.why.find("99% of the ops in repeated layers"), std::string::npos) << plan.why;
  f.learned = false;
  EXPECT_EQ(plan_auto(f).members, tied);
  f.learned = true;
  f.repeated = 0.49;  // under half: the focused search alone, as before
  EXPECT_EQ(plan_auto(f).members, (std::vector<std::string>{kStarved}));
  f.repeated = 0.5;
  f.call_seconds = 0.0004;  // 2.4 calls per op: still the tied search
  EXPECT_EQ(plan_auto(f).members, tied);
  f.call_seconds = 0.0001;  // 9.7 calls per op
  EXPECT_EQ(plan_auto(f).members, tied);
  f.call_seconds = 0.00009;  // 10.8 calls per op: the portfolio
  EXPECT_EQ(plan_auto(f).members.front(), "multilevel:inner=dsc,t0=0.0005");
  f = timed_features(14194, 8, 60, 0.0019);  // the forward pass on 2 threads: 4.4 calls per op
  f.threads = 2;
  f.repeated = 0.99;
  EXPECT_EQ(plan_auto(f).members, tied);
  f.ops = 9999;  // under 10,000 ops: the portfolio
  EXPECT_EQ(plan_auto(f).members.front(), "multilevel:inner=dsc,t0=0.0005");
}

// The share of repeated ops auto reads: every op of a generated Llama model's layers, counted
// by name here, and none of a graph without layer indices.
TEST(Auto, FeaturesCountTheOpsInRepeatedLayers) {
  const Graph g = test::small_llama(3, 256, 2);
  std::size_t layered = 0;
  for (const Node& n : g.nodes()) layered += n.name.find("layers.") != std::string::npos;
  const Problem problem(g, Platform::reference(2));
  EXPECT_DOUBLE_EQ(auto_features(problem, 1, {100, 0}).repeated,
                   static_cast<double>(layered) / g.num_nodes());
  EXPECT_GT(layered, 0u);
  const Graph chain = test::ref_graph({{1, 1}, {1, 1}, {1, 1}}, {{0, 1}, {1, 2}});
  EXPECT_EQ(auto_features(Problem(chain, Platform::reference(2)), 1, {100, 0}).repeated, 0);
}

}  // namespace
}  // namespace doppler
