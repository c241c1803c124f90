// doppler bench-suite INPUTS... --methods LIST: many graphs, many methods, one aggregate table.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"
#include "methods.hpp"
#include "suite_inputs.hpp"

#include "doppler/heuristics/problem.hpp"
#include "doppler/report/suite.hpp"
#include "doppler/report/table.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/progress.hpp"

namespace doppler::cli {

namespace {

// Method label of the rows that simulate a file's own schedule.
constexpr const char* kFileSchedule = "(file schedule)";

struct SuiteOptions {
  std::vector<std::string> inputs;
  std::string methods = "critical-path,heft,etf,local-search", hardware, csv, json_file;
  int devices = 0, seeds = 3;
  bool override_devices = false, json = false, markdown = false;
  std::int64_t budget = kDefaultSearchCalls;
  double time_budget = 0;
  int threads = 1;
  int lanes = 0;
};

// Runs every method (every seed when randomised) on every instance, in order.
std::vector<SuiteRun> run_suite(std::vector<LoadedInstance>& instances, const SuiteOptions& o,
                                std::vector<SkippedFile>& skipped) {
  std::vector<SuiteRun> runs;
  Progress progress("bench-suite", static_cast<std::int64_t>(instances.size()));
  std::vector<LoadedInstance> kept;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    LoadedInstance& li = instances[i];
    progress.update(static_cast<std::int64_t>(i), li.info.name);
    try {
      const Problem problem(*li.graph, platform_for(*li.graph, o.hardware, li.info.devices));
      li.info.lower_bound = problem.lower_bound();
      std::vector<SuiteRun> mine;
      if (li.schedule)  // the file's own schedule on our runtime: an upper bound of the reachable
        mine.push_back(
            {kept.size(), kFileSchedule, 0, problem.simulator().makespan(*li.schedule), 0.0, 1});
      for (const std::string& m : expand_methods(o.methods, problem)) {
        const int seeds = method_is_deterministic(m) ? 1 : o.seeds;
        for (int s = 0; s < seeds; ++s) {
          const MethodRun r = run_method(
              m, problem, search_options(s, o.budget, o.time_budget, o.threads, o.lanes));
          mine.push_back({kept.size(), m, r.seed, r.makespan, r.seconds, r.evaluations});
        }
      }
      runs.insert(runs.end(), mine.begin(), mine.end());
      kept.push_back(std::move(li));
    } catch (const InputError& e) {  // e.g. no reference costs and no --hardware
      skipped.push_back({li.info.file, e.what()});
    }
  }
  progress.finish();
  instances = std::move(kept);
  return runs;
}

// Warns about runs below a stated optimum: the file's optimum (or the simulator) is wrong.
void check_optima(const std::vector<LoadedInstance>& instances, const std::vector<SuiteRun>& runs) {
  for (const SuiteRun& r : runs) {
    const SuiteInstance& in = instances[r.instance].info;
    if (in.optimum && r.makespan < *in.optimum * (1 - 1e-9))
      spdlog::warn("{}: {} (seed {}) reached {} below the stated optimum {}", in.file, r.method,
                   r.seed, r.makespan, *in.optimum);
  }
}

std::string pct(double x) {
  return fmt::format("{:.2f}%", 100 * x);
}

std::vector<SuiteInstance> infos_of(const std::vector<LoadedInstance>& instances) {
  std::vector<SuiteInstance> out;
  for (const LoadedInstance& li : instances) out.push_back(li.info);
  return out;
}

Table summary_table(const std::vector<SuiteMethodSummary>& sums, bool any_optimum) {
  Table t;
  t.add_column("method", true);
  for (const char* c : {"instances", "mean gap", "worst gap", "best"}) t.add_column(c);
  if (any_optimum) t.add_column("optimal");
  t.add_column("time (ms)");
  t.add_column("sims");
  for (const SuiteMethodSummary& s : sums) {
    std::vector<std::string> row = {s.method, std::to_string(s.instances), pct(s.mean_gap),
                                    pct(s.worst_gap), std::to_string(s.best)};
    if (any_optimum) row.push_back(std::to_string(s.optimal));
    row.push_back(fmt::format("{:.2f}", 1e3 * s.mean_seconds));
    row.push_back(std::to_string(s.max_evaluations));
    t.add_row(std::move(row));
  }
  return t;
}

// One row per run: the per-instance data behind the summary.
Table runs_csv(const std::vector<LoadedInstance>& instances, const std::vector<SuiteRun>& runs,
               const std::vector<double>& known) {
  Table t;
  for (const char* c : {"instance", "file", "ops", "devices", "method", "seed", "makespan",
                        "best_known", "gap", "optimum", "lower_bound", "seconds", "evaluations"})
    t.add_column(c);
  for (const SuiteRun& r : runs) {
    const SuiteInstance& in = instances[r.instance].info;
    const double ref = known[r.instance];
    t.add_row({in.name, in.file, std::to_string(in.ops), std::to_string(in.devices), r.method,
               std::to_string(r.seed), fmt::format("{}", r.makespan), fmt::format("{}", ref),
               fmt::format("{}", ref > 0 ? r.makespan / ref - 1 : 0.0),
               in.optimum ? fmt::format("{}", *in.optimum) : "", fmt::format("{}", in.lower_bound),
               fmt::format("{}", r.seconds), std::to_string(r.evaluations)});
  }
  return t;
}

ojson suite_json(const std::vector<LoadedInstance>& instances, const std::vector<SuiteRun>& runs,
                 const std::vector<SkippedFile>& skipped, const SuiteOptions& o) {
  const std::vector<SuiteInstance> infos = infos_of(instances);
  const std::vector<double> known = suite_best_known(infos, runs);
  ojson j;
  j["seeds"] = o.seeds;
  j["budget_evaluations"] = o.budget;
  ojson jin = ojson::array();
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const SuiteInstance& in = instances[i].info;
    jin.push_back({{"name", in.name},
                   {"file", in.file},
                   {"ops", in.ops},
                   {"devices", in.devices},
                   {"optimum", in.optimum ? ojson(*in.optimum) : ojson(nullptr)},
                   {"lower_bound", in.lower_bound},
                   {"best_known", known[i]}});
  }
  j["instances"] = jin;
  ojson jsk = ojson::array();
  for (const SkippedFile& s : skipped) jsk.push_back({{"file", s.file}, {"error", s.error}});
  j["skipped"] = jsk;
  ojson jm = ojson::array();
  for (const SuiteMethodSummary& s : summarize_suite(infos, runs))
    jm.push_back({{"method", s.method},
                  {"instances", s.instances},
                  {"mean_gap", s.mean_gap},
                  {"worst_gap", s.worst_gap},
                  {"best", s.best},
                  {"optimal", s.optimal},
                  {"mean_seconds", s.mean_seconds},
                  {"max_evaluations", s.max_evaluations}});
  j["methods"] = jm;
  ojson jr = ojson::array();
  for (const SuiteRun& r : runs)
    jr.push_back({{"instance", r.instance},
                  {"name", instances[r.instance].info.name},
                  {"method", r.method},
                  {"seed", r.seed},
                  {"makespan", r.makespan},
                  {"seconds", r.seconds},
                  {"evaluations", r.evaluations}});
  j["runs"] = jr;
  return j;
}

