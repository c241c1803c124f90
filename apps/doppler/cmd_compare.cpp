// doppler compare GRAPH --devices P: every method on the same simulator, as a table.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <tuple>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"
#include "compare.hpp"
#include "methods.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"
#include "doppler/util/progress.hpp"

namespace doppler::cli {

namespace {

// Results of one method over all seeds.
struct Row {
  std::string method;
  std::vector<MethodRun> runs;
  double mean = 0, std = 0, seconds = 0;
  std::int64_t evaluations = 0;
  std::vector<double> measured;  // per seed: median measured makespan (--measure)
  double measured_mean = 0, measured_std = 0;
};

// Mean and sample standard deviation.
std::pair<double, double> mean_std(const std::vector<double>& x) {
  double m = 0, v = 0;
  for (double a : x) m += a / static_cast<double>(x.size());
  for (double a : x) v += (a - m) * (a - m);
  return {m, x.size() > 1 ? std::sqrt(v / static_cast<double>(x.size() - 1)) : 0.0};
}

std::string file_safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return s;
}

}  // namespace

void compare_graph(const Graph& g, const CompareOptions& o) {
  const Problem problem(g, platform_for(g, o.hardware, o.devices));
  const std::vector<std::string> methods = expand_methods(o.methods, problem);
  for (const std::string& dir : {o.gantt_dir, o.assignments_dir})
    if (!dir.empty() && !std::filesystem::is_directory(dir))
      throw InputError(dir, 0, "not a directory");

  std::vector<Row> rows;
  std::vector<std::pair<std::string, std::int64_t>> refused;  // over the budget: not reported
  int total_runs = 0;
  for (const auto& m : methods) total_runs += method_is_deterministic(m) ? 1 : o.seeds;
  Progress progress("compare", total_runs);
  int done = 0;
  for (const std::string& m : methods) {
    Row row;
    row.method = m;
    const int seeds = method_is_deterministic(m) ? 1 : o.seeds;
    for (int s = 0; s < seeds; ++s) {
      progress.update(done, m);
      row.runs.push_back(
          run_method(m, problem, {static_cast<std::uint64_t>(s), {o.budget, o.time_budget}}));
      ++done;
    }
    std::vector<double> sims;
    for (const MethodRun& r : row.runs) {
      sims.push_back(r.makespan);
      row.seconds += r.seconds / static_cast<double>(row.runs.size());
      row.evaluations = std::max(row.evaluations, r.evaluations);
    }
    std::tie(row.mean, row.std) = mean_std(sims);
    if (o.budget > 0 && row.evaluations > o.budget) {  // never report a method over the budget
      spdlog::warn("method {} made {} simulator calls, over the budget of {}: not reported", m,
                   row.evaluations, o.budget);
      refused.push_back({m, row.evaluations});
      continue;
    }
    rows.push_back(std::move(row));
  }
  progress.finish();
  if (o.measure) {
    Engine engine(g, engine_options(o.engine, o.devices));
    for (const auto& w : engine.warnings()) spdlog::warn("{}", w);
    Progress mp("measure", static_cast<std::int64_t>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      mp.update(static_cast<std::int64_t>(i), rows[i].method);
      for (const MethodRun& run : rows[i].runs)
        rows[i].measured.push_back(
            engine.measure(run.assignment, DispatchRule::fifo, o.measure_repeat, 1).median);
      std::tie(rows[i].measured_mean, rows[i].measured_std) = mean_std(rows[i].measured);
    }
  }

  if (rows.empty())
    throw InputError("compare: every method went over the budget (see the warnings)");
  double best = rows.front().mean;
  for (const Row& r : rows) best = std::min(best, r.mean);
  const double lb = problem.lower_bound();
  const bool seconds_unit = problem.platform().unit() == CostUnit::seconds;
  const bool ref_scale = !seconds_unit && g.meta().origin == "reference-text";
  const auto fmt_ms = [&](double x) {
    if (seconds_unit) return format_time(x, CostUnit::seconds);
    return ref_scale ? format_sig(x / 1e10) : format_sig(x);
  };

  // Per-method files: Gantt chart and assignment of the best seed.
  for (const Row& r : rows) {
    const MethodRun* best_run = &r.runs.front();
    for (const MethodRun& run : r.runs)
      if (run.makespan < best_run->makespan) best_run = &run;
    const std::string stem = file_safe(r.method);
    if (!o.gantt_dir.empty()) {
      const Schedule s = problem.simulator().simulate(best_run->assignment);
      write_file_atomic(
          std::filesystem::path(o.gantt_dir) / (stem + ".svg"),
          format_gantt_svg(g, s,
                           {fmt::format("{}: {} on {} devices ({})", g.meta().name, r.method,
                                        o.devices, problem.platform().name()),
                            1400, true}));
    }
    if (!o.assignments_dir.empty())
      write_file_atomic(std::filesystem::path(o.assignments_dir) / (stem + ".json"),
                        format_assignment_json(best_run->assignment));
  }

  Table table;
  table.add_column("method", true);
  table.add_column(seconds_unit ? "makespan" : (ref_scale ? "makespan/1e10" : "makespan"));
  table.add_column("std");
  table.add_column("vs best");
  table.add_column("gap to LB");
  table.add_column("time (ms)");
  table.add_column("sims");
  table.add_column("seeds");
  if (o.measure) {
    table.add_column("measured");
    table.add_column("meas. std");
  }
  Table csv;
  for (const char* c : {"method", "makespan_mean", "makespan_std", "ratio_to_best",
                        "gap_to_lower_bound", "seconds_mean", "evaluations", "seeds"})
    csv.add_column(c);
  if (o.measure) {
    csv.add_column("measured_mean_seconds");
    csv.add_column("measured_std_seconds");
  }
  ojson jrows = ojson::array();
  for (const Row& r : rows) {
    std::vector<std::string> cells = {
        r.method,
        fmt_ms(r.mean),
        r.std > 0 ? fmt_ms(r.std) : "0",
        fmt::format("{:.3f}", r.mean / best),
        fmt::format("{:.1f}%", lb > 0 ? 100 * (r.mean / lb - 1) : 0.0),
        fmt::format("{:.2f}", 1e3 * r.seconds),
        std::to_string(r.evaluations),
        std::to_string(r.runs.size())};
    std::vector<std::string> csv_cells = {r.method,
                                          fmt::format("{}", r.mean),
                                          fmt::format("{}", r.std),
                                          fmt::format("{}", r.mean / best),
                                          fmt::format("{}", lb > 0 ? r.mean / lb - 1 : 0.0),
                                          fmt::format("{}", r.seconds),
                                          std::to_string(r.evaluations),
                                          std::to_string(r.runs.size())};
    if (o.measure) {
      cells.push_back(format_time(r.measured_mean, CostUnit::seconds));
      cells.push_back(r.measured_std > 0 ? format_time(r.measured_std, CostUnit::seconds) : "0");
      csv_cells.push_back(fmt::format("{}", r.measured_mean));
      csv_cells.push_back(fmt::format("{}", r.measured_std));
    }
    table.add_row(std::move(cells));
    csv.add_row(std::move(csv_cells));
    ojson makespans = ojson::array();
    for (const MethodRun& run : r.runs) makespans.push_back(run.makespan);
    jrows.push_back({{"method", r.method},
                     {"makespans", makespans},
                     {"mean", r.mean},
                     {"std", r.std},
                     {"ratio_to_best", r.mean / best},
                     {"gap_to_lower_bound", lb > 0 ? r.mean / lb - 1 : 0.0},
                     {"seconds_mean", r.seconds},
                     {"evaluations", r.evaluations}});
    if (o.measure) {
      jrows.back()["measured_seconds"] = r.measured;
      jrows.back()["measured_mean"] = r.measured_mean;
      jrows.back()["measured_std"] = r.measured_std;
    }
  }
  ojson j;
  j["graph"] = g.meta().name;
  j["ops"] = g.num_nodes();
  j["devices"] = o.devices;
  j["model"] = problem.platform().name();
  j["unit"] = seconds_unit ? "seconds" : "reference";
  j["lower_bound"] = lb;
  j["lower_bound_with_transfers"] = problem.transfer_lower_bound();
  j["seeds"] = o.seeds;
  j["budget_evaluations"] = o.budget;
  j["methods"] = std::move(jrows);
  ojson jrefused = ojson::array();
  for (const auto& [m, calls] : refused)
    jrefused.push_back({{"method", m}, {"evaluations", calls}});
  j["refused_over_budget"] = jrefused;
  if (o.measure)
    j["measured"] = {{"engine", "cpu"},
                     {"repeat", o.measure_repeat},
                     {"statistic", "median of repeat runs, mean over seeds"}};
  if (!o.csv.empty()) write_file_atomic(o.csv, csv.to_csv());
  if (!o.json_file.empty()) write_file_atomic(o.json_file, j.dump(2) + "\n");
  if (o.json) {
    print_json(j);
    return;
  }
  std::cout << fmt::format(
      "{} ({} ops) on {} devices, model {}; lower bound {} ({} with transfers){}; mean over {} "
      "seed(s) for randomised methods; search budget {} simulations\n\n",
      g.meta().name, g.num_nodes(), o.devices, problem.platform().name(), fmt_ms(lb),
      fmt_ms(problem.transfer_lower_bound()), ref_scale ? " (reference units / 1e10)" : "", o.seeds,
      o.budget);
  std::cout << (o.markdown ? table.to_markdown() : table.to_text());
  for (const auto& [m, calls] : refused)
    std::cout << fmt::format("not reported: {} made {} simulator calls, over the budget of {}\n", m,
                             calls, o.budget);
}

