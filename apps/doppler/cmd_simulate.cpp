// doppler simulate GRAPH: makespan and schedule of assignments on the work-conserving simulator.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/communication_bound.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/report/trace.hpp"
#include "doppler/sim/simulator.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler::cli {

namespace {

struct SimulateOptions {
  std::string graph, assignment, assignments, hardware, order = "fifo", trace, gantt;
  int devices = 0;
  double bench = 0;
  int threads = 1;
  bool json = false;
};

// Summary of one schedule as JSON.
// bound: GraphAnalysis::lower_bound; tbound: the same with transfers charged.
ojson schedule_json(const Graph& g, const Platform& platform, const Schedule& s, double bound,
                    double tbound) {
  ojson j;
  j["graph"] = g.meta().name;
  j["ops"] = g.num_nodes();
  j["devices"] = s.devices;
  j["model"] = platform.name();
  j["unit"] = platform.is_reference() ? "reference" : "seconds";
  j["makespan"] = s.makespan;
  if (platform.is_reference() && g.meta().origin == "reference-text")
    j["makespan_div_1e10"] = s.makespan / 1e10;
  j["lower_bound"] = bound;
  j["gap_to_bound"] = bound > 0 ? s.makespan / bound - 1 : 0.0;
  j["lower_bound_with_transfers"] = tbound;
  j["gap_to_bound_with_transfers"] = tbound > 0 ? s.makespan / tbound - 1 : 0.0;
  j["cross_transfers"] = s.cross_transfers;
  j["cross_bytes"] = s.cross_bytes;
  ojson devs = ojson::array();
  for (int d = 0; d < s.devices; ++d) {
    int ops = 0;
    for (DeviceId x : s.device) ops += x == d;
    devs.push_back({{"device", d},
                    {"ops", ops},
                    {"busy", s.busy[static_cast<std::size_t>(d)]},
                    {"utilization", s.utilization(d)}});
  }
  j["per_device"] = std::move(devs);
  return j;
}

void print_schedule_text(const Graph& g, const Platform& platform, const Schedule& s, double bound,
                         double tbound) {
  const auto t = [&](double x) {
    std::string out = format_time(x, s.unit);
    if (s.unit == CostUnit::reference) out = format_sig(x) + " ref";
    if (s.unit == CostUnit::reference && g.meta().origin == "reference-text")
      out += fmt::format("   (/1e10: {})", format_sig(x / 1e10));
    return out;
  };
  std::cout << fmt::format("{:<16}{} ({} ops) on {} devices, model {}\n", "graph", g.meta().name,
                           g.num_nodes(), s.devices, platform.name());
  std::cout << fmt::format("{:<16}{}\n", "makespan", t(s.makespan));
  std::cout << fmt::format("{:<16}{}   (makespan is {:.1f}% above)\n", "lower bound", t(bound),
                           bound > 0 ? 100 * (s.makespan / bound - 1) : 0.0);
  std::cout << fmt::format("{:<16}{}   (makespan is {:.1f}% above)\n", " + transfers", t(tbound),
                           tbound > 0 ? 100 * (s.makespan / tbound - 1) : 0.0);
  std::cout << fmt::format(
      "{:<16}{} cross-device{}\n", "transfers", s.cross_transfers,
      s.cross_bytes > 0 ? fmt::format(", {} bytes", format_sig(s.cross_bytes)) : "");
  Table tab;
  tab.add_column("device");
  tab.add_column("ops");
  tab.add_column("busy");
  tab.add_column("utilization");
  for (int d = 0; d < s.devices; ++d) {
    int ops = 0;
    for (DeviceId x : s.device) ops += x == d;
    tab.add_row({std::to_string(d), std::to_string(ops),
                 s.unit == CostUnit::seconds
                     ? format_time(s.busy[static_cast<std::size_t>(d)], s.unit)
                     : format_sig(s.busy[static_cast<std::size_t>(d)]),
                 fmt::format("{:.1f}%", 100 * s.utilization(d))});
  }
  std::cout << tab.to_text();
}

void run_batch(const SimulateOptions& o, const Graph& g) {
  const std::vector<Assignment> batch =
      parse_assignments_jsonl(read_file(o.assignments), o.assignments, g, o.devices);
  int devices = o.devices > 0 ? o.devices : batch.front().devices;
  for (const Assignment& a : batch)
    if (a.devices != devices)
      throw InputError(
          o.assignments, 0,
          fmt::format("assignments disagree on the device count ({} and {}); pass --devices",
                      devices, a.devices));
  const Platform platform = platform_for(g, o.hardware, devices);
  warn_pricing(g, o.hardware, platform);
  const Simulator sim(g, platform);
  const DispatchRule rule = parse_dispatch_rule(o.order);
  SimWorkspace ws;
  std::vector<double> out(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i)
    out[i] = sim.makespan(batch[i].device_of, ws, rule, batch[i].order);
  std::string text;
  for (std::size_t i = 0; i < out.size(); ++i)
    text += o.json ? ojson({{"index", i}, {"makespan", out[i]}}).dump() + "\n"
                   : fmt::format("{}\n", out[i]);
  std::cout << text;
  if (o.bench <= 0) return;
  std::vector<std::vector<DeviceId>> plain;
  for (const Assignment& a : batch) plain.push_back(a.device_of);
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t sims = 0;
  double elapsed = 0;
  do {
    if (o.threads > 1) {
      sim.makespans(plain, o.threads, rule);
    } else {
      for (std::size_t i = 0; i < batch.size(); ++i)
        sim.makespan(batch[i].device_of, ws, rule, batch[i].order);
    }
    sims += batch.size();
    elapsed = Stopwatch::seconds_since(t0);
  } while (elapsed < o.bench);
  const double rate = static_cast<double>(sims) / elapsed;
  std::cerr << fmt::format(
      "bench: {} simulations of {} ops in {:.2f} s on {} thread(s): {:.0f} simulations/s\n", sims,
      g.num_nodes(), elapsed, o.threads, rate);
  if (o.json)
    std::cout << ojson({{"bench",
                         {{"simulations", sims},
                          {"seconds", elapsed},
                          {"threads", o.threads},
                          {"simulations_per_second", rate}}}})
                     .dump()
              << "\n";
}

void run_simulate(const SimulateOptions& o) {
  const Graph g = load_graph_logged(o.graph);
  if (!o.assignments.empty()) {
    run_batch(o, g);
    return;
  }
  const Assignment a = load_assignment(o.assignment, g, o.devices);
  const Platform platform = platform_for(g, o.hardware, a.devices);
  warn_pricing(g, o.hardware, platform);
  const Simulator sim(g, platform);
  const DispatchRule rule = parse_dispatch_rule(o.order);
  if (rule == DispatchRule::priority && a.order.empty())
    throw InputError(o.assignment, 0, "--order priority needs an \"order\" in the assignment");
  const Schedule s = sim.simulate(a, rule);
  const CostModel cost = platform.cost_model(g);
  const double bound = GraphAnalysis(g, cost).lower_bound(a.devices);
  const double tbound = std::max(bound, communication_lower_bound(g, cost, a.devices));
  const std::string title = fmt::format("{} on {} devices ({}{})", g.meta().name, a.devices,
                                        platform.name(), a.method.empty() ? "" : ", " + a.method);
  if (!o.trace.empty()) write_file_atomic(o.trace, format_chrome_trace(g, s, title));
  if (!o.gantt.empty()) write_file_atomic(o.gantt, format_gantt_svg(g, s, {title, 1400, true}));
  if (o.json) {
    ojson j = schedule_json(g, platform, s, bound, tbound);
    j["assignment"] = o.assignment;
    j["order"] = o.order;
    print_json(j);
  } else {
    print_schedule_text(g, platform, s, bound, tbound);
  }
}

}  // namespace

