// Annealer throughput: simulator calls per second of `local-search`'s annealer with three ways of
// evaluating a move: full simulation (eval 0), early abort (eval 1: Simulator::makespan_below with
// the move's Metropolis threshold) and incremental evaluation with early abort (eval 2:
// IncrementalSim resumes from a checkpoint before the move's first change), on the generated
// random DAG at 200, 2,000 and 20,000 ops on 8 and 64 devices, starting from ETF. All three make
// identical decisions (tests/sim/test_early_abort.cpp, tests/sim/test_incremental.cpp), so the
// ratio of calls/s is the speed-up of move evaluation.
#include <benchmark/benchmark.h>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/list_placers.hpp"
#include "doppler/workloads/workload.hpp"

namespace {

using namespace doppler;

// args: ops, devices, evaluation (0 full, 1 early abort, 2 incremental + early abort). One
// iteration = 2,000 annealer calls.
void BM_AnnealCalls(benchmark::State& state) {
  workloads::WorkloadSpec spec;
  spec.name = "random-dag";
  spec.params["ops"] = std::to_string(state.range(0));
  spec.params["seed"] = "1";
  const Graph g = workloads::generate_workload(spec);
  const Problem problem(g, Platform::reference(static_cast<int>(state.range(1))));
  const Assignment start = EtfPlacer().place(problem, {}).assignment;
  const double start_ms = problem.simulator().makespan(start.device_of);
  AnnealSettings settings;
  settings.early_abort = state.range(2) != 0;
  settings.incremental = state.range(2) == 2;
  std::int64_t calls = 0;
  std::uint64_t seed = 0;
  for (auto _ : state) {
    BudgetedEvaluator b(problem.simulator(), {2000, 0});
    const AnnealResult r = anneal(problem, start.device_of, start_ms, b, settings, ++seed);
    calls += r.evaluations;
    benchmark::DoNotOptimize(r.best_makespan);
  }
  state.counters["calls_per_s"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AnnealCalls)
    ->ArgsProduct({{200, 2000, 20000}, {8, 64}, {0, 1, 2}})
    ->ArgNames({"ops", "devices", "eval"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
BENCHMARK_MAIN();
