#pragma once
// Graphviz DOT task graphs as written by the tools of Oliver Sinnen's group (Task Scheduling for
// Parallel Systems) and their derivatives (schema and rules in docs/formats.md):
//   digraph "name" { Processors=4; a [Weight=3]; b [Weight=4]; a -> b [Weight=10]; }
// Node Weight = compute cost, edge Weight = that edge's transfer cost (reference units). The
// DOT text is parsed by Graphviz's own library (cgraph); this reader only interprets it.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/util/read_limits.hpp"

namespace doppler {

/// A DOT task graph and the schedule stored in it, if any.
struct DotTaskGraph {
  Graph graph;  ///< nodes in order of first appearance; meta origin "dot", params below
  /// From the node attributes Processor and Start (also "Start time", StartTime, start): the
  /// device of every node and, when every node has a start time, the order by (start, topo
  /// rank). nullopt when no node has a Processor.
  std::optional<Assignment> schedule;
};

/// Parses a DOT task graph. Graph attributes: Processors / processors / NumProcessors /
/// "Number of processors" -> meta.params["devices"]; "Optimal schedule length" /
/// OptimalScheduleLength / Optimum / optimum -> params["optimum"]; "Total schedule length" ->
/// params["schedule_length"]. Throws InputError "FILE:LINE: problem" for syntax errors (as
/// reported by cgraph), missing or invalid weights, cycles, self-loops, an undirected graph,
/// parallel edges with different weights, text after the graph, a bad schedule, and more nodes
/// or edges than `limits` allow. Parallel edges with equal weights collapse (a warning is
/// appended to `warnings` when given).
DotTaskGraph parse_dot_task_graph(std::string_view text, const std::string& file,
                                  std::vector<std::string>* warnings = nullptr,
                                  const ReadLimits& limits = read_limits());

/// parse_dot_task_graph() without the schedule.
Graph parse_dot_graph(std::string_view text, const std::string& file,
                      std::vector<std::string>* warnings = nullptr,
                      const ReadLimits& limits = read_limits());

/// Reads the DOT file at `path` and returns the schedule stored in it (nullopt when its nodes
/// have no Processor attribute). Throws InputError as parse_dot_task_graph().
std::optional<Assignment> read_dot_schedule(const std::filesystem::path& path);

}  // namespace doppler
