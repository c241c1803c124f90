#pragma once
// The reference implementation's text format (github.com/xinyuyao/Doppler, compute_graph/):
//   line 1: total block count T, input blocks included
//   line 2: ids of the K input blocks (comma separated; dropped, never placed)
//   line 3: edge sources, line 4: edge destinations (numbering 0..N-1, N = T - K)
//   lines 5..4+N: "C,M" or "C,M,type" per node (C -> compute_cost, M -> transfer_cost)
// Trailing commas, blanks and CRLF line ends are tolerated; blank lines after the nodes too.
#include <string>
#include <string_view>
#include <vector>

#include "doppler/graph/graph.hpp"
#include "doppler/util/read_limits.hpp"

namespace doppler {

/// Parses reference text. `file` names the source in error messages. Duplicate edges collapse
/// (a warning is appended to `warnings` when given). Throws InputError "FILE:LINE: problem",
/// also when the graph has more ops or edges than `limits` allow.
Graph parse_reference_text(std::string_view text, const std::string& file,
                           std::vector<std::string>* warnings = nullptr,
                           const ReadLimits& limits = read_limits());

/// Formats `g` as reference text with the type column. Input-kind nodes are listed as input
/// blocks (line 2, by their ids) and dropped from the body, as the reference does; the other
/// nodes are renumbered in id order. Throws InputError when a placed node lacks reference costs.
std::string format_reference_text(const Graph& g);

}  // namespace doppler