void add_simulate(CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  auto* cmd = app.add_subcommand(
      "simulate",
      "Simulate assignments on the work-conserving simulator: makespan, lower bound, per-device "
      "utilisation, transfers; optionally a Chrome trace and an SVG Gantt chart. With "
      "--assignments, evaluate many assignments (one per line) and print one makespan per line.");
  cmd->add_option("graph", o->graph, "graph file (.txt or .json)")->required();
  auto* one = cmd->add_option("-a,--assignment", o->assignment,
                              "assignment file (doppler-assignment JSON or a bare array)");
  auto* many = cmd->add_option("--assignments", o->assignments,
                               "JSON lines file: one assignment (object or array) per line");
  one->excludes(many);
  add_devices_option(*cmd, o->devices, false)
      ->description("device count (default: the assignment's)");
  add_hardware_option(*cmd, o->hardware);
  cmd->add_option("--order", o->order,
                  "dispatch rule: fifo (earliest ready first, ties to the lower id) or priority "
                  "(the assignment's order)")
      ->check(CLI::IsMember({"fifo", "priority"}))
      ->capture_default_str();
  cmd->add_option("--trace", o->trace,
                  "write a Chrome Trace Event JSON file (Perfetto, chrome://tracing)");
  cmd->add_option("--gantt", o->gantt, "write an SVG Gantt chart");
  cmd->add_option(
         "--bench", o->bench,
         "with --assignments: repeat the batch for this many seconds and report simulations/s")
      ->check(non_negative());
  cmd->add_option("--threads", o->threads, "with --bench: threads for the batch API")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "JSON output (one object; JSON lines with --assignments)");
  cmd->callback([o, one, many] {
    if (!*one && !*many)
      throw InputError("simulate: pass --assignment A.json or --assignments many.jsonl");
    run_simulate(*o);
  });
}

}  // namespace doppler::cli
