#pragma once
// Graphviz DOT output.
#include <string>

#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler {

/// Formats `g` as a Graphviz digraph. Nodes are labelled "id: name" and shaped by kind; when
/// `assignment` is given they are filled with one colour per device and the device is named in
/// the label, and cross-device edges are drawn bold.
std::string format_dot(const Graph& g, const Assignment* assignment = nullptr);

}  // namespace doppler
