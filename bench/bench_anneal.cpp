// Annealer throughput: simulator calls per second of `local-search`'s annealer with three ways of
// evaluating a move: full simulation (eval 0), early abort (eval 1: Simulator::makespan_below with
// the move's Metropolis threshold) and incremental evaluation with early abort (eval 2:
// IncrementalSim resumes from a checkpoint before the move's first change), on the generated
// random DAG at 200, 2,000 and 20,000 ops on 8 and 64 devices, starting from ETF. All three make
// identical decisions (tests/sim/test_early_abort.cpp, tests/sim/test_incremental.cpp), so the
// ratio of calls/s is the speed-up of move evaluation. BM_ParallelChains: `local-search` with a
// time budget of 0.5 s on 1, 2 and 4 threads: calls/s (throughput of the chains together) and how
// far past the budget the run ended (overshoot_pct; the bound is 5%).
#include <benchmark/benchmark.h>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/list_placers.hpp"
#include "doppler/util/stopwatch.hpp"
#include "doppler/workloads/workload.hpp"

namespace {

using namespace doppler;

// The generated random DAG of `ops` ops, seed 1.
Graph random_dag(std::int64_t ops) {
  workloads::WorkloadSpec spec;
  spec.name = "random-dag";
  spec.params["ops"] = std::to_string(ops);
  spec.params["seed"] = "1";
  return workloads::generate_workload(spec);
}

// args: ops, devices, evaluation (0 full, 1 early abort, 2 incremental + early abort). One
// iteration = 2,000 annealer calls.
void BM_AnnealCalls(benchmark::State& state) {
  const Graph g = random_dag(state.range(0));
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

// args: ops, threads. One iteration = one local-search run of 0.5 s on the 8-device DAG.
void BM_ParallelChains(benchmark::State& state) {
  const Graph g = random_dag(state.range(0));
  const Problem problem(g, Platform::reference(8));
  constexpr double kSeconds = 0.5;
  std::int64_t calls = 0;
  double worst = 0;
  for (auto _ : state) {
    PlaceOptions o;
    o.budget = {0, kSeconds};
    o.threads = static_cast<int>(state.range(1));
    const Stopwatch clock;
    const PlaceResult r = make_placer("local-search")->place(problem, o);
    worst = std::max(worst, clock.seconds());
    calls += r.spent.calls;
    benchmark::DoNotOptimize(r.assignment.device_of.data());
  }
  state.counters["calls_per_s"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
  state.counters["overshoot_pct"] = 100 * (worst / kSeconds - 1);
}
BENCHMARK(BM_ParallelChains)
    ->ArgsProduct({{200, 2000, 20000}, {1, 2, 4}})
    ->ArgNames({"ops", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace
BENCHMARK_MAIN();
