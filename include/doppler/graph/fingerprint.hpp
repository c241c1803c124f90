#pragma once
// A 64-bit fingerprint of a graph's structure and costs, stored in checkpoints so that a run is
// only resumed on the graph it was started on.
#include <cstdint>
#include <string>

#include "doppler/graph/graph.hpp"

namespace doppler {

/// FNV-1a over the node count, every node's kind, FLOPs, output bytes, group and reference
/// costs, and every edge (src, dst, bytes). Names and metadata are not included.
std::uint64_t graph_fingerprint(const Graph& g);

/// The fingerprint as 16 hex digits.
std::string fingerprint_hex(std::uint64_t f);

}  // namespace doppler
