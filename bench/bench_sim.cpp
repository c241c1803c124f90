// Simulator throughput: simulations per second on the reference graphs (reference model, random
// assignments on 4 devices) and on a generated 2,000-op random DAG on 8 devices (hardware and
// reference models), plus
// the multi-threaded batch API. Target: >= 50,000 simulations/s of the 229-op Llama layer on one
// core.
#include <filesystem>
#include <random>

#include <benchmark/benchmark.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/sim/simulator.hpp"
#include "doppler/workloads/workload.hpp"

namespace {

using namespace doppler;

const std::filesystem::path kShared =
    std::filesystem::path(DOPPLER_SOURCE_DIR).parent_path() / "shared" / "reference-graphs";

std::vector<std::vector<DeviceId>> random_assignments(int n, int p, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<DeviceId>> out(static_cast<std::size_t>(count),
                                         std::vector<DeviceId>(static_cast<std::size_t>(n)));
  for (auto& a : out)
    for (auto& d : a) d = static_cast<DeviceId>(rng() % static_cast<unsigned>(p));
  return out;
}

// The generated random DAG of `n` ops (doppler generate random-dag -p ops=n).
Graph random_dag(int n) {
  workloads::WorkloadSpec spec;
  spec.name = "random-dag";
  spec.params["ops"] = std::to_string(n);
  return workloads::generate_workload(spec);
}

void run_sims(benchmark::State& state, const Graph& g, const Platform& platform) {
  const Simulator sim(g, platform);
  const auto batch = random_assignments(g.num_nodes(), platform.devices(), 256, 1);
  SimWorkspace ws;
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(sim.makespan(batch[i], ws));
    i = (i + 1) % batch.size();
  }
  state.counters["sims_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["ops"] = g.num_nodes();
}

void BM_ReferenceGraph(benchmark::State& state, const std::string& file) {
  const auto path = kShared / file;
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("../shared/reference-graphs is absent");
    return;
  }
  const Graph g = load_graph(path);
  run_sims(state, g, Platform::reference(4));
}
BENCHMARK_CAPTURE(BM_ReferenceGraph, chain_mm, std::string("gdp_chain_mm_112nodes.txt"));
BENCHMARK_CAPTURE(BM_ReferenceGraph, ffnn, std::string("gdp_ffnn_192nodes.txt"));
BENCHMARK_CAPTURE(BM_ReferenceGraph, llama_block,
                  std::string("gdp_transformer_block_215nodes.txt"));
BENCHMARK_CAPTURE(BM_ReferenceGraph, llama_layer,
                  std::string("gdp_full_transformer_layer_261nodes.txt"));

void BM_RandomDag2000_V100(benchmark::State& state) {
  const Graph g = random_dag(2000);
  run_sims(state, g, Platform::hardware(load_hardware_profile("v100"), 8));
}
BENCHMARK(BM_RandomDag2000_V100);

void BM_RandomDag2000_Reference(benchmark::State& state) {
  const Graph g = random_dag(2000);
  run_sims(state, g, Platform::reference(8));
}
BENCHMARK(BM_RandomDag2000_Reference);

// The batch API over `threads` threads (one batch of 1,024 assignments per iteration).
void BM_BatchLlamaLayer(benchmark::State& state) {
  const auto path = kShared / "gdp_full_transformer_layer_261nodes.txt";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("../shared/reference-graphs is absent");
    return;
  }
  const Graph g = load_graph(path);
  const Simulator sim(g, Platform::reference(4));
  const auto batch = random_assignments(g.num_nodes(), 4, 1024, 2);
  for (auto _ : state)
    benchmark::DoNotOptimize(sim.makespans(batch, static_cast<int>(state.range(0))));
  state.counters["sims_per_s"] = benchmark::Counter(
      1024.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BatchLlamaLayer)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