namespace {

void run_compare(const CompareOptions& o) {
  compare_graph(load_graph_logged(o.graph), o);
}

}  // namespace

void add_compare(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Run several placement methods on one graph and compare their simulated makespans");
  cmd->add_option("graph", o->graph, "graph file (.txt or .json)")->required();
  add_devices_option(*cmd, o->devices, false)->capture_default_str();
  cmd->add_option("--methods", o->methods, "comma-separated method specs, or all")
      ->capture_default_str();
  cmd->add_option("--seeds", o->seeds,
                  "seeds per randomised method (deterministic methods run once)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_hardware_option(*cmd, o->hardware);
  cmd->add_option("--budget", o->budget, "simulator calls allowed to each search run")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--time-budget", o->time_budget, "seconds allowed to each search run (0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--csv", o->csv, "also write the table as CSV to this file");
  cmd->add_option("--json-file", o->json_file, "also write the JSON result to this file");
  cmd->add_option("--gantt-dir", o->gantt_dir,
                  "write <method>.svg Gantt charts (best seed) into this directory");
  cmd->add_option("--assignments-dir", o->assignments_dir,
                  "write <method>.json assignments (best seed) into this directory");
  cmd->add_flag("--json", o->json, "print one JSON object instead of the table");
  cmd->add_flag("--markdown", o->markdown, "print the table as Markdown");
  cmd->add_flag("--measure", o->measure,
                "also run every assignment on the real engine (median of --repeat runs) and add "
                "measured columns");
  cmd->add_option("--repeat", o->measure_repeat,
                  "measured runs per assignment for --measure and doppler-sys")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_engine_options(*cmd, o->engine);
  cmd->footer(methods_help());
  cmd->callback([o] { run_compare(*o); });
}

}  // namespace doppler::cli
