#include "doppler/graph/io/dot.hpp"

#include <array>

#include <fmt/format.h>

namespace doppler {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

const char* shape_of(OpKind k) {
  switch (k) {
    case OpKind::einsum:
      return "box";
    case OpKind::aggregate:
      return "invtriangle";
    case OpKind::input:
      return "cylinder";
    case OpKind::fill:
      return "note";
    case OpKind::select:
      return "trapezium";
    default:
      return "ellipse";
  }
}

// A Weight attribute (reference cost, read back by parse_dot_task_graph): the shortest
// round-trip form, quoted when it is not a plain DOT number (e.g. 1e-07).
std::string weight_attr(double x) {
  const std::string s = fmt::format("{}", x);
  const bool plain = s.find_first_not_of("-.0123456789") == std::string::npos;
  return plain ? fmt::format("Weight={}", s) : fmt::format("Weight=\"{}\"", s);
}

// Colour-blind-friendly qualitative palette (Okabe-Ito, then Tableau extras).
constexpr std::array<const char*, 12> kPalette = {"#E69F00", "#56B4E9", "#009E73", "#F0E442",
                                                  "#0072B2", "#D55E00", "#CC79A7", "#999999",
                                                  "#8CD17D", "#B6992D", "#FF9D9A", "#79706E"};

}  // namespace

std::string format_dot(const Graph& g, const Assignment* assignment) {
  std::string out = fmt::format(
      "digraph \"{}\" {{\n  rankdir=TB;\n  node [style=filled, fillcolor=white, fontsize=10];\n",
      escape(g.meta().name.empty() ? "doppler" : g.meta().name));
  const bool costs = g.has_reference_costs();  // Weight attributes: a readable task graph
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& nd = g.node(v);
    std::string label = nd.name.empty() ? fmt::format("{}: {}", v, op_kind_name(nd.kind))
                                        : fmt::format("{}: {}", v, escape(nd.name));
    std::string fill = "white";
    if (assignment) {
      const DeviceId d = assignment->device_of[static_cast<std::size_t>(v)];
      label += fmt::format("\\n[dev {}]", d);
      fill = kPalette[static_cast<std::size_t>(d) % kPalette.size()];
    }
    out += fmt::format("  n{} [label=\"{}\", shape={}, fillcolor=\"{}\"{}];\n", v, label,
                       shape_of(nd.kind), fill,
                       costs ? ", " + weight_attr(nd.compute_cost.value_or(0)) : "");
  }
  for (EdgeId i = 0; i < g.num_edges(); ++i) {
    const Edge& e = g.edge(i);
    const bool cross = assignment && assignment->device_of[static_cast<std::size_t>(e.src)] !=
                                         assignment->device_of[static_cast<std::size_t>(e.dst)];
    std::string attrs = cross ? "style=bold, color=red" : "";
    if (costs) attrs += (attrs.empty() ? "" : ", ") + weight_attr(g.edge_transfer_cost(i));
    out += fmt::format("  n{} -> n{}{};\n", e.src, e.dst, attrs.empty() ? "" : " [" + attrs + "]");
  }
  out += "}\n";
  return out;
}

}  // namespace doppler
