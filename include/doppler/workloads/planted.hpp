#pragma once
// planted: random task graphs with a known optimal makespan by construction (Kwok and Ahmad's
// RGPOS idea), together with the assignment that reaches it. docs/planted.md explains the
// construction and why the optimum is optimal.
#include <cstdint>

#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler::workloads {

/// Parameters of a planted instance.
struct PlantedParams {
  std::int64_t ops = 1000;  ///< total tasks N (devices .. 1,000,000)
  int devices = 4;          ///< devices P (1..kMaxDevices); the optimum is for exactly P devices
  /// Mean edge transfer cost / mean task compute cost (0..100), met up to integer rounding
  /// whenever there are edges. Planted cross-device edges cannot cost more than their slack,
  /// so with few tasks per device the same-device edges carry most of it: the graph's
  /// "cross_ratio" parameter reports the cross-device edges' own mean ratio.
  double ratio = 1.0;
  double density = 2.0;    ///< mean extra (non-chain) in-degree of a task (0..100)
  std::uint64_t seed = 0;  ///< every random choice derives from it
};

/// A planted instance: the graph, the planted assignment and its makespan.
struct PlantedInstance {
  Graph graph;  ///< reference costs: integer compute_cost per node, integer cost per edge
  /// Planted device of every op; `order` lists the ops by planted start time (ties: device).
  /// Its simulated makespan (reference model, P devices, fifo or priority) is `optimum`.
  Assignment assignment;
  /// L = total compute / P: no assignment to P devices can finish earlier. An integer
  /// (exactly representable, below 2^53).
  double optimum = 0;
};

/// Generates a planted instance. Device d runs ceil or floor of N / P tasks that tile [0, L]
/// back to back (integer lengths, each at least half the mean of 1e9); consecutive tasks of a
/// device are chained by an edge; extra edges go only from a task that ends no later than its
/// consumer starts, and an edge between two devices costs at most that slack. Node ids are a
/// seeded shuffle (they do not reveal the devices). Physical view: flops = 2 x compute_cost,
/// edge bytes = edge transfer cost, out_bytes = the largest of its out-edges, node
/// transfer_cost = 0. Metadata: name "planted", origin "generated", params ops, devices,
/// optimum (L, exact decimal), ratio (achieved), cross_ratio, target_ratio, density, seed.
/// Deterministic for a seed. InputError on invalid parameters.
PlantedInstance generate_planted(const PlantedParams& p);

}  // namespace doppler::workloads