void print_report(const std::vector<LoadedInstance>& instances, const std::vector<SuiteRun>& runs,
                  const std::vector<SkippedFile>& skipped, const SuiteOptions& o) {
  const std::vector<SuiteInstance> infos = infos_of(instances);
  int with_optimum = 0;
  for (const auto& in : infos) with_optimum += in.optimum ? 1 : 0;
  const bool any_optimum = with_optimum > 0;
  std::cout << fmt::format(
      "{} instance(s) ({} with a stated optimum), {} skipped; gap = mean makespan over {} seed(s) "
      "/ best known value - 1 (the stated optimum, else the best mean of any method); search "
      "budget {}\n\n",
      instances.size(), with_optimum, skipped.size(), o.seeds,
      budget_text(o.budget, o.time_budget, o.threads));
  const Table t = summary_table(summarize_suite(infos, runs), any_optimum);
  std::cout << (o.markdown ? t.to_markdown() : t.to_text());
  for (const SkippedFile& s : skipped) std::cout << "skipped: " << s.error << "\n";
}

void run_bench_suite(const SuiteOptions& o) {
  std::vector<SkippedFile> skipped;
  std::vector<LoadedInstance> instances =
      load_suite(expand_suite_inputs(o.inputs), o.devices, o.override_devices, skipped);
  for (const SkippedFile& s : skipped) spdlog::warn("skipped: {}", s.error);
  const std::size_t bad_files = skipped.size();
  const std::vector<SuiteRun> runs = run_suite(instances, o, skipped);
  for (std::size_t i = bad_files; i < skipped.size(); ++i)
    spdlog::warn("skipped: {}", skipped[i].error);
  if (instances.empty()) throw InputError("bench-suite: no usable graph among the inputs");
  check_optima(instances, runs);
  if (!o.csv.empty())
    write_file_atomic(
        o.csv, runs_csv(instances, runs, suite_best_known(infos_of(instances), runs)).to_csv());
  const ojson j = suite_json(instances, runs, skipped, o);
  if (!o.json_file.empty()) write_file_atomic(o.json_file, j.dump(2) + "\n");
  if (o.json)
    print_json(j);
  else
    print_report(instances, runs, skipped, o);
}

}  // namespace

