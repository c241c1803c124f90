// The optimal placer (branch and bound) on random DAGs of 12..30 ops on 4 devices, reference
// model: time to prove the optimum (or the gap at the time limit), per graph. Graphs: layered
// random DAGs (workloads/random_dag.hpp) with width 5, density 0.3, ccr 1, seeds 1..3.
// Counters: nodes visited, proven (1/0), gap (%) and the ratio of the best list scheduler's
// makespan to the optimum. Run: build/bench/bench_optimal [--benchmark_filter=/20/]
#include <benchmark/benchmark.h>

#include "doppler/heuristics/optimal.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace {

using namespace doppler;

void BM_Optimal(benchmark::State& state) {
  workloads::RandomDagParams params;
  params.ops = state.range(0);
  params.width = 5;
  params.density = 0.3;
  params.ccr = 1.0;
  params.seed = static_cast<std::uint64_t>(state.range(1));
  const Graph g = workloads::generate_random_dag(params);
  const Problem problem(g, Platform::reference(4));
  OptimalPlacer placer(60);
  double heuristic = 1e300;
  for (const char* spec : {"critical-path", "heft", "etf"})
    heuristic = std::min(
        heuristic, problem.simulator().makespan(make_placer(spec)->place(problem, {}).assignment));
  OptimalResult r;
  for (auto _ : state) {
    r = placer.solve(problem).result;
    benchmark::DoNotOptimize(r.makespan);
  }
  state.counters["nodes"] = static_cast<double>(r.nodes);
  state.counters["proven"] = r.proven ? 1 : 0;
  state.counters["gap_pct"] = 100 * r.gap();
  state.counters["heuristic_ratio"] = heuristic / r.makespan;
  state.counters["seconds"] = r.seconds;
}

BENCHMARK(BM_Optimal)
    ->ArgsProduct({{12, 16, 20, 24, 30}, {1, 2, 3}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
