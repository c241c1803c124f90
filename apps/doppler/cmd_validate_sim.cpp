// doppler validate-sim GRAPH --hardware hw.json: simulated vs measured makespans of 30+
// assignments; Spearman rank correlation and mean absolute percentage error.
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"
#include "engine_options.hpp"

#include "doppler/engine/mpi_backend.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/hardware/platform_for.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/progress.hpp"
#include "doppler/validate/sim_to_real.hpp"
#include "doppler/workloads/dtype.hpp"

namespace doppler::cli {

namespace {

struct ValidateOptions {
  std::string graph, hardware, order = "fifo", csv, backend = "local", save_assignments;
  int devices = 0, assignments = 30, repeat = 5, warmup = 1;
  std::uint64_t seed = 0;
  std::int64_t budget = 2000;
  EngineCliOptions engine;  // links, pinning and copies (EngineFlags::links)
  bool json = false;
};

// A warning when the graph's dtype has another element size than the engine stores (the CPU
// engine f32; the CUDA engine f32 or, with --gpu-dtype bf16, bf16): the simulator would price
// copies by bytes the engine does not move.
void warn_on_other_element_size(const Graph& g, const EngineOptions& eo) {
  const std::string dt = graph_dtype(g);
  const auto parsed = workloads::parse_dtype(dt);
  const int graph_bytes = parsed ? workloads::dtype_size(*parsed) : 4;
  const GpuDevices::Storage stored =
      eo.backend == Backend::cuda ? eo.gpu.storage : GpuDevices::Storage::f32;
  if (graph_bytes == gpu_storage_bytes(stored)) return;
  spdlog::warn(
      "graph dtype is {}: the simulator charges {} bytes per element, the engine stores {} ({} "
      "bytes; generate with --dtype {} for sim-to-real comparisons)",
      dt, graph_bytes, gpu_storage_name(stored), gpu_storage_bytes(stored),
      gpu_storage_name(stored));
}

void run_validate(const ValidateOptions& o) {
  const Graph g = load_graph_logged(o.graph);
  if (o.hardware.empty())
    throw InputError("validate-sim: pass --hardware PROFILE (doppler calibrate -o)");
  const HardwareProfile profile = load_hardware_profile(o.hardware);
  const int devices = o.devices > 0 ? o.devices : profile.num_devices();
  const Problem problem(g, Platform::hardware(profile, devices));
  const EngineOptions eo =
      engine_options(o.engine, devices, o.backend == "cuda" ? Backend::cuda : Backend::cpu);
  warn_on_other_element_size(g, eo);
  std::unique_ptr<Engine> local;
  std::unique_ptr<MpiEngine> mpi;
  if (o.backend == "mpi")
    mpi = std::make_unique<MpiEngine>(g, eo);
  else
    local = std::make_unique<Engine>(g, eo);
  EngineRunner& engine = mpi ? static_cast<EngineRunner&>(*mpi) : *local;
  const RunMakespan run = [&engine](const Assignment& a, DispatchRule rule) {
    return engine.run(a, rule).makespan_seconds;
  };
  const bool reporter = !mpi || mpi->rank() == 0;  // MPI: rank 0 prints, the others run
  if (reporter) {
    for (const auto& w : mpi ? mpi->warnings() : local->warnings()) spdlog::warn("{}", w);
    if (const std::string w = kernel_coverage_warning(g, problem.platform()); !w.empty())
      spdlog::warn("{}", w);
  }
  ValidationOptions vo;
  vo.assignments = o.assignments;
  vo.seed = o.seed;
  vo.repeat = o.repeat;
  vo.warmup = o.warmup;
  vo.rule = parse_dispatch_rule(o.order);
  vo.search_budget = o.budget;
  ValidationResult r;
  {
    Progress progress(
        "validate-sim",
        reporter ? static_cast<std::int64_t>(o.assignments) * (o.warmup + o.repeat) : 0);
    r = validate_sim(problem, run, vo, [&](int done, int) {
      if (reporter) progress.update(done);
    });
  }
  if (!reporter) return;
  const std::string warning = level_warning(r.sim_over_measured);
  if (!warning.empty()) spdlog::warn("{}", warning);
  const std::string described = mpi ? mpi->describe() : local->describe();
  Table tab;
  tab.add_column("assignment", true);
  tab.add_column("simulated");
  tab.add_column("measured");
  tab.add_column("min..max");
  tab.add_column("error");
  const auto t = [](double x) { return format_time(x, CostUnit::seconds); };
  for (const ValidationCase& c : r.cases)
    tab.add_row({c.method, t(c.simulated), t(c.measured.median),
                 t(c.measured.min) + ".." + t(c.measured.max),
                 fmt::format("{:+.1f}%", 100 * (c.simulated / c.measured.median - 1))});
  if (!o.csv.empty()) write_file_atomic(o.csv, tab.to_csv());
  if (!o.save_assignments.empty()) {
    std::string lines;
    for (const ValidationCase& c : r.cases)
      lines += format_assignment_json_line(c.assignment) + "\n";
    write_file_atomic(o.save_assignments, lines);
  }
  if (o.json) {
    ojson j;
    j["graph"] = g.meta().name;
    j["ops"] = g.num_nodes();
    j["devices"] = devices;
    j["hardware"] = profile.name;
    j["engine"] = described;
    j["order"] = o.order;
    j["repeat"] = o.repeat;
    j["spearman"] = r.spearman;
    j["pearson"] = r.pearson;
    j["mape"] = r.mape;
    j["spearman_min"] = r.spearman_min;
    j["mape_min"] = r.mape_min;
    j["sim_over_measured"] = r.sim_over_measured;
    j["level_warning"] = warning.empty() ? ojson(nullptr) : ojson(warning);
    j["spearman_split_half"] =
        std::isnan(r.spearman_split_half) ? ojson(nullptr) : ojson(r.spearman_split_half);
    ojson cs = ojson::array();
    for (const ValidationCase& c : r.cases)
      cs.push_back({{"method", c.method},
                    {"simulated", c.simulated},
                    {"measured", c.measured.median},
                    {"measured_min", c.measured.min},
                    {"measured_max", c.measured.max},
                    {"runs", c.measured.makespans},
                    {"run_positions", c.run_positions}});
    j["cases"] = std::move(cs);
    print_json(j);
    return;
  }
  std::cout << fmt::format("{:<14}{} ({} ops) on {} devices\n", "graph", g.meta().name,
                           g.num_nodes(), devices);
  std::cout << fmt::format("{:<14}{}\n", "simulator",
                           "hardware model " + profile.name + ", order " + o.order);
  std::cout << fmt::format("{:<14}{}\n", "engine", described);
  std::cout << tab.to_text();
  std::cout << fmt::format("{:<14}{:.3f}   (rank correlation over {} assignments)\n", "spearman",
                           r.spearman, r.cases.size());
  std::cout << fmt::format("{:<14}{:.3f}\n", "pearson", r.pearson);
  std::cout << fmt::format("{:<14}{:.1f}%   (mean |simulated - measured| / measured)\n", "mape",
                           100 * r.mape);
  std::cout << fmt::format("{:<14}spearman {:.3f}, mape {:.1f}%   (against the fastest run)\n",
                           "min runs", r.spearman_min, 100 * r.mape_min);
  std::cout << fmt::format("{:<14}{:.3f}   (median simulated / measured{})\n", "level",
                           r.sim_over_measured, warning.empty() ? "" : ": off, see the warning");
  if (!std::isnan(r.spearman_split_half))
    std::cout << fmt::format(
        "{:<14}spearman {:.3f}   (engine against itself: medians of even vs odd runs; the noise "
        "ceiling of any simulator's ranking)\n",
        "split half", r.spearman_split_half);
}

}  // namespace

void add_validate_sim(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate-sim",
      "Compare the simulator (with a calibrated --hardware profile) with the real engine over "
      "30+ distinct assignments (every heuristic, uniformly random, skewed random and perturbed "
      "ones; no placement twice): simulated and measured makespans, Spearman rank correlation, "
      "mean absolute percentage error.");
  cmd->add_option("graph", o->graph, "graph file (.txt or .json)")->required();
  add_hardware_option(*cmd, o->hardware)->required();
  add_devices_option(*cmd, o->devices, false)->description("device count (default: the profile's)");
  cmd->add_option("--assignments", o->assignments, "assignments to compare (at least 9)")
      ->check(CLI::Range(9, 100000))
      ->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "measured runs per assignment (median)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "unmeasured runs per assignment")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("-s,--seed", o->seed,
                  "seed of the random assignments and of each round's run order")
      ->capture_default_str();
  cmd->add_option("--budget", o->budget, "simulations of the local-search heuristic")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--order", o->order, "dispatch rule of both: fifo or priority")
      ->check(CLI::IsMember({"fifo", "priority"}))
      ->capture_default_str();
  add_engine_options(*cmd, o->engine, EngineFlags::links);
  cmd->add_option("--backend", o->backend,
                  "local (threads), mpi (start with mpirun -np R; devices spread over ranks, "
                  "rank 0 reports) or cuda (GPU partitions or GPUs: --gpu-partitions, --gpus)")
      ->check(CLI::IsMember({"local", "mpi", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--csv", o->csv, "also write the table as CSV");
  cmd->add_option("--save-assignments", o->save_assignments,
                  "also write the assignments, one JSON object per line in the table's order "
                  "(with \"method\"), e.g. to re-simulate the measured placements with another "
                  "profile: doppler simulate GRAPH --assignments FILE --hardware OTHER.json");
  cmd->add_flag("--json", o->json, "print one JSON object instead of text");
  cmd->callback([o] { run_validate(*o); });
}

}  // namespace doppler::cli
