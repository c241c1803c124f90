// doppler generate WORKLOAD: a blocked workload graph (chainmm, ffnn, llama-block, llama-layer,
// llama, random-dag) or a planted instance with a known optimum (planted, with its optimal
// assignment), written atomically in any graph format.
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler::cli {

namespace {

struct GenerateOptions {
  std::string workload;
  std::vector<std::string> params;
  std::string dtype;
  int devices = 4;
  bool training = false;
  bool list = false;
  bool json = false;
  std::string output;
  std::string format;
  std::map<std::string, std::string> shorthand;  // --ops etc.: same as --param NAME=VALUE
  std::string assignment_out;
};

// Text listing of every workload and its parameters (for --list and --help).
std::string workload_listing() {
  std::string out = "Workloads (P = --devices; defaults in parentheses):\n";
  for (const auto& w : workloads::list_workloads()) {
    out += fmt::format("  {:<12} {}\n", w.name, w.description);
    std::string extra;
    if (!w.default_dtype.empty()) extra += fmt::format("dtype {}", w.default_dtype);
    if (w.supports_training) extra += ", --training";
    if (!extra.empty()) out += fmt::format("  {:<12}   [{}]\n", "", extra);
    for (const auto& p : w.params)
      out += fmt::format("  {:<12}   {:<16} {} ({})\n", "", p.name, p.help, p.default_value);
  }
  return out;
}

workloads::WorkloadSpec spec_of(const GenerateOptions& o) {
  workloads::WorkloadSpec s;
  s.name = o.workload;
  s.dtype = o.dtype;
  s.devices = o.devices;
  s.training = o.training;
  for (const std::string& kv : o.params) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(fmt::format("--param expects NAME=VALUE, got '{}'", kv));
    const std::string key = kv.substr(0, eq);
    if (s.params.count(key)) throw InputError(fmt::format("parameter {} given twice", key));
    s.params[key] = kv.substr(eq + 1);
  }
  for (const auto& [key, value] : o.shorthand) {
    if (value.empty()) continue;
    if (s.params.count(key)) throw InputError(fmt::format("parameter {} given twice", key));
    s.params[key] = value;
  }
  return s;
}

void run_generate(const GenerateOptions& o) {
  if (o.list) {
    if (o.json) {
      ojson all = ojson::array();
      for (const auto& w : workloads::list_workloads()) {
        ojson params = ojson::array();
        for (const auto& p : w.params)
          params.push_back({{"name", p.name}, {"default", p.default_value}, {"help", p.help}});
        all.push_back({{"name", w.name},
                       {"description", w.description},
                       {"default_dtype", w.default_dtype},
                       {"training", w.supports_training},
                       {"params", params}});
      }
      print_json({{"workloads", all}});
    } else {
      std::cout << workload_listing();
    }
    return;
  }
  if (o.workload.empty()) throw InputError("no workload given (see 'doppler generate --list')");
  if (o.output.empty() && !o.json)
    throw InputError("no output file: give -o FILE (or --json for a summary only)");
  std::optional<GraphFormat> format;
  if (!o.format.empty()) {
    format = parse_graph_format(o.format);
    if (!format) throw InputError(fmt::format("unknown format '{}' (txt, json or dot)", o.format));
  } else if (!o.output.empty()) {
    format = graph_format_of(o.output);  // fails before the (possibly long) generation
  }
  const auto generated = workloads::generate_workload_with_assignment(spec_of(o));
  const Graph& g = generated.graph;
  if (!o.assignment_out.empty() && !generated.optimal)
    throw InputError(fmt::format(
        "--assignment-out: workload {} has no planted assignment (only planted has one)",
        o.workload));
  if (!o.output.empty()) save_graph(o.output, g, *format);
  if (!o.assignment_out.empty())
    write_file_atomic(o.assignment_out, format_assignment_json(*generated.optimal));
  int placed = 0;
  double flops = 0, bytes = 0, edge_bytes = 0;
  for (const Node& n : g.nodes()) {
    placed += n.kind != OpKind::input;
    flops += n.flops;
    bytes += n.out_bytes;
  }
  for (EdgeId e = 0; e < g.num_edges(); ++e) edge_bytes += g.edge_bytes(e);
  if (o.json) {
    ojson j;
    j["graph"] = meta_json(g);
    j["output"] = o.output.empty() ? ojson(nullptr) : ojson(o.output);
    if (!o.assignment_out.empty()) j["assignment_output"] = o.assignment_out;
    j["nodes"] = g.num_nodes();
    j["placed_ops"] = placed;
    j["inputs"] = g.num_nodes() - placed;
    j["edges"] = g.num_edges();
    j["total_flops"] = flops;
    j["total_out_bytes"] = bytes;
    j["total_edge_bytes"] = edge_bytes;
    print_json(j);
    return;
  }
  std::cout << fmt::format(
      "wrote {}: {} nodes ({} placed ops, {} inputs), {} edges, {:.4g} FLOPs, {:.4g} output "
      "bytes\n",
      o.output, g.num_nodes(), placed, g.num_nodes() - placed, g.num_edges(), flops, bytes);
  if (generated.optimal)
    std::cout << fmt::format("optimal makespan {} on {} devices (mean transfer / compute {})\n",
                             g.meta().params.at("optimum"), g.meta().params.at("devices"),
                             g.meta().params.at("ratio"));
  if (!o.assignment_out.empty())
    std::cout << fmt::format("wrote {}: the planted optimal assignment\n", o.assignment_out);
}

}  // namespace

void add_generate(CLI::App& app) {
  auto o = std::make_shared<GenerateOptions>();
  auto* cmd = app.add_subcommand(
      "generate", "Generate a blocked workload graph (per-block FLOPs, bytes, exec descriptions)");
  cmd->add_option("workload", o->workload,
                  "chainmm, ffnn, llama-block, llama-layer, llama, planted or random-dag");
  cmd->add_option("-p,--param", o->params, "workload parameter NAME=VALUE (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--dtype", o->dtype, "tensor storage type (default per workload)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  add_devices_option(*cmd, o->devices, false)
      ->description("devices P the default partitioning is made for (1..1024)")
      ->capture_default_str();
  cmd->add_flag("--training", o->training, "add the backward pass (ffnn, llama-block, llama)");
  cmd->add_option("-o,--output", o->output, "output graph file (.json, .txt or .dot)");
  cmd->add_option("--to", o->format,
                  "output format (txt, json, dot); default: from -o's extension");
  for (const char* name : {"ops", "ratio", "density", "seed"})
    cmd->add_option(fmt::format("--{}", name), o->shorthand[name],
                    fmt::format("same as --param {}=VALUE", name));
  cmd->add_option("--assignment-out", o->assignment_out,
                  "planted: also write the planted optimal assignment (JSON) to this file");
  cmd->add_flag("--list", o->list, "list the workloads and their parameters");
  cmd->add_flag("--json", o->json, "print one JSON summary object");
  cmd->footer(workload_listing());
  cmd->callback([o] { run_generate(*o); });
}

}  // namespace doppler::cli