void add_bench_suite(CLI::App& app) {
  auto o = std::make_shared<SuiteOptions>();
  auto* cmd = app.add_subcommand(
      "bench-suite",
      "Run placement methods over many graphs and print one aggregate table: per method the "
      "mean and worst gap to each instance's best known value, how often it is best, and time");
  cmd->add_option("inputs", o->inputs,
                  "graph files, directories (their .txt/.json/.dot/.gv/.stg files) or .list files "
                  "(one path per line)")
      ->required();
  cmd->add_option("--methods", o->methods, "comma-separated method specs, or all")
      ->capture_default_str();
  cmd->add_option("-d,--devices", o->devices,
                  "device count for files that state none (a file's own 'devices' wins unless "
                  "--override-devices)")
      ->check(CLI::Range(1, kMaxDevices));
  cmd->add_flag("--override-devices", o->override_devices,
                "place every graph on --devices, ignoring the files' counts (and their optima)");
  cmd->add_option("--seeds", o->seeds, "seeds per randomised method")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_threads_option(*cmd, o->threads, o->lanes, false);
  add_budget_options(*cmd, o->budget, o->time_budget, "each search or learned run",
                     kDefaultSearchCalls);
  add_hardware_option(*cmd, o->hardware);
  cmd->add_option("--csv", o->csv, "write one CSV row per run (instance, method, seed, gap...)");
  cmd->add_option("--json-file", o->json_file, "write instances, summary and runs as JSON");
  cmd->add_flag("--json", o->json, "print the JSON document instead of the table");
  cmd->add_flag("--markdown", o->markdown, "print the table as Markdown");
  cmd->footer(
      "A file that cannot be read or placed is reported and skipped. A file's 'optimum' "
      "parameter (planted instances, DOT files that state one) is its best known value.\n" +
      methods_help());
  cmd->callback([o, cmd] {
    if (o->time_budget > 0 && cmd->count("--budget") == 0) o->budget = 0;  // seconds alone
    if (o->override_devices && o->devices == 0)
      throw InputError("--override-devices needs --devices P");
    run_bench_suite(*o);
  });
}

}  // namespace doppler::cli
