// doppler import MODEL.onnx --devices P -o GRAPH.json: an ONNX model as a blocked graph.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/onnx/import.hpp"
#include "doppler/report/table.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler::cli {

namespace {

struct ImportCliOptions {
  std::string model, out, partition = "auto", dtype = "f32", weights = "embedded";
  std::vector<std::string> input_shapes, inputs;
  int devices = 0;
  bool json = false, per_node = false;
};

// "NAME:1x128" -> (NAME, {1, 128}).
std::pair<std::string, std::vector<std::int64_t>> parse_input_shape(const std::string& s) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
    throw InputError("--input: expected NAME:DIMS (e.g. x:1x128), got '" + s + "'");
  const auto parts = onnx_import::parse_partition("t=" + s.substr(colon + 1));
  return {s.substr(0, colon), parts.at("t")};
}

onnx_import::ImportOptions import_options(const ImportCliOptions& o) {
  onnx_import::ImportOptions io;
  io.devices = o.devices;
  // "auto" or "whole", optionally followed by ",TENSOR=AxB,..."; or the overrides alone (auto)
  std::string overrides = o.partition;
  for (const std::string rule : {"auto", "whole"})
    if (overrides == rule || overrides.rfind(rule + ",", 0) == 0) {
      io.whole_ops = rule == "whole";
      overrides = overrides.substr(std::min(overrides.size(), rule.size() + 1));
    }
  io.partition = onnx_import::parse_partition(overrides);
  const auto dt = workloads::parse_dtype(o.dtype);
  if (!dt) throw InputError("--dtype: expected f32, f16 or bf16, got '" + o.dtype + "'");
  io.dtype = *dt;
  io.generated_weights = o.weights == "generated";
  for (const auto& s : o.input_shapes) io.input_shapes.insert(parse_input_shape(s));
  for (const auto& s : o.inputs) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      throw InputError("--inputs: expected NAME=FILE.npy or NAME=seed:N, got '" + s + "'");
    const std::string name = s.substr(0, eq), value = s.substr(eq + 1);
    if (value.rfind("seed:", 0) == 0) {
      const std::string n = value.substr(5);
      if (n.empty() || n.size() > 15 || !std::all_of(n.begin(), n.end(), ::isdigit))
        throw InputError("--inputs " + name + ": bad seed '" + n + "' (an integer below 2^53)");
      io.input_seeds[name] = std::stoull(n);
    } else {
      io.input_files[name] = value;
    }
  }
  return io;
}

ojson report_json(const onnx_import::ImportReport& r, double seconds, const std::string& out,
                  const std::string& weights) {
  ojson j;
  j["model"] = r.model;
  j["output"] = out;
  j["opset"] = r.opset;
  j["producer"] = r.producer;
  j["ops_before"] = r.onnx_nodes;
  j["folded"] = r.folded_nodes;
  j["blocks"] = r.blocks;
  j["total_flops"] = r.total_flops;
  j["einsum_flops"] = r.einsum_flops;
  j["conv_flops"] = r.conv_flops;
  j["parameters"] = r.parameters;
  j["weights"] = weights;
  j["import_seconds"] = seconds;
  j["outputs"] = r.outputs;
  ojson nodes = ojson::array();
  for (const auto& n : r.nodes)
    nodes.push_back({{"name", n.name},
                     {"op", n.op_type},
                     {"shape", n.shape},
                     {"folded", n.folded},
                     {"blocks", n.blocks},
                     {"flops", n.flops}});
  j["nodes"] = std::move(nodes);
  return j;
}

