// List schedulers' cost as the graph grows: critical-path, HEFT, ETF, m-ETF and DSC on the
// generated random DAG (seed 1) at 2,000, 20,000 and 100,000 ops on 8 and 64 devices, reference
// model. Each is a start of every search (local-search, multilevel, doppler-search, auto), so
// none may grow quadratically with the graph (ETF scanned every ready (op, device) pair at every
// step until it became incremental: src/heuristics/etf_queue.hpp). Time per placement; the
// counter ops_per_s is ops placed per second.
#include <memory>

#include <benchmark/benchmark.h>

#include "doppler/heuristics/placer.hpp"
#include "doppler/workloads/workload.hpp"

namespace {

using namespace doppler;

const char* const kMethods[] = {"critical-path", "heft", "etf", "m-etf", "dsc"};

// args: method index (kMethods), ops, devices.
void BM_ListPlacer(benchmark::State& state) {
  workloads::WorkloadSpec spec;
  spec.name = "random-dag";
  spec.params["ops"] = std::to_string(state.range(1));
  spec.params["seed"] = "1";
  const Graph g = workloads::generate_workload(spec);
  const Problem problem(g, Platform::reference(static_cast<int>(state.range(2))));
  problem.analysis();  // b-levels once, outside the timing
  const auto placer = make_placer(kMethods[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(placer->place(problem, {}).assignment.device_of);
  state.SetLabel(kMethods[state.range(0)]);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(g.num_nodes()),
                                                   benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ListPlacer)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {2000, 20000, 100000}, {8, 64}})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.2);

}  // namespace

BENCHMARK_MAIN();
