#pragma once
// Doppler's own JSON graph format (schema in docs/formats.md):
//   {"format": "doppler-graph", "version": 1, "name": ..., "origin": ..., "params": {...},
//    "units": {...}, "nodes": [{"id", "name", "kind", "flops", "out_bytes", "group",
//    "compute_cost", "transfer_cost", "exec"}...], "edges": [[src, dst], [src, dst, bytes] or
//    [src, dst, {"bytes": b, "transfer_cost": c}]...], "constants": [{"name", "shape",
//    "dtype": "f32", "data": base64 of little-endian f32}...] (optional)}
// The writer puts one node and one edge per line and is deterministic, so JSON -> JSON is
// byte-identical.
#include <string>
#include <string_view>

#include "doppler/graph/graph.hpp"
#include "doppler/util/read_limits.hpp"

namespace doppler {

/// Parses a doppler-graph JSON document. Throws InputError "FILE:LINE: problem", also when the
/// graph has more nodes or edges than `limits` allow (checked while parsing), or constant
/// tensors of more than `limits.max_constant_bytes` bytes.
Graph parse_graph_json(std::string_view text, const std::string& file,
                       std::vector<std::string>* warnings = nullptr,
                       const ReadLimits& limits = read_limits());

/// Formats `g` as a doppler-graph JSON document.
std::string format_graph_json(const Graph& g);

}  // namespace doppler
