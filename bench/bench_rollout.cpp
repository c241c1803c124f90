// One rollout of the shipped pretrained policy (doppler:samples=1: features, both encoders, the
// greedy SEL/PLC episode and its one simulation) on `doppler generate random-dag -p ops=N
// -p seed=1` for P = 64 devices, at 2,000 and 20,000 ops (issue 25: under a second at 20,000).
// Google Benchmark; the policy is loaded once, outside the timing. (bench_learned.cpp has its
// own main and table, hence a separate binary.)
#include <benchmark/benchmark.h>

#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/doppler_policy.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace {

using namespace doppler;

void BM_DopplerRollout(benchmark::State& state) {
  static DopplerPolicy policy = DopplerPolicy::load(default_policy_path());
  workloads::RandomDagParams params;
  params.ops = state.range(0);
  params.seed = 1;
  const Graph g = workloads::generate_random_dag(params);
  const Problem problem(g, Platform::reference(64));
  SampleOptions o;
  o.samples = 1;
  for (auto _ : state) benchmark::DoNotOptimize(policy.sample(problem, o).best_makespan);
  state.SetLabel(std::to_string(g.num_nodes()) + " ops, 64 devices");
}
BENCHMARK(BM_DopplerRollout)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
