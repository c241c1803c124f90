#pragma once
// Graphviz DOT output.
#include <string>

#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler {

/// Formats `g` as a Graphviz digraph. Nodes are labelled "id: name" and shaped by kind; when
/// `assignment` is given they are filled with one colour per device and the device is named in
/// the label, and cross-device edges are drawn bold. When `g` has reference costs, nodes and
/// edges carry Weight attributes (compute cost, edge transfer cost), so that the output reads
/// back with parse_dot_task_graph() (dot_reader.hpp) as the same DAG with the same costs.
std::string format_dot(const Graph& g, const Assignment* assignment = nullptr);

}  // namespace doppler
