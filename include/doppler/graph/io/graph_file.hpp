#pragma once
// Reading and writing graph files by format, chosen from the file extension or by name.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler {

/// Graph file formats.
enum class GraphFormat {
  reference_text,  ///< the reference implementation's text format (.txt)
  json,            ///< doppler-graph JSON (.json)
  dot,             ///< Graphviz DOT (.dot, .gv): task graphs with Weight attributes
  stg,             ///< Kasahara's Standard Task Graph Set (.stg; read only)
};

/// Format named "txt"/"reference", "json", "dot"/"gv" or "stg"; nullopt otherwise.
std::optional<GraphFormat> parse_graph_format(const std::string& name);
/// Format implied by the extension of `path`; throws InputError when there is none.
GraphFormat graph_format_of(const std::filesystem::path& path);

/// Loads a graph (format from the extension: .txt, .json, .dot/.gv, .stg; another extension is
/// an InputError; a file starting with '{' is read as JSON whatever its name). Warnings (e.g.
/// collapsed duplicate edges) are appended to `warnings`. The graph's name defaults to the file's
/// stem.
Graph load_graph(const std::filesystem::path& path, std::vector<std::string>* warnings = nullptr);

/// Formats a graph in `format` (DOT may be coloured by `assignment`).
std::string format_graph(const Graph& g, GraphFormat format,
                         const Assignment* assignment = nullptr);

/// Writes a graph atomically.
void save_graph(const std::filesystem::path& path, const Graph& g, GraphFormat format,
                const Assignment* assignment = nullptr);

/// Loads an assignment file and validates it against `g` (and `devices` when > 0). A .dot/.gv
/// file gives the schedule of a DOT task graph (its Processor attributes; InputError when it
/// has none).
Assignment load_assignment(const std::filesystem::path& path, const Graph& g, int devices = 0);

}  // namespace doppler
