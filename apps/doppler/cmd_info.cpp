// doppler info GRAPH: structure and bounds of a graph.
#include <algorithm>
#include <array>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/communication_bound.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"

namespace doppler::cli {

namespace {

struct InfoOptions {
  std::string graph, hardware;
  int devices = 0;  // 0: the graph's recorded count (devices_for)
  bool json = false;
};

void run_info(const InfoOptions& given) {
  const Graph g = load_graph_logged(given.graph);
  InfoOptions o = given;
  o.devices = devices_for(g, given.devices);
  std::array<int, kNumOpKinds> kinds{};
  double flops = 0, bytes = 0;
  int groups = 0;
  for (const Node& n : g.nodes()) {
    ++kinds[static_cast<std::size_t>(n.kind)];
    flops += n.flops;
    bytes += n.out_bytes;
    groups = std::max(groups, n.group + 1);
  }
  std::unique_ptr<CostModel> cost;
  if (g.has_reference_costs() || !o.hardware.empty())
    cost = std::make_unique<CostModel>(platform_for(g, o.hardware, o.devices).cost_model(g));
  std::unique_ptr<GraphAnalysis> an;
  if (cost) an = std::make_unique<GraphAnalysis>(g, *cost);
  const bool ref_origin =
      g.meta().origin == "reference-text" && cost && cost->unit() == CostUnit::reference;
  int placed = 0;
  for (const Node& n : g.nodes()) placed += n.kind != OpKind::input;

  if (o.json) {
    ojson j;
    j["graph"] = meta_json(g);
    j["nodes"] = g.num_nodes();
    j["placed_ops"] = placed;
    j["edges"] = g.num_edges();
    j["sources"] = g.sources().size();
    j["sinks"] = g.sinks().size();
    ojson k = ojson::object();
    for (int i = 0; i < kNumOpKinds; ++i)
      if (kinds[static_cast<std::size_t>(i)])
        k[std::string(op_kind_name(static_cast<OpKind>(i)))] = kinds[static_cast<std::size_t>(i)];
    j["kinds"] = k;
    j["groups"] = groups;
    j["total_flops"] = flops;
    j["total_out_bytes"] = bytes;
    if (an) {
      j["cost_model"] = {{"name", cost->name()}, {"unit", cost_unit_name(cost->unit())}};
      j["total_work"] = an->total_work();
      j["critical_path_length"] = an->critical_path_length();
      j["critical_path_ops"] = an->critical_path().size();
      j["critical_path_no_transfer"] = an->critical_path_no_transfer();
      j["devices"] = o.devices;
      j["lower_bound"] = an->lower_bound(o.devices);
      if (ref_origin) j["lower_bound_div_1e10"] = an->lower_bound(o.devices) / 1e10;
      j["lower_bound_with_transfers"] =
          std::max(an->lower_bound(o.devices), communication_lower_bound(g, *cost, o.devices));
    }
    print_json(j);
    return;
  }

  std::string kinds_text;
  for (int i = 0; i < kNumOpKinds; ++i) {
    const int c = kinds[static_cast<std::size_t>(i)];
    if (!c) continue;
    const auto kind = static_cast<OpKind>(i);
    kinds_text += fmt::format("{}{} {}", kinds_text.empty() ? "" : ", ", op_kind_name(kind), c);
    if (op_kind_reference_name(kind) != op_kind_name(kind))
      kinds_text += fmt::format(" ({})", op_kind_reference_name(kind));
  }
  std::string out;
  const auto row = [&](const std::string& k, const std::string& v) {
    out += fmt::format("{:<26}{}\n", k, v);
  };
  row("graph", fmt::format("{} (origin: {})", g.meta().name, g.meta().origin));
  for (const auto& [k, v] : g.meta().params) row("  " + k, v);
  row("nodes", std::to_string(g.num_nodes()) + (placed != g.num_nodes()
                                                    ? fmt::format("   ({} placed ops + {} inputs)",
                                                                  placed, g.num_nodes() - placed)
                                                    : ""));
  row("edges", std::to_string(g.num_edges()));
  row("sources / sinks", fmt::format("{} / {}", g.sources().size(), g.sinks().size()));
  row("kinds", kinds_text.empty() ? "-" : kinds_text);
  row("groups (tensor ops)", groups ? std::to_string(groups) : "-");
  if (flops > 0 || bytes > 0) {
    row("total FLOPs", format_sig(flops));
    row("total output bytes", format_sig(bytes));
  }
  if (an) {
    const auto val = [&](double x) {
      if (cost->unit() == CostUnit::seconds) return format_time(x, CostUnit::seconds);
      std::string s = format_sig(x) + " ref";
      if (ref_origin) s += fmt::format("   (/1e10: {})", format_sig(x / 1e10));
      return s;
    };
    row("cost model", cost->name());
    row("total work", val(an->total_work()));
    row("critical path",
        val(an->critical_path_length()) + fmt::format("   [{} ops]", an->critical_path().size()));
    row("  without transfers", val(an->critical_path_no_transfer()));
    row(fmt::format("lower bound (P={})", o.devices), val(an->lower_bound(o.devices)));
    row("  with transfers",
        val(std::max(an->lower_bound(o.devices), communication_lower_bound(g, *cost, o.devices))));
  } else {
    row("cost model", "none (no reference costs: pass --hardware PROFILE for bounds)");
  }
  std::cout << out;
}

}  // namespace

void add_info(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  auto* cmd = app.add_subcommand("info",
                                 "Print a graph's size, op kinds, critical path and two "
                                 "makespan lower bounds for P devices: the critical path "
                                 "without transfers (or work / P), and the same with transfers "
                                 "charged (predecessors share the op's device or pay the "
                                 "cheapest transfer)");
  cmd->add_option("graph", o->graph, "graph file (.txt reference format or .json)")->required();
  add_graph_devices_option(*cmd, o->devices);
  add_hardware_option(*cmd, o->hardware);
  cmd->add_flag("--json", o->json, "print one JSON object instead of text");
  cmd->callback([o] { run_info(*o); });
}

}  // namespace doppler::cli
