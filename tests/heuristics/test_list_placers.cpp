// Each list scheduler on hand-made DAGs whose choices are worked out by hand.
#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/critical_path.hpp"
#include "doppler/heuristics/list_placers.hpp"
#include "doppler/heuristics/list_schedule.hpp"
#include "doppler/heuristics/simple_placers.hpp"
#include "doppler/workloads/chainmm.hpp"
#include "doppler/workloads/ffnn.hpp"

namespace doppler {
namespace {

using test::ref_graph;

Assignment run(const Placer& pl, const Graph& g, int p, std::uint64_t seed = 0) {
  const Problem problem(g, Platform::reference(p));
  Assignment a = pl.place(problem, {seed, {}}).assignment;
  a.validate(g, p);
  return a;
}

// Three independent ops with b-levels 10, 3, 7 on 2 devices: order 0, 2, 1. Op 0 -> device 0
// (0-10), op 2 -> device 1 (0-7), op 1 starts earliest on device 1 (7 < 10).
TEST(CriticalPath, LargestBLevelFirstEarliestStartDevice) {
  const Graph g = ref_graph({{10, 0}, {3, 0}, {7, 0}}, {});
  const Assignment a = run(CriticalPathPlacer(), g, 2);
  EXPECT_EQ(a.device_of, (std::vector<DeviceId>{0, 1, 1}));
  EXPECT_EQ(a.order, (std::vector<NodeId>{0, 2, 1}));
  EXPECT_EQ(a.method, "critical-path");
}

// a (2, 10) -> b (3); c (4) independent; 2 devices. b-levels a 15, c 4, b 3. a -> dev 0 (0-2);
// c: dev 0 free at 2, dev 1 at 0 -> dev 1 (0-4); b: dev 0 at max(2, 2) = 2, dev 1 at
// max(2 + 10, 4) = 12 -> dev 0. The reference's buggy baseline would take the oldest candidate b
// before c; we take c (larger b-level).
TEST(CriticalPath, StartTimesIncludeTransfers) {
  const Graph g = ref_graph({{2, 10}, {3, 0}, {4, 0}}, {{0, 1}});
  const Assignment a = run(CriticalPathPlacer(), g, 2);
  EXPECT_EQ(a.device_of, (std::vector<DeviceId>{0, 0, 1}));
  EXPECT_EQ(a.order, (std::vector<NodeId>{0, 2, 1}));
}

TEST(CriticalPath, TeacherListsAllTiedActions) {
  const Graph g = ref_graph({{5, 0}, {5, 0}, {1, 0}}, {});
  const Problem problem(g, Platform::reference(3));
  ListSchedule s(g, problem.cost(), 3);
  EXPECT_EQ(critical_path_selections(s, problem.analysis().b_level()), (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(critical_path_devices(s, 0), (std::vector<DeviceId>{0, 1, 2}));
  s.place(0, 1);
  EXPECT_EQ(critical_path_devices(s, 1), (std::vector<DeviceId>{0, 2}));
  // Random ties: valid, seed-deterministic, and different seeds can differ.
  const CriticalPathPlacer random_ties(true);
  EXPECT_EQ(random_ties.place(problem, {7, {}}).assignment.device_of,
            random_ties.place(problem, {7, {}}).assignment.device_of);
  bool differs = false;
  for (std::uint64_t seed = 1; seed < 20 && !differs; ++seed)
    differs = random_ties.place(problem, {seed, {}}).assignment.device_of !=
              random_ties.place(problem, {0, {}}).assignment.device_of;
  EXPECT_TRUE(differs);
}

// a (1, 10) -> b (20), a -> d (3); e (2) independent; 2 devices. Ranks a 31, b 20, d 3, e 2.
// a -> dev 0 (0-1); b -> dev 0 (1-21; dev 1 would be 11-31); d -> dev 1 (11-14; dev 0 21-24);
// e fits in dev 1's idle gap before d: 0-2 (insertion), earlier than dev 0 (21-23).
TEST(Heft, InsertsIntoIdleGaps) {
  const Graph g = ref_graph({{1, 10}, {20, 0}, {3, 0}, {2, 0}}, {{0, 1}, {0, 2}});
  const Assignment a = run(HeftPlacer(), g, 2);
  EXPECT_EQ(a.device_of, (std::vector<DeviceId>{0, 0, 1, 1}));
  EXPECT_EQ(a.order, (std::vector<NodeId>{0, 3, 1, 2}));  // planned starts 0, 0, 1, 11
}

// ETF: both sources can start at 0 on one device; the tie goes to the larger b-level (x).
TEST(Etf, EarliestStartTiesGoToTheLargerBLevel) {
  const Graph g = ref_graph({{1, 0}, {5, 0}}, {});
  EXPECT_EQ(run(EtfPlacer(), g, 1).order, (std::vector<NodeId>{1, 0}));
  const Assignment two = run(EtfPlacer(), g, 2);
  EXPECT_EQ(two.device_of, (std::vector<DeviceId>{1, 0}));
  // a (1, 10) -> b (1): b starts earliest on a's device (1 < 11).
  const Graph chain = ref_graph({{1, 10}, {1, 0}}, {{0, 1}});
  EXPECT_EQ(run(EtfPlacer(), chain, 2).device_of, (std::vector<DeviceId>{0, 0}));
}

// The critical-path rule by its definition: the teacher's functions, which scan every candidate
// and device at each step; random ties drawn as the placer draws them.
Assignment critical_path_by_definition(const Problem& problem, bool random_ties, std::uint64_t seed,
                                       bool colocate_inputs) {
  ListSchedule s(problem.graph(), problem.cost(), problem.devices(), colocate_inputs);
  std::mt19937_64 rng(seed);
  const auto pick = [&](const auto& items) {
    if (!random_ties || items.size() == 1) return items.front();
    return items[std::uniform_int_distribution<std::size_t>(0, items.size() - 1)(rng)];
  };
  while (!s.done()) {
    const NodeId v = pick(critical_path_selections(s, problem.analysis().b_level()));
    s.place(v, pick(critical_path_devices(s, v)));
  }
  return {problem.devices(), s.device_of(), s.order(), "critical-path"};
}

TEST(CriticalPath, TheIncrementalSelectionIsTheScanOfEveryCandidate) {
  std::mt19937_64 rng(29);
  const auto check = [](const Problem& problem, bool colocate, const std::string& what) {
    for (bool random_ties : {false, true})
      for (std::uint64_t seed : {1, 2}) {
        PlaceOptions o;
        o.seed = seed;
        o.colocate_inputs = colocate;
        const Assignment a = CriticalPathPlacer(random_ties).place(problem, o).assignment;
        const Assignment want = critical_path_by_definition(problem, random_ties, seed, colocate);
        EXPECT_EQ(a.device_of, want.device_of) << what << ", random ties " << random_ties;
        EXPECT_EQ(a.order, want.order) << what << ", random ties " << random_ties;
      }
  };
  for (int trial = 0; trial < 30; ++trial) {  // integral costs: equal b-levels abound
    const Graph g = test::random_dag(rng, {5 + trial * 3, trial % 2 ? 0.1 : 0.3, 4, 10, true});
    check(Problem(g, Platform::reference(1 + trial % 4)), true, "random " + std::to_string(trial));
  }
  workloads::FfnnParams ffnn;
  ffnn.batch = 256;
  ffnn.hidden = 512;
  ffnn.training = true;
  ffnn.set_partition_for(4);
  const Graph g = workloads::generate_ffnn(ffnn);
  for (bool colocate : {true, false})
    check(Problem(g, Platform::hardware(load_hardware_profile("p100"), 4)), colocate,
          "ffnn on p100");
}

// ETF by its definition, independently of the placer's incremental queue: at every step every
// (candidate, device) pair, the earliest start; ties to the larger b-level, the lower op, the
// lower device. With `slack` >= 0, m-ETF: only pairs whose op fits the device's memory share,
// unless none does.
Assignment etf_by_definition(const Problem& problem, bool colocate_inputs, double slack = -1) {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  ListSchedule s(g, problem.cost(), p, colocate_inputs);
  const std::vector<double>& bl = problem.analysis().b_level();
  const std::vector<double> mem = memory_proxy(g);
  double total = 0;
  for (double m : mem) total += m;
  std::vector<double> left(static_cast<std::size_t>(p), (1 + slack) * total / p);
  using Key = std::tuple<double, double, NodeId, DeviceId>;  // start, -b-level, op, device
  while (!s.done()) {
    const double inf = std::numeric_limits<double>::infinity();
    Key fits{inf, 0, 0, 0}, any{inf, 0, 0, 0};
    for (NodeId v : s.candidates())
      for (DeviceId d = 0; d < p; ++d) {
        const Key k{s.earliest_start(v, d), -bl[static_cast<std::size_t>(v)], v, d};
        any = std::min(any, k);
        if (mem[static_cast<std::size_t>(v)] <= left[static_cast<std::size_t>(d)])
          fits = std::min(fits, k);
      }
    const Key& best = slack >= 0 && std::get<0>(fits) < inf ? fits : any;
    const auto [v, d] = std::pair{std::get<2>(best), std::get<3>(best)};
    left[static_cast<std::size_t>(d)] -= mem[static_cast<std::size_t>(v)];
    s.place(v, d);
  }
  return {p, s.device_of(), s.order(), slack >= 0 ? "m-etf" : "etf"};
}

TEST(Etf, TheIncrementalChoiceIsTheScanOfEveryPair) {
  std::mt19937_64 rng(17);
  const auto check = [](const Problem& problem, bool colocate, const std::string& what) {
    PlaceOptions o;
    o.colocate_inputs = colocate;
    for (double slack : {-1.0, 0.0, 0.2}) {  // ETF, m-ETF with tight and looser shares
      const Assignment a = EtfPlacer(slack).place(problem, o).assignment;
      const Assignment want = etf_by_definition(problem, colocate, slack);
      EXPECT_EQ(a.device_of, want.device_of) << what << ", slack " << slack;
      EXPECT_EQ(a.order, want.order) << what << ", slack " << slack;
    }
  };
  // Integral costs: many equal starts, so the ties are exercised.
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 5 + trial * 2, p = 1 + trial % 5;
    const Graph g = test::random_dag(rng, {n, trial % 2 ? 0.1 : 0.3, 10, 10, true});
    check(Problem(g, Platform::reference(p)), true, "random " + std::to_string(trial));
  }
  // Input ops deferred to their first consumer (their other consumers' arrivals change when it
  // is placed), on hardware whose devices differ in nothing but position.
  workloads::FfnnParams ffnn;
  ffnn.batch = 256;
  ffnn.hidden = 512;
  ffnn.training = true;
  ffnn.set_partition_for(4);
  workloads::ChainMMParams mm;
  mm.n = 512;
  mm.set_partition_for(3);
  for (const Graph& g : {workloads::generate_ffnn(ffnn), workloads::generate_chainmm(mm)})
    for (bool colocate : {true, false}) {
      check(Problem(g, Platform::hardware(load_hardware_profile("p100"), 4)), colocate, "p100");
      check(Problem(g, Platform::reference(3)), colocate, "reference");
    }
}

// A time budget spent before the first op: every op is placed in a hurry, largest b-level first
// on its earliest-start device, which is the critical-path placer's rule; spent part-way, the
// ops before that point follow ETF's own order.
TEST(Etf, ASpentTimeBudgetHurriesTheRestAsTheCriticalPathRule) {
  std::mt19937_64 rng(5);
  const Graph g = test::random_dag(rng, {60, 0.1, 10, 10, true});
  const Problem problem(g, Platform::reference(4));
  const PlaceResult hurried = EtfPlacer().place(problem, {0, {0, 1e-9}});
  EXPECT_EQ(hurried.note.rfind("time budget spent after 0 of 60 ops", 0), 0u) << hurried.note;
  EXPECT_EQ(hurried.assignment.device_of,
            CriticalPathPlacer().place(problem, {}).assignment.device_of);
  EXPECT_EQ(hurried.assignment.order, CriticalPathPlacer().place(problem, {}).assignment.order);
  const PlaceResult calm = EtfPlacer().place(problem, {0, {0, 60}});
  EXPECT_EQ(calm.note, "");
  EXPECT_EQ(calm.assignment.device_of, EtfPlacer().place(problem, {}).assignment.device_of);
  EXPECT_NE(calm.assignment.device_of,
            hurried.assignment.device_of);  // the test can tell them apart
}

// m-ETF: four sources with compute (1, 1, 1, 5) and memory (transfer cost) (3, 1, 3, 1) on two
// devices; capacity with no slack = 8 / 2 = 4. ETF: op 3 (largest b-level) -> dev 0 (0-5), then
// ops 0, 1, 2 all start earliest on dev 1. m-ETF: op 3 -> dev 0 (1 of 4 used), op 0 -> dev 1
// (3 used), op 1 -> dev 1 (full), so op 2 must go to dev 0 although it would start earlier on
// dev 1.
TEST(MEtf, RespectsMemoryShares) {
  const Graph g = ref_graph({{1, 3}, {1, 1}, {1, 3}, {5, 1}}, {});
  const Assignment etf = run(EtfPlacer(), g, 2);
  const Assignment metf = run(EtfPlacer(0.0), g, 2);
  EXPECT_EQ(etf.device_of[0], etf.device_of[2]);
  EXPECT_NE(metf.device_of[0], metf.device_of[2]);
  EXPECT_EQ(metf.method, "m-etf");
}

TEST(SimplePlacers, HandComputedAssignments) {
  const Graph chain = ref_graph({{5, 1}, {1, 1}, {1, 1}, {1, 1}}, {{0, 1}, {1, 2}, {2, 3}});
  EXPECT_EQ(run(RoundRobinPlacer(), chain, 3).device_of, (std::vector<DeviceId>{0, 1, 2, 0}));
  EXPECT_EQ(run(BalancedPlacer(), chain, 2).device_of, (std::vector<DeviceId>{0, 1, 1, 1}));
  // m-TOPO: memory 1 each (transfer cost), capacity (1 + 0) x 4 / 2 = 2: two ops per device.
  EXPECT_EQ(run(MTopoPlacer(0.0), chain, 2).device_of, (std::vector<DeviceId>{0, 0, 1, 1}));
  const Assignment r1 = run(RandomPlacer(), chain, 4, 1), r2 = run(RandomPlacer(), chain, 4, 1);
  EXPECT_EQ(r1.device_of, r2.device_of);
  // single: everything on device 0 of identical devices; the chain's makespan its compute, 8.
  const Assignment one = run(SinglePlacer(), chain, 3);
  EXPECT_EQ(one.device_of, (std::vector<DeviceId>{0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(Problem(chain, Platform::reference(3)).simulator().makespan(one.device_of), 8);
}

// single on unequal devices: the one where the whole graph computes fastest, whatever its id
// (device 0 at 30% of its peak's usual efficiency, device 1 as shipped, device 2 with a costly
// launch per op: device 1), and its makespan the graph's compute there, with no transfer.
TEST(SimplePlacers, SinglePicksTheFastestDevice) {
  HardwareProfile hw = load_hardware_profile("p100");
  hw.devices[0].efficiency = 0.3;
  hw.devices[2].launch_overhead = 2e-4;
  workloads::FfnnParams ffnn;
  ffnn.batch = 256;
  ffnn.hidden = 512;
  ffnn.set_partition_for(3);
  const Graph g = workloads::generate_ffnn(ffnn);
  const Problem problem(g, Platform::hardware(hw, 3));
  const Assignment a = SinglePlacer().place(problem, {}).assignment;
  a.validate(g, 3);
  EXPECT_EQ(a.device_of, std::vector<DeviceId>(static_cast<std::size_t>(g.num_nodes()), 1));
  double compute = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) compute += problem.cost().compute(v, 1);
  EXPECT_NEAR(problem.simulator().makespan(a.device_of), compute, 1e-9 * compute);
}

}  // namespace
}  // namespace doppler

namespace doppler {
namespace {

// Two input ops feed two heavy ops on two devices. Without deferral every input starts at 0 on
// device 0 (earliest-start ties), so both consumers are pulled to device 0 to avoid transfers;
// deferred inputs travel with their consumers, which then spread over both devices.
Graph inputs_graph() {
  GraphBuilder b;
  for (int i = 0; i < 4; ++i) {
    Node n;
    n.kind = i < 2 ? OpKind::input : OpKind::einsum;
    n.compute_cost = i < 2 ? 0 : 10;
    n.transfer_cost = i < 2 ? 100 : 1;
    b.add_node(n);
  }
  b.add_edge(0, 2);
  b.add_edge(1, 3);
  return b.build();
}

TEST(Inputs, DeferredInputsFollowTheirConsumer) {
  const Graph g = inputs_graph();
  const Problem problem(g, Platform::reference(2));
  ListSchedule s(g, problem.cost(), 2, /*defer_inputs=*/true);
  std::vector<NodeId> cands = s.candidates();
  std::sort(cands.begin(), cands.end());
  EXPECT_EQ(cands, (std::vector<NodeId>{2, 3}));  // inputs are never candidates
  EXPECT_EQ(s.arrival(2, 1), 0);                  // an unplaced input arrives anywhere at 0
  s.place(2, 1);
  EXPECT_EQ(s.device(0), 1);
  EXPECT_TRUE(!s.done());
  const Assignment with = CriticalPathPlacer().place(problem, {}).assignment;
  EXPECT_EQ(with.device_of[0], with.device_of[2]);
  EXPECT_EQ(with.device_of[1], with.device_of[3]);
  EXPECT_NE(with.device_of[2], with.device_of[3]);
  EXPECT_EQ(problem.simulator().makespan(with.device_of), 10);
  PlaceOptions raw;
  raw.colocate_inputs = false;
  const Assignment without = CriticalPathPlacer().place(problem, raw).assignment;
  EXPECT_EQ(without.device_of[0], 0);
  EXPECT_EQ(without.device_of[1], 0);
  EXPECT_GT(problem.simulator().makespan(without.device_of), 10);
}

TEST(Inputs, ColocateMovesInputsToTheirFirstConsumer) {
  const Graph g = inputs_graph();
  Assignment a{2, {0, 0, 1, 0}, {1, 3, 0, 2}, ""};
  colocate_inputs(g, a);
  EXPECT_EQ(a.device_of, (std::vector<DeviceId>{1, 0, 1, 0}));
}

}  // namespace
}  // namespace doppler
