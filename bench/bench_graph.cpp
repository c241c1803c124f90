// Graph core benchmarks: parsing the reference text format, running the analyses and the lower
// bound with transfers.
#include <filesystem>
#include <random>

#include <benchmark/benchmark.h>

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/communication_bound.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/io/reference_text.hpp"
#include "doppler/util/atomic_file.hpp"

namespace {

const std::filesystem::path kShared =
    std::filesystem::path(DOPPLER_SOURCE_DIR).parent_path() / "shared" / "reference-graphs";

// A layered random DAG with `n` nodes and reference costs.
doppler::Graph layered(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  doppler::GraphBuilder b;
  const int width = 32;
  for (int v = 0; v < n; ++v) {
    doppler::Node nd;
    nd.compute_cost = static_cast<double>(1 + rng() % 100);
    nd.transfer_cost = static_cast<double>(1 + rng() % 100);
    b.add_node(nd);
    if (v >= width)
      for (int k = 0; k < 3; ++k) b.add_edge(v - width + static_cast<int>(rng() % width), v);
  }
  return b.build();
}

void BM_ParseReferenceText(benchmark::State& state) {
  const auto path = kShared / "gdp_full_transformer_layer_261nodes.txt";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("../shared/reference-graphs is absent");
    return;
  }
  const std::string text = doppler::read_file(path);
  for (auto _ : state) benchmark::DoNotOptimize(doppler::parse_reference_text(text, "g.txt"));
}
BENCHMARK(BM_ParseReferenceText)->Unit(benchmark::kMicrosecond);

void BM_JsonRoundTrip(benchmark::State& state) {
  const doppler::Graph g = layered(static_cast<int>(state.range(0)), 1);
  for (auto _ : state) {
    const std::string j = doppler::format_graph_json(g);
    benchmark::DoNotOptimize(doppler::parse_graph_json(j, "g.json"));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_JsonRoundTrip)->Arg(1000)->Arg(20000)->Unit(benchmark::kMillisecond);

void BM_Analysis(benchmark::State& state) {
  const doppler::Graph g = layered(static_cast<int>(state.range(0)), 2);
  const doppler::CostModel cost = doppler::CostModel::reference(g);
  for (auto _ : state) benchmark::DoNotOptimize(doppler::GraphAnalysis(g, cost).lower_bound(8));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Analysis)->Arg(229)->Arg(20000)->Unit(benchmark::kMicrosecond);

// The lower bound with transfers (O(N + E log E)) on the same graphs, 64 devices.
void BM_TransferBound(benchmark::State& state) {
  const doppler::Graph g = layered(static_cast<int>(state.range(0)), 2);
  const doppler::CostModel cost = doppler::CostModel::reference(g);
  for (auto _ : state) benchmark::DoNotOptimize(doppler::communication_lower_bound(g, cost, 64));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_TransferBound)->Arg(229)->Arg(20000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