void print_text(const onnx_import::ImportReport& r, double seconds, const ImportCliOptions& o) {
  const std::string& out = o.out;
  std::cout << fmt::format("{:<14}{} (opset {}, {})\n", "model", r.model, r.opset, r.producer);
  std::cout << fmt::format("{:<14}{} ONNX ops ({} folded at import) -> {} blocks in {}\n", "graph",
                           r.onnx_nodes, r.folded_nodes, r.blocks, out);
  std::cout << fmt::format("{:<14}{} FLOPs ({} in MatMul/Gemm/LSTM/GRU/RNN{}), {} parameters\n",
                           "work", format_sig(r.total_flops), format_sig(r.einsum_flops),
                           r.conv_flops > 0 ? ", " + format_sig(r.conv_flops) + " in Conv" : "",
                           format_sig(static_cast<double>(r.parameters)));
  if (o.weights == "generated")
    std::cout << fmt::format(
        "{:<14}generated (seeded, each with its weight's mean and spread), "
        "not the model's values: placement and timing, not its outputs\n",
        "weights");
  std::cout << fmt::format("{:<14}{:.3f} s\n\n", "import time", seconds);
  std::map<std::string, std::array<double, 4>> by_op;  // nodes, folded, blocks, flops
  for (const auto& n : r.nodes) {
    auto& a = by_op[n.op_type];
    a[0] += 1;
    a[1] += n.folded ? 1 : 0;
    a[2] += n.blocks;
    a[3] += n.flops;
  }
  Table t;
  t.add_column("op", true);
  for (const char* c : {"nodes", "folded", "blocks", "FLOPs"}) t.add_column(c);
  for (const auto& [op, a] : by_op)
    t.add_row({op, fmt::format("{}", a[0]), fmt::format("{}", a[1]), fmt::format("{}", a[2]),
               format_sig(a[3])});
  std::cout << t.to_text();
  if (!o.per_node) return;
  Table nt;
  nt.add_column("node", true);
  nt.add_column("op", true);
  nt.add_column("shape", true);
  for (const char* c : {"blocks", "FLOPs"}) nt.add_column(c);
  for (const auto& n : r.nodes)
    nt.add_row({n.name, n.op_type,
                n.folded ? "(folded)" : fmt::format("{}", fmt::join(n.shape, "x")),
                std::to_string(n.blocks), format_sig(n.flops)});
  std::cout << '\n' << nt.to_text();
}

void run_import(const ImportCliOptions& o) {
  const Stopwatch clock;
  const auto res = onnx_import::import_onnx(o.model, import_options(o));
  const double seconds = clock.seconds();
  save_graph(o.out, res.graph, GraphFormat::json, nullptr);
  if (o.json)
    print_json(report_json(res.report, seconds, o.out, o.weights));
  else
    print_text(res.report, seconds, o);
}

}  // namespace

void add_import(CLI::App& app) {
  auto o = std::make_shared<ImportCliOptions>();
  std::string ops;
  for (const auto& s : onnx_import::supported_ops()) ops += (ops.empty() ? "" : ", ") + s;
  auto* cmd = app.add_subcommand(
      "import",
      "Import an ONNX model (e.g. from torch.onnx.export) as a blocked dataflow graph (Doppler "
      "JSON with real weights, or generated ones), ready for place, simulate, train and "
      "execute. Shape subgraphs "
      "are folded at import; each remaining op is split into blocks (docs/onnx.md).");
  cmd->add_option("model", o->model,
                  "ONNX model file (.onnx; weights inside, or external data files beside it)")
      ->required();
  add_devices_option(*cmd, o->devices, true);
  cmd->add_option("-o,--output", o->out, "graph file to write (Doppler JSON), atomically")
      ->required();
  cmd->add_option("--partition", o->partition,
                  "auto (default): every op's output gets at least P blocks, cutting its largest "
                  "dimensions first (contracted dimensions never); whole: every op one block, "
                  "placed whole on the P devices (often faster at small batch: docs/onnx.md); "
                  "either may be followed by ,TENSOR=AxBxC,... block counts for named ONNX "
                  "tensors (alone: auto for the rest)");
  cmd->add_option("--dtype", o->dtype, "storage type for bytes: f32 (default), f16 or bf16");
  cmd->add_option("--input", o->input_shapes,
                  "NAME:DIMS shape of a graph input (e.g. x:1x128), required for dynamic "
                  "dimensions; repeatable");
  cmd->add_option("--inputs", o->inputs,
                  "NAME=FILE.npy values of a graph input, or NAME=seed:N generated values in "
                  "[-1, 1) with seed N (default: seeded by the input's name); repeatable");
  cmd->add_option("--weights", o->weights,
                  "embedded (default): the model's weights become the graph's constants; "
                  "generated: seeded values with each weight's mean and spread instead (no "
                  "constants: a small graph file for a large model placed without its values)")
      ->check(CLI::IsMember({"embedded", "generated"}));
  cmd->add_flag("--json", o->json, "print the import report as JSON");
  cmd->add_flag("--per-node", o->per_node, "also list every ONNX node with its blocks and FLOPs");
  cmd->footer("Supported ONNX ops: " + ops +
              ". Anything else is an error listing every unsupported op type with its count.");
  cmd->callback([o] { run_import(*o); });
}

}  // namespace doppler::cli
