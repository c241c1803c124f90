// doppler demo: the main job on the embedded default workload (what `make demo` runs).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "compare.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler::cli {

namespace {

struct DemoOptions {
  std::string hardware = "p100";
  int devices = 4;
  int seeds = 3;
};

void run_demo(const DemoOptions& o) {
  const Graph g = workloads::default_workload();
  int placed = 0;
  double flops = 0;
  for (const Node& n : g.nodes()) {
    placed += n.kind != OpKind::input;
    flops += n.flops;
  }
  const Platform platform = Platform::hardware(load_hardware_profile(o.hardware), o.devices);
  const CostModel cost = platform.cost_model(g);
  const GraphAnalysis an(g, cost);
  std::cout << fmt::format(
      "Default workload: {} ({} placed ops + {} input blocks, {} edges, {:.3g} TFLOP), {} x {}\n"
      "critical path {}, without transfers {}, lower bound on {} devices {}\n\n",
      g.meta().name, placed, g.num_nodes() - placed, g.num_edges(), flops / 1e12, o.devices,
      platform.name(), format_time(an.critical_path_length(), CostUnit::seconds),
      format_time(an.critical_path_no_transfer(), CostUnit::seconds), o.devices,
      format_time(an.lower_bound(o.devices), CostUnit::seconds));
  CompareOptions c;
  c.hardware = o.hardware;
  c.devices = o.devices;
  c.seeds = o.seeds;
  compare_graph(g, c);
}

}  // namespace

void add_demo(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo",
                                 "Run the main job on the embedded default workload (llama-layer, "
                                 "4 devices, 4xP100-PCIe): graph "
                                 "statistics and the comparison table of the placement methods");
  add_hardware_option(*cmd, o->hardware)->capture_default_str();
  cmd->add_option("--seeds", o->seeds, "seeds per randomised method")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->callback([o] { run_demo(*o); });
}

}  // namespace doppler::cli
