// Engine benchmarks: overhead per op (empty kernels, with and without cross-device copies) and
// achieved GFLOP/s of real kernels against a single-thread BLAS loop over the same blocks.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include <benchmark/benchmark.h>
#include <cblas.h>

#include "doppler/engine/engine.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

Assignment random_assignment(const Graph& g, int p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Assignment a;
  a.devices = p;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    a.device_of.push_back(static_cast<DeviceId>(rng() % static_cast<unsigned>(p)));
  return a;
}

// Empty kernels on a random DAG (1,000 ops) over P devices: dispatch, dataflow and copy
// hand-offs only. Reports microseconds per op.
void BM_EngineOverheadPerOp(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  workloads::WorkloadSpec s;
  s.name = "random-dag";
  s.params = {{"ops", "1000"}, {"width", "16"}, {"density", "0.1"}};
  const Graph g = workloads::generate_workload(s);
  EngineOptions o;
  o.devices = p;
  o.kernels = KernelMode::empty;
  Engine e(g, o);
  const Assignment a = random_assignment(g, p, 1);
  double total = 0;
  int copies = 0;
  for (auto _ : state) {
    const EngineResult r = e.run(a);
    total += r.makespan_seconds;
    copies = r.copies;
  }
  state.counters["us_per_op"] =
      1e6 * total / static_cast<double>(state.iterations()) / g.num_nodes();
  state.counters["copies"] = copies;
}
BENCHMARK(BM_EngineOverheadPerOp)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);

// Empty kernels on one chain per device (no copies): the cost of one op on a busy worker.
void BM_EngineOverheadChain(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0)), len = 1000;
  GraphBuilder b;
  Assignment a;
  a.devices = p;
  for (int d = 0; d < p; ++d)
    for (int i = 0; i < len; ++i) {
      Node n;
      n.compute_cost = 1;
      n.transfer_cost = 1;
      const NodeId v = b.add_node(n);
      if (i > 0) b.add_edge(v - 1, v);
      a.device_of.push_back(d);
    }
  const Graph g = b.build();
  EngineOptions o;
  o.devices = p;
  o.kernels = KernelMode::empty;
  Engine e(g, o);
  double total = 0;
  for (auto _ : state) total += e.run(a).makespan_seconds;
  state.counters["us_per_op"] = 1e6 * total / static_cast<double>(state.iterations()) / len;
}
BENCHMARK(BM_EngineOverheadChain)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

Graph chainmm(int devices) {
  workloads::WorkloadSpec s;
  s.name = "chainmm";
  s.params = {{"n", "1024"}};
  s.dtype = "f32";
  s.devices = devices;
  return workloads::generate_workload(s);
}

// Real kernels of chainmm n=1024 (2 x 4.3 GFLOP in 8P-block matmuls) placed by critical-path on
// P devices (cpu-threads profile). Reports GFLOP/s of the whole run.
void BM_EngineChainMM(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  const Graph g = chainmm(p);
  const Problem problem(g, Platform::hardware(load_hardware_profile("cpu"), p));
  const Assignment a = make_placer("critical-path")->place(problem, {}).assignment;
  EngineOptions o;
  o.devices = p;
  Engine e(g, o);
  double total = 0;
  for (auto _ : state) total += e.run(a).makespan_seconds;
  state.counters["GFLOP/s"] =
      e.total_flops() * static_cast<double>(state.iterations()) / total / 1e9;
}
BENCHMARK(BM_EngineChainMM)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Time ops of one run waited ready on an idle device, in seconds: over every op, start -
// max(ready, the previous finish on its device), ops taken in order of start.
double ready_idle_seconds(const Schedule& sc, int devices) {
  std::vector<std::size_t> order(sc.start.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return sc.start[x] < sc.start[y]; });
  std::vector<double> prev(static_cast<std::size_t>(devices), 0.0);
  double waited = 0;
  for (std::size_t i : order) {
    if (sc.device[i] < 0) continue;  // not run
    double& p = prev[static_cast<std::size_t>(sc.device[i])];
    waited += std::max(0.0, sc.start[i] - std::max(sc.ready[i], p));
    p = sc.finish[i];
  }
  return waited;
}

// The demo's Llama layer (workloads::demo_workload_spec) on 2 devices under a random placement
// (74 copies of 2-512 KB): a copy worker shares its device's core and used to run its whole
// queue while a ready op waited. Reports per run the time ops waited ready on an idle device
// (us_ready_idle, ready_idle_seconds; computed after the timed runs) and the makespan; the
// simulator starts a ready op at once, so us_ready_idle is what it cannot see.
void BM_EngineReadyOpsBesideCopies(benchmark::State& state) {
  const Graph g = workloads::generate_workload(workloads::demo_workload_spec(2));
  EngineOptions o;
  o.devices = 2;
  Engine e(g, o);
  const Assignment a = random_assignment(g, 2, 5);
  std::vector<Schedule> runs;
  for (auto _ : state) runs.push_back(e.run(a).schedule);
  double waited = 0, total = 0;
  for (const Schedule& sc : runs) {
    waited += ready_idle_seconds(sc, 2);
    total += sc.makespan;
  }
  const auto n = static_cast<double>(runs.size());
  state.counters["us_ready_idle"] = 1e6 * waited / n;
  state.counters["ms_makespan"] = 1e3 * total / n;
  state.counters["copies"] = static_cast<double>(e.run(a).copies);
}
BENCHMARK(BM_EngineReadyOpsBesideCopies)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same einsum blocks (chainmm for one device) as a plain single-thread SGEMM loop.
void BM_BlasLoopChainMM(benchmark::State& state) {
  const Graph g = chainmm(static_cast<int>(state.range(0)));
  openblas_set_num_threads(1);
  struct Gemm {
    int m, n, k;
  };
  std::vector<Gemm> gemms;
  double flops = 0;
  std::size_t biggest = 1;
  for (const Node& n : g.nodes())
    if (n.exec && n.exec->op == "einsum") {
      const auto& in0 = g.node(n.exec->inputs[0].src).exec->shape;
      const int m = static_cast<int>(n.exec->shape[0]), c = static_cast<int>(n.exec->shape[1]);
      const int k =
          static_cast<int>(n.exec->inputs[0].shape.empty() ? in0[1] : n.exec->inputs[0].shape[1]);
      gemms.push_back({m, c, k});
      flops += 2.0 * m * c * k;
      biggest = std::max(biggest, static_cast<std::size_t>(std::max({m * k, k * c, m * c})));
    }
  std::vector<float> a(biggest, 0.5f), b(biggest, 0.25f), c(biggest);
  double total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const Gemm& x : gemms)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x.m, x.n, x.k, 1.0f, a.data(), x.k,
                  b.data(), x.n, 0.0f, c.data(), x.n);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state.counters["GFLOP/s"] = flops * static_cast<double>(state.iterations()) / total / 1e9;
}
BENCHMARK(BM_BlasLoopChainMM)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace doppler

BENCHMARK_MAIN();
