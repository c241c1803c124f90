#include "doppler/graph/io/graph_file.hpp"

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/dot.hpp"
#include "doppler/graph/io/dot_reader.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/io/reference_text.hpp"
#include "doppler/graph/io/stg.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler {

std::optional<GraphFormat> parse_graph_format(const std::string& name) {
  if (name == "txt" || name == "reference" || name == "text") return GraphFormat::reference_text;
  if (name == "json") return GraphFormat::json;
  if (name == "dot" || name == "gv") return GraphFormat::dot;
  if (name == "stg") return GraphFormat::stg;
  return std::nullopt;
}

GraphFormat graph_format_of(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  if (!ext.empty()) ext.erase(0, 1);
  const auto f = parse_graph_format(ext);
  if (!f)
    throw InputError(path.string(), 0,
                     "cannot tell the format from the extension '" + ext +
                         "' (expected .txt, .json, .dot, .gv or .stg)")
        .with_remedy(Remedy::output_format);
  return *f;
}

Graph load_graph(const std::filesystem::path& path, std::vector<std::string>* warnings) {
  const std::string text = read_file(path);
  const std::string file = path.string();
  const std::string_view body = trim(text);
  Graph g;
  std::string ext = path.extension().string();
  if (!body.empty() && (body.front() == '{' || body.front() == '[')) {
    g = parse_graph_json(text, file, warnings);
  } else if (ext == ".dot" || ext == ".gv") {
    g = parse_dot_graph(text, file, warnings);
  } else if (ext == ".stg") {
    g = parse_stg(text, file, warnings);
  } else if (ext == ".txt") {
    g = parse_reference_text(text, file, warnings);
  } else {
    throw InputError(file, 0,
                     "unknown graph format '" + ext +
                         "' (graph files are .txt (reference text), .json (doppler-graph), "
                         ".dot or .gv (Graphviz task graph) and .stg (Standard Task Graph))");
  }
  if (g.meta().name.empty()) {
    GraphMeta meta = g.meta();
    meta.name = path.stem().string();
    g.set_meta(std::move(meta));
  }
  return g;
}

std::string format_graph(const Graph& g, GraphFormat format, const Assignment* assignment) {
  switch (format) {
    case GraphFormat::reference_text:
      return format_reference_text(g);
    case GraphFormat::json:
      return format_graph_json(g);
    case GraphFormat::dot:
      return format_dot(g, assignment);
    case GraphFormat::stg:
      throw InputError(
          "writing STG is not supported (STG has no communication costs); write "
          ".json or .dot instead");
  }
  return {};
}

void save_graph(const std::filesystem::path& path, const Graph& g, GraphFormat format,
                const Assignment* assignment) {
  write_file_atomic(path, format_graph(g, format, assignment));
}

Assignment load_assignment(const std::filesystem::path& path, const Graph& g, int devices) {
  const std::string ext = path.extension().string();
  if (ext != ".dot" && ext != ".gv")
    return parse_assignment_json(read_file(path), path.string(), &g, devices);
  // A DOT task graph's own schedule (Processor / Start node attributes).
  std::optional<Assignment> a = read_dot_schedule(path);
  if (!a)
    throw InputError(path.string(), 0, "the DOT file has no schedule (no Processor attribute)");
  if (a->device_of.size() != static_cast<std::size_t>(g.num_nodes()))
    throw InputError(path.string(), 0,
                     "its schedule has " + std::to_string(a->device_of.size()) +
                         " nodes, the graph has " + std::to_string(g.num_nodes()));
  if (devices > 0 && a->devices < devices) a->devices = devices;
  a->validate(g, devices, path.string());
  return *a;
}

}  // namespace doppler
