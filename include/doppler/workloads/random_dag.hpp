#pragma once
// random-dag: synthetic layered DAGs with a target op count, width, edge density and
// computation-to-communication ratio, for generalisation tests and scaling benchmarks.
#include <cstdint>

#include "doppler/graph/graph.hpp"

namespace doppler::workloads {

/// Parameters of a layered random DAG.
struct RandomDagParams {
  std::int64_t ops = 1000;  ///< total ops (1 .. 1,000,000)
  std::int64_t width = 32;  ///< largest layer; layer sizes are uniform in [1, width]
  double density = 0.2;     ///< probability of each edge between consecutive layers, in (0, 1]
  double ccr = 1.0;         ///< mean compute cost / mean edge transfer cost (> 0)
  std::uint64_t seed = 0;   ///< every random choice derives from it
};

/// A layered DAG: nodes in layer order (ids are a topological order), every node of a layer
/// after the first has at least one parent in the previous layer. Reference costs: compute
/// uniform in [0.5e9, 1.5e9), transfer costs scaled so that the mean compute cost over nodes
/// divided by the mean transfer cost over edges equals ccr exactly. Physical view: flops =
/// 2 x compute_cost, out_bytes = transfer_cost. No exec descriptions. InputError on invalid
/// parameters.
Graph generate_random_dag(const RandomDagParams& p);

}  // namespace doppler::workloads
