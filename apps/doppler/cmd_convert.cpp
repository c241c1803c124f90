// doppler convert IN OUT (or IN -o OUT): between graph formats.
#include <iostream>
#include <memory>

#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/util/error.hpp"

namespace doppler::cli {

namespace {

struct ConvertOptions {
  std::string in, out, to, assignment;
  std::string out_option;  ///< -o, the other way to name the output (as every other command)
};

// The output file: the positional OUT or -o, exactly one of them.
void resolve_output(ConvertOptions& o) {
  if (o.out.empty() && o.out_option.empty())
    throw CLI::RequiredError("convert: the output file (OUT, or -o OUT)");
  if (!o.out.empty() && !o.out_option.empty())
    throw CLI::ValidationError("convert", "give the output file once: OUT or -o OUT, not both");
  if (o.out.empty()) o.out = o.out_option;
}

void run_convert(const ConvertOptions& o) {
  GraphFormat format;
  if (!o.to.empty()) {
    const auto f = parse_graph_format(o.to);
    if (!f) throw InputError("--to: unknown format '" + o.to + "' (expected txt, json or dot)");
    format = *f;
  } else {
    format = graph_format_of(o.out);
  }
  const Graph g = load_graph_logged(o.in);
  std::unique_ptr<Assignment> a;
  if (!o.assignment.empty()) {
    if (format != GraphFormat::dot) throw InputError("--assignment only applies to DOT output");
    a = std::make_unique<Assignment>(load_assignment(o.assignment, g));
  }
  save_graph(o.out, g, format, a.get());
  spdlog::info("wrote {} ({} nodes, {} edges)", o.out, g.num_nodes(), g.num_edges());
}

}  // namespace

void add_convert(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert a graph between the reference text format (.txt), Doppler JSON (.json) and "
      "Graphviz DOT task graphs (.dot/.gv, Weight attributes); Kasahara STG files (.stg) are "
      "read only");
  cmd->add_option("input", o->in, "input graph (.txt, .json, .dot/.gv or .stg)")->required();
  cmd->add_option("output", o->out, "output file, written atomically (or -o)");
  cmd->add_option("-o,--output", o->out_option, "output file, as OUT");
  cmd->add_option("--to", o->to, "output format: txt, json or dot (default: from the extension)");
  cmd->add_option("-a,--assignment", o->assignment,
                  "colour DOT nodes by this assignment's devices");
  cmd->callback([o] {
    resolve_output(*o);
    run_convert(*o);
  });
}

}  // namespace doppler::cli
