// doppler place GRAPH --devices P --method M: one placement, scored by the simulator.
#include <iostream>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "methods.hpp"

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/heuristics/anneal.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/progress.hpp"

namespace doppler::cli {

namespace {

struct PlaceCmdOptions {
  std::string graph, method = "auto", hardware, output, policy;
  int devices = 0;  // 0: the graph's recorded count (devices_for)
  std::uint64_t seed = 0;
  std::int64_t budget = 0;
  double time_budget = 0;
  int threads = 0;  // 0: every core
  int lanes = 0;    // 0: the rule
  bool json = false;
};

void run_place(const PlaceCmdOptions& o) {
  const Graph g = load_graph_logged(o.graph);
  const int devices = devices_for(g, o.devices);
  const Problem problem(g, platform_for(g, o.hardware, devices));
  warn_pricing(g, o.hardware, problem.platform());
  std::string method = o.method;
  if (!o.policy.empty()) {
    if (method.rfind("doppler", 0) != 0)
      throw InputError("--policy applies to the doppler methods only");
    method += std::string(method.find(':') == std::string::npos ? ":" : ",") + "policy=" + o.policy;
  }
  PlaceOptions po;
  po.seed = o.seed;
  po.budget = {o.budget, o.time_budget};
  po.threads = resolve_threads(o.threads);
  po.lanes = o.lanes;
  // The search's progress on a terminal: the channel Python's place(callback=) uses.
  Progress bar("place", o.budget);
  std::mutex bar_mutex;
  if (Progress::enabled())
    po.progress = [&](const ProgressPoint& p) {
      const std::lock_guard<std::mutex> lock(bar_mutex);
      bar.update(p.calls, fmt::format("{:.1f} s, best {:.6g}", p.seconds, p.makespan));
      return true;
    };
  const MethodRun r = run_method(method, problem, po);
  bar.finish();
  if (!o.output.empty()) write_file_atomic(o.output, format_assignment_json(r.assignment));
  const double lb = problem.lower_bound();
  const double tlb = problem.transfer_lower_bound();
  const bool ref_scale = problem.platform().is_reference() && g.meta().origin == "reference-text";
  if (o.json) {
    ojson j;
    j["graph"] = g.meta().name;
    j["devices"] = devices;
    j["model"] = problem.platform().name();
    j["method"] = o.method;
    j["seed"] = o.seed;
    j["makespan"] = r.makespan;
    if (ref_scale) j["makespan_div_1e10"] = r.makespan / 1e10;
    j["lower_bound"] = lb;
    j["gap_to_bound"] = lb > 0 ? r.makespan / lb - 1 : 0.0;
    j["lower_bound_with_transfers"] = tlb;
    j["gap_to_bound_with_transfers"] = tlb > 0 ? r.makespan / tlb - 1 : 0.0;
    j["cross_transfers"] = r.cross_transfers;
    j["cross_bytes"] = r.cross_bytes;
    j["placement_seconds"] = r.seconds;
    j["evaluations"] = r.evaluations;
    j["threads"] = po.threads;
    // Lanes per annealing chain (for the searches that anneal).
    j["lanes"] = resolve_lanes(problem, po.threads, po.lanes, po.budget);
    ojson curve = ojson::array();  // [seconds, calls, best makespan] per improvement
    for (const ProgressPoint& p : r.curve) curve.push_back({p.seconds, p.calls, p.makespan});
    j["curve"] = std::move(curve);
    if (!r.note.empty()) j["status"] = r.note;
    j["ops_per_device"] = r.assignment.ops_per_device();
    if (!o.output.empty()) j["output"] = o.output;
    print_json(j);
    return;
  }
  const auto t = [&](double x) {
    if (problem.platform().unit() == CostUnit::seconds) return format_time(x, CostUnit::seconds);
    return format_sig(x) + " ref" +
           (ref_scale ? fmt::format("   (/1e10: {})", format_sig(x / 1e10)) : "");
  };
  std::string ops;
  for (int c : r.assignment.ops_per_device()) ops += (ops.empty() ? "" : " / ") + std::to_string(c);
  std::cout << fmt::format("{:<18}{} on {} devices ({}), method {}\n", "graph", g.meta().name,
                           devices, problem.platform().name(), o.method);
  std::cout << fmt::format("{:<18}{}\n", "makespan", t(r.makespan));
  std::cout << fmt::format("{:<18}{}   (gap {:.1f}%)\n", "lower bound", t(lb),
                           lb > 0 ? 100 * (r.makespan / lb - 1) : 0.0);
  std::cout << fmt::format("{:<18}{}   (gap {:.1f}%)\n", "  with transfers", t(tlb),
                           tlb > 0 ? 100 * (r.makespan / tlb - 1) : 0.0);
  std::cout << fmt::format(
      "{:<18}{}{}\n", "cross-device", fmt::format("{} transfers", r.cross_transfers),
      r.cross_bytes > 0 ? fmt::format(", {} bytes", format_sig(r.cross_bytes)) : "");
  std::cout << fmt::format("{:<18}{}\n", "ops per device", ops);
  std::cout << fmt::format("{:<18}{:.3f} s{}, {} thread{}\n", "placement time", r.seconds,
                           r.evaluations ? fmt::format(" ({} simulations)", r.evaluations) : "",
                           po.threads, po.threads == 1 ? "" : "s");
  if (!r.note.empty()) std::cout << fmt::format("{:<17} {}\n", r.assignment.method, r.note);
  if (!o.output.empty()) std::cout << fmt::format("{:<18}{}\n", "written", o.output);
}

}  // namespace

void add_place(CLI::App& app) {
  auto o = std::make_shared<PlaceCmdOptions>();
  auto* cmd =
      app.add_subcommand("place", "Place a graph with one method and score it on the simulator");
  cmd->add_option("graph", o->graph, "graph file (.txt or .json)")->required();
  add_graph_devices_option(*cmd, o->devices);
  cmd->add_option("-m,--method", o->method, "placement method (see below)")->capture_default_str();
  cmd->add_option("-s,--seed", o->seed, "seed of every random choice")->capture_default_str();
  add_hardware_option(*cmd, o->hardware);
  add_budget_options(*cmd, o->budget, o->time_budget, "the method", 0);
  add_threads_option(*cmd, o->threads, o->lanes, true);
  cmd->add_option(
      "--policy", o->policy,
      "a trained policy (doppler train's RUN directory or RUN/ckpt.pt), for the doppler methods");
  cmd->add_option("-o,--output", o->output,
                  "write the assignment (doppler-assignment JSON, atomically)");
  cmd->add_flag("--json", o->json, "print one JSON object instead of text");
  cmd->footer(methods_help());
  cmd->callback([o] { run_place(*o); });
}

}  // namespace doppler::cli
