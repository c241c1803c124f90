// Search placers: exhaustive is optimal on random tiny instances, local search finds the optimum
// on at least 90% of them within 20,000 evaluations and is never worse than its DSC and level
// placer starts, enumopt places groups sensibly.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/sanitized.hpp"
#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

TEST(Exhaustive, MatchesAnIndependentEnumerationAndRefusesLargeProblems) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const Graph g = test::random_dag(rng, {7, 0.3, 9, 9, true});
    const Problem problem(g, Platform::reference(3));
    const Assignment a = ExhaustivePlacer().place(problem, {}).assignment;
    // Plain odometer over all 3^7 assignments, without symmetry breaking.
    std::vector<DeviceId> dev(7, 0);
    double best = 1e300;
    for (int code = 0; code < 2187; ++code) {
      for (int i = 0, c = code; i < 7; ++i, c /= 3) dev[static_cast<std::size_t>(i)] = c % 3;
      best = std::min(best, problem.simulator().makespan(dev));
    }
    EXPECT_EQ(problem.simulator().makespan(a.device_of), best);
  }
  const Graph big = test::random_dag(rng, {14, 0.2, 9, 9, true});
  EXPECT_THROW(ExhaustivePlacer().place(Problem(big, Platform::reference(3)), {}).assignment,
               InputError);
}

TEST(SearchPlacers, ExhaustiveBeatsEveryPlacerAndLocalSearchFindsTheOptimum) {
  std::mt19937_64 rng(2026);
  int optimal = 0;
  const int instances = test::kSanitized ? 60 : 200;
  for (int trial = 0; trial < instances; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 4 + static_cast<int>(rng() % 9);  // 4..12 ops
    opt.edge_prob = 0.15 + static_cast<double>(rng() % 40) / 100;
    opt.max_compute = 10;
    opt.max_transfer = static_cast<double>(2 + rng() % 12);
    const Graph g = test::random_dag(rng, opt);
    const int p = 2 + static_cast<int>(rng() % 2);  // 2..3 devices
    const Problem problem(g, Platform::reference(p));
    const double best =
        problem.simulator().makespan(ExhaustivePlacer().place(problem, {}).assignment.device_of);
    for (const PlacerInfo& info : placer_infos()) {
      if (info.name == "exhaustive") continue;
      const Assignment a = make_placer(info.name)
                               ->place(problem, {static_cast<std::uint64_t>(trial), {2000, 0}})
                               .assignment;
      EXPECT_GE(problem.simulator().makespan(a.device_of), best)
          << info.name << " beat the optimum on trial " << trial;
    }
    const Assignment ls = LocalSearchPlacer()
                              .place(problem, {static_cast<std::uint64_t>(trial), {20000, 0}})
                              .assignment;
    optimal += problem.simulator().makespan(ls.device_of) == best;
  }
  EXPECT_GE(optimal, instances * 9 / 10)
      << "local search found the optimum on " << optimal << " of " << instances;
  RecordProperty("local_search_optimal", optimal);
}

// Two tensor ops of two independent blocks each (the second reads the first block-wise):
// enumopt places each op's blocks on different devices, aligned with their producers.
TEST(EnumOpt, PlacesBlocksOfATensorOpApart) {
  GraphBuilder b;
  for (int i = 0; i < 4; ++i) {
    Node n;
    n.group = i / 2;
    n.compute_cost = 10;
    n.transfer_cost = 100;
    b.add_node(n);
  }
  b.add_edge(0, 2);
  b.add_edge(1, 3);
  const Graph g = b.build();
  const Problem problem(g, Platform::reference(2));
  EnumOptPlacer enumopt;
  const PlaceResult placed = enumopt.place(problem, {});
  const Assignment& a = placed.assignment;
  EXPECT_NE(a.device_of[0], a.device_of[1]);
  EXPECT_EQ(a.device_of[0], a.device_of[2]);
  EXPECT_EQ(a.device_of[1], a.device_of[3]);
  EXPECT_EQ(problem.simulator().makespan(a.device_of), 20);
  EXPECT_GT(placed.spent.calls, 0);
}

// dsc=1 and levels=1 add DSC's and the level placer's placements to local-search's starts (the
// starved rule of `auto`). On a layered DAG on more devices than its widest layer DSC beats every
// list scheduler (300 ops), and the level placer beats DSC (2,000 ops); with too few calls for
// the annealer to catch up, the search with the start ends at most at that placement, without
// it above.
TEST(LocalSearch, DscAndLevelsStartsAreNeverWorseThanTheirPlacements) {
  const auto makespan = [](const Problem& problem, const std::string& spec, std::int64_t calls) {
    const PlaceOptions opt{3, {calls, 0}};
    return problem.simulator().makespan(
        make_placer(spec)->place(problem, opt).assignment.device_of);
  };
  const Graph small_graph = workloads::generate_random_dag({300, 32, 0.2, 1.0, 7});
  const Problem small(small_graph, Platform::reference(64));
  const double dsc = makespan(small, "dsc", 1);
  EXPECT_LE(makespan(small, "local-search:dsc=1", 12), dsc);
  EXPECT_GT(makespan(small, "local-search", 12), dsc)
      << "12 calls should not reach DSC's placement";
  const Graph deep_graph = workloads::generate_random_dag({2000, 32, 0.2, 1.0, 1});
  const Problem deep(deep_graph, Platform::reference(64));
  const double levels = makespan(deep, "levels", 40);
  EXPECT_LE(makespan(deep, "local-search:dsc=1,levels=1", 60), levels);
  EXPECT_GT(makespan(deep, "local-search:dsc=1", 60), levels)
      << "60 calls should not reach the level placer's placement from DSC's";
  EXPECT_NE(test::error_of([] { make_placer("local-search:dsc=2"); }), "");
  EXPECT_NE(test::error_of([] { make_placer("local-search:levels=-1"); }), "");
}

}  // namespace
}  // namespace doppler
