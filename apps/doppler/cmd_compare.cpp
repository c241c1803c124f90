// doppler compare GRAPH --devices P: every method on the same simulator, as a table.
#include <algorithm>
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
#include "measured_winner.hpp"
#include "methods.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/measure_interleaved.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/report/curves.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/median_interval.hpp"
#include "doppler/util/parse.hpp"
#include "doppler/util/progress.hpp"
#include "doppler/validate/sim_to_real.hpp"

namespace doppler::cli {

namespace {

// Results of one method over all seeds.
struct Row {
  std::string method;
  std::vector<MethodRun> runs;
  std::vector<int> seeds;      // the seed of each run
  bool deterministic = false;  // runs once, whatever the seed
  double mean = 0, std = 0, seconds = 0;
  std::int64_t evaluations = 0;
  std::vector<double> measured;  // per seed: median measured makespan (--measure)
  double measured_mean = 0, measured_std = 0;
  MedianInterval measured_pool;  // median and 95% interval of every measured run of every seed
  std::vector<std::string> measured_same_as;  // per seed: "method (seed s)" measured for it, or ""
  std::vector<std::size_t> placement_ids;     // per seed: index of the first identical placement
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

// Runs every seed's assignment of every row on the CPU engine, interleaved (o.measure_*
// repeats, adaptive); identical placements are run once and share their measurement.
void measure_rows(const Graph& g, const CompareOptions& o, std::vector<Row>& rows) {
  Engine engine(
      g, engine_options(o.engine, o.devices, o.backend == "cuda" ? Backend::cuda : Backend::cpu));
  for (const auto& w : engine.warnings()) spdlog::warn("{}", w);
  const RepeatPolicy policy{o.measure_repeat, std::max(o.measure_repeat, o.measure_max_repeat),
                            o.measure_target, o.measure_seconds};
  std::vector<Assignment> as;
  std::vector<std::pair<std::size_t, std::size_t>> who;  // (row, run) of each assignment
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t k = 0; k < rows[i].runs.size(); ++k) {
      as.push_back(rows[i].runs[k].assignment);
      who.emplace_back(i, k);
    }
  std::int64_t done = 0;
  Progress mp("measure", -1);
  const InterleavedMeasurements m = measure_interleaved(
      [&](const Assignment& a) {
        mp.update(++done, "engine runs");
        return engine.run(a, DispatchRule::fifo);
      },
      as, policy, 1);
  mp.finish();
  std::vector<std::vector<double>> pools(rows.size());
  for (std::size_t j = 0; j < as.size(); ++j) {
    Row& r = rows[who[j].first];
    const Measurement& mj = m.measured[j];
    r.measured.push_back(mj.median);
    r.placement_ids.push_back(m.first[j]);
    pools[who[j].first].insert(pools[who[j].first].end(), mj.makespans.begin(), mj.makespans.end());
    const auto [fi, fk] = who[m.first[j]];
    r.measured_same_as.push_back(
        m.first[j] == j ? "" : fmt::format("{} (seed {})", rows[fi].method, rows[fi].seeds[fk]));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::tie(rows[i].measured_mean, rows[i].measured_std) = mean_std(rows[i].measured);
    rows[i].measured_pool = median_interval(pools[i]);
  }
}

// "a (seed 1) = b (seed 1), ...": the runs measured as another row's identical placement.
std::string shared_measurements(const std::vector<Row>& rows) {
  std::string out;
  for (const Row& r : rows)
    for (std::size_t k = 0; k < r.measured_same_as.size(); ++k)
      if (!r.measured_same_as[k].empty())
        out += fmt::format("{}{} (seed {}) = {}", out.empty() ? "" : ", ", r.method, r.seeds[k],
                           r.measured_same_as[k]);
  return out;
}

// The measured winner and how well the simulated means rank and predict the measured medians.
struct MeasuredSummary {
  MeasuredWinner winner;
  double spearman = 0, mape = 0;
};

MeasuredSummary summarize_measured(const std::vector<Row>& rows) {
  std::vector<MedianInterval> intervals;
  std::vector<double> sim, meas;
  for (const Row& r : rows) {
    intervals.push_back(r.measured_pool);
    sim.push_back(r.mean);
    meas.push_back(r.measured_pool.median);
  }
  MeasuredSummary s{measured_winner(intervals,
                                    [&](std::size_t a, std::size_t b) {
                                      return rows[a].placement_ids == rows[b].placement_ids;
                                    }),
                    0, 0};
  if (rows.size() >= 2) s.spearman = spearman(sim, meas);
  s.mape = mape(sim, meas);
  return s;
}

}  // namespace

namespace {

// What every output of one comparison shares: the problem, the rows and how to print a makespan.
struct Compared {
  const Graph& g;
  const Problem& problem;
  const CompareOptions& o;
  std::vector<Row> rows;
  double best = 0;  // the lowest mean makespan
  double lb = 0;    // the lower bound
  bool seconds_unit = false;
  bool ref_scale = false;  // reference text graph: makespans shown / 1e10
  MeasuredSummary summary;

  std::string ms(double x) const {
    if (seconds_unit) return format_time(x, CostUnit::seconds);
    return ref_scale ? format_sig(x / 1e10) : format_sig(x);
  }
};

// A row's simulated mean and std over its runs, their mean seconds and largest call count.
void summarize_runs(Row& row) {
  std::vector<double> sims;
  for (const MethodRun& r : row.runs) {
    sims.push_back(r.makespan);
    row.seconds += r.seconds / static_cast<double>(row.runs.size());
    row.evaluations = std::max(row.evaluations, r.evaluations);
  }
  std::tie(row.mean, row.std) = mean_std(sims);
}

// Every method on every seed it needs, each within the budget.
std::vector<Row> run_rows(const Problem& problem, const std::vector<std::string>& methods,
                          const CompareOptions& o) {
  std::vector<Row> rows;
  int total_runs = 0;
  for (const auto& m : methods) total_runs += method_is_deterministic(m) ? 1 : o.seeds;
  Progress progress("compare", total_runs);
  int done = 0;
  for (const std::string& m : methods) {
    Row row;
    row.method = m;
    row.deterministic = method_is_deterministic(m);
    const int seeds = row.deterministic ? 1 : o.seeds;
    for (int s = o.first_seed; s < o.first_seed + seeds; ++s) {
      progress.update(done, m);
      row.seeds.push_back(s);
      row.runs.push_back(
          run_method(m, problem, search_options(s, o.budget, o.time_budget, o.threads, o.lanes)));
      ++done;
    }
    summarize_runs(row);
    rows.push_back(std::move(row));
  }
  progress.finish();
  return rows;
}

// The rows of --saved NAME=FILE: FILE's assignment (validated against the graph and P) as a run
// of row NAME, simulated once (no search: 0 calls, 0 seconds); rows in order of first mention.
std::vector<Row> saved_rows(const Graph& g, const Problem& problem, const CompareOptions& o) {
  std::vector<Row> rows;
  for (const std::string& spec : o.saved) {
    const std::size_t eq = spec.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == spec.size())
      throw InputError("--saved '" + spec + "': expected NAME=FILE");
    const std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    auto it =
        std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.method == name; });
    if (it == rows.end()) {
      it = rows.insert(rows.end(), Row{});
      it->method = name;
    }
    MethodRun run;
    run.method = name;
    run.assignment = parse_assignment_json(read_file(file), file, &g, o.devices);
    run.assignment.validate(g, o.devices, file);
    run.makespan = problem.simulator().simulate(run.assignment).makespan;
    run.seed = it->runs.size();
    it->seeds.push_back(static_cast<int>(it->runs.size()));
    it->runs.push_back(std::move(run));
  }
  for (Row& r : rows) {
    summarize_runs(r);
    r.deterministic = r.runs.size() == 1;
  }
  return rows;
}

// Per-method files: the Gantt chart and the assignment of each method's best seed (and, for a
// method run on several seeds, every seed's as <method>.seed-<s>.json).
void write_method_files(const Compared& c) {
  for (const Row& r : c.rows) {
    const MethodRun* best_run = &r.runs.front();
    for (const MethodRun& run : r.runs)
      if (run.makespan < best_run->makespan) best_run = &run;
    const std::string stem = file_safe(r.method);
    if (!c.o.gantt_dir.empty()) {
      const Schedule s = c.problem.simulator().simulate(best_run->assignment);
      write_file_atomic(
          std::filesystem::path(c.o.gantt_dir) / (stem + ".svg"),
          format_gantt_svg(c.g, s,
                           {fmt::format("{}: {} on {} devices ({})", c.g.meta().name, r.method,
                                        c.o.devices, c.problem.platform().name()),
                            1400, true}));
    }
    if (c.o.assignments_dir.empty()) continue;
    const std::filesystem::path dir(c.o.assignments_dir);
    write_file_atomic(dir / (stem + ".json"), format_assignment_json(best_run->assignment));
    for (std::size_t k = 0; r.runs.size() > 1 && k < r.runs.size(); ++k)
      write_file_atomic(dir / fmt::format("{}.seed-{}.json", stem, r.seeds[k]),
                        format_assignment_json(r.runs[k].assignment));
  }
}

// The anytime curve of a run as drawn: its reported improvements, and its final makespan at
// its end when that is lower (methods that report none appear as one point).
CurveSeries curve_series(const MethodRun& run, const std::string& label, double scale) {
  CurveSeries s{label, {}, run.seconds};
  for (const ProgressPoint& p : run.curve) s.curve.push_back({p.seconds, p.makespan * scale});
  if (s.curve.empty() || run.makespan * scale < s.curve.back().makespan)
    s.curve.push_back({run.seconds, run.makespan * scale});
  return s;
}

// --curves: one line per method (its first seed).
void write_curves(const Compared& c) {
  std::vector<CurveSeries> series;
  const double scale = c.ref_scale ? 1e-10 : 1.0;
  for (const Row& r : c.rows)
    series.push_back(curve_series(
        r.runs.front(),
        r.deterministic ? r.method : fmt::format("{} (seed {})", r.method, r.seeds.front()),
        scale));
  CurvesOptions opt;
  opt.title = fmt::format("{} on {} devices ({}): best makespan found against time",
                          c.g.meta().name, c.o.devices, c.problem.platform().name());
  opt.unit = c.seconds_unit ? "s" : (c.ref_scale ? "reference units / 1e10" : "reference units");
  opt.reference = c.problem.transfer_lower_bound() * scale;
  opt.reference_label = "lower bound with transfers";
  write_file_atomic(c.o.curves, format_curves_svg(series, opt));
}

// The printed table, one row per method.
Table text_table(const Compared& c) {
  Table table;
  table.add_column("method", true);
  table.add_column(c.seconds_unit ? "makespan" : (c.ref_scale ? "makespan/1e10" : "makespan"));
  for (const char* col : {"std", "vs best", "gap to LB", "time (ms)", "sims", "seeds"})
    table.add_column(col);
  if (c.o.measure)
    for (const char* col : {"measured", "95% interval", "runs", "meas. std"}) table.add_column(col);
  for (const Row& r : c.rows) {
    std::vector<std::string> cells = {
        r.method,
        c.ms(r.mean),
        r.std > 0 ? c.ms(r.std) : "0",
        fmt::format("{:.3f}", r.mean / c.best),
        fmt::format("{:.1f}%", c.lb > 0 ? 100 * (r.mean / c.lb - 1) : 0.0),
        fmt::format("{:.2f}", 1e3 * r.seconds),
        std::to_string(r.evaluations),
        std::to_string(r.runs.size())};
    if (c.o.measure) {
      const MedianInterval& ci = r.measured_pool;
      cells.push_back(format_time(ci.median, CostUnit::seconds));
      cells.push_back(format_time(ci.lo, CostUnit::seconds) + " .. " +
                      format_time(ci.hi, CostUnit::seconds));
      cells.push_back(std::to_string(ci.n));
      cells.push_back(r.measured_std > 0 ? format_time(r.measured_std, CostUnit::seconds) : "0");
    }
    table.add_row(std::move(cells));
  }
  return table;
}

// The CSV table (full precision), one row per method.
Table csv_table(const Compared& c) {
  Table csv;
  for (const char* col : {"method", "makespan_mean", "makespan_std", "ratio_to_best",
                          "gap_to_lower_bound", "seconds_mean", "evaluations", "seeds"})
    csv.add_column(col);
  if (c.o.measure)
    for (const char* col :
         {"measured_median_seconds", "measured_low_seconds", "measured_high_seconds",
          "measured_runs", "measured_mean_seconds", "measured_std_seconds"})
      csv.add_column(col);
  for (const Row& r : c.rows) {
    std::vector<std::string> cells = {r.method,
                                      fmt::format("{}", r.mean),
                                      fmt::format("{}", r.std),
                                      fmt::format("{}", r.mean / c.best),
                                      fmt::format("{}", c.lb > 0 ? r.mean / c.lb - 1 : 0.0),
                                      fmt::format("{}", r.seconds),
                                      std::to_string(r.evaluations),
                                      std::to_string(r.runs.size())};
    if (c.o.measure) {
      const MedianInterval& ci = r.measured_pool;
      for (double x : {ci.median, ci.lo, ci.hi}) cells.push_back(fmt::format("{}", x));
      cells.push_back(std::to_string(ci.n));
      cells.push_back(fmt::format("{}", r.measured_mean));
      cells.push_back(fmt::format("{}", r.measured_std));
    }
    csv.add_row(std::move(cells));
  }
  return csv;
}

// The JSON object of row `idx`.
ojson row_json(const Compared& c, std::size_t idx) {
  const Row& r = c.rows[idx];
  ojson makespans = ojson::array(), calls = ojson::array(), curves = ojson::array();
  ojson notes = ojson::array();
  for (const MethodRun& run : r.runs) {
    makespans.push_back(run.makespan);
    notes.push_back(run.note);
    calls.push_back(run.evaluations);
    ojson curve = ojson::array();  // [seconds, calls, best makespan] per improvement
    for (const ProgressPoint& p : run.curve) curve.push_back({p.seconds, p.calls, p.makespan});
    curves.push_back(std::move(curve));
  }
  ojson j = {{"method", r.method},
             {"makespans", makespans},
             {"calls", calls},
             {"curves", curves},
             {"notes", notes},
             {"mean", r.mean},
             {"std", r.std},
             {"ratio_to_best", r.mean / c.best},
             {"gap_to_lower_bound", c.lb > 0 ? r.mean / c.lb - 1 : 0.0},
             {"seconds_mean", r.seconds},
             {"evaluations", r.evaluations},
             {"seeds", r.seeds},
             {"deterministic", r.deterministic}};
  if (!c.o.measure) return j;
  const MedianInterval& ci = r.measured_pool;
  j["measured_seconds"] = r.measured;
  j["measured_mean"] = r.measured_mean;
  j["measured_std"] = r.measured_std;
  j["measured_median"] = ci.median;
  j["measured_interval"] = {
      {"low", ci.lo}, {"high", ci.hi}, {"coverage", ci.coverage}, {"runs", ci.n}};
  j["measured_same_placement_as"] = r.measured_same_as;
  const std::size_t best_row = c.summary.winner.fastest.fastest;
  j["measured_fastest"] = idx == best_row;
  j["same_placement_as_fastest"] =
      idx != best_row && r.placement_ids == c.rows[best_row].placement_ids;
  j["distinguishable_from_fastest"] =
      idx != best_row && distinguishable(ci, c.rows[best_row].measured_pool);
  return j;
}

// The "measured" object of --measure.
ojson measured_json(const Compared& c) {
  const CompareOptions& o = c.o;
  return {{"engine", o.backend == "cuda" ? "cuda" : "cpu"},
          {"repeat", o.measure_repeat},
          {"max_repeat", std::max(o.measure_repeat, o.measure_max_repeat)},
          {"target", o.measure_target},
          {"max_seconds", o.measure_seconds},
          {"statistic",
           "measured_median and measured_interval: median of every measured run of every seed, "
           "with its 95% order-statistic interval; measured_mean and measured_std: over the "
           "seeds' medians"},
          {"interleaved",
           "one round runs every distinct placement once; identical placements are run once and "
           "share their runs (measured_same_placement_as)"},
          {"fastest", c.rows[c.summary.winner.fastest.fastest].method},
          {"significant", c.summary.winner.fastest.significant()},
          {"spearman", c.summary.spearman},
          // MAPE compares times: only meaningful when the simulator is in seconds too.
          {"mape", c.seconds_unit ? ojson(c.summary.mape) : ojson(nullptr)}};
}

// The whole comparison as one JSON object.
ojson compare_json(const Compared& c) {
  ojson jrows = ojson::array();
  for (std::size_t i = 0; i < c.rows.size(); ++i) jrows.push_back(row_json(c, i));
  ojson j;
  j["graph"] = c.g.meta().name;
  j["ops"] = c.g.num_nodes();
  j["devices"] = c.o.devices;
  j["model"] = c.problem.platform().name();
  j["unit"] = c.seconds_unit ? "seconds" : "reference";
  j["lower_bound"] = c.lb;
  j["lower_bound_with_transfers"] = c.problem.transfer_lower_bound();
  j["seeds"] = c.o.seeds;
  j["first_seed"] = c.o.first_seed;
  j["budget_evaluations"] = c.o.budget;
  j["budget_seconds"] = c.o.time_budget;
  j["threads"] = resolve_threads(c.o.threads);
  j["methods"] = std::move(jrows);
  if (c.o.measure) j["measured"] = measured_json(c);
  return j;
}

// The table with its heading and, with --measure, the agreement and winner lines.
void print_compare(const Compared& c) {
  const CompareOptions& o = c.o;
  const std::string runs =
      o.methods == "none"
          ? std::string("saved placements only (--saved)")
          : fmt::format("mean over {} seed(s){} for randomised methods; search budget {}{}",
                        o.seeds, o.first_seed > 0 ? fmt::format(" from seed {}", o.first_seed) : "",
                        budget_text(o.budget, o.time_budget, o.threads),
                        o.saved.empty() ? "" : "; saved placements (--saved) as given");
  std::cout << fmt::format(
      "{} ({} ops) on {} devices, model {}; lower bound {} ({} with transfers){}; {}\n\n",
      c.g.meta().name, c.g.num_nodes(), o.devices, c.problem.platform().name(), c.ms(c.lb),
      c.ms(c.problem.transfer_lower_bound()), c.ref_scale ? " (reference units / 1e10)" : "", runs);
  const Table table = text_table(c);
  std::cout << (o.markdown ? table.to_markdown() : table.to_text());
  bool first_note = true;
  for (const Row& r : c.rows)  // status lines (optimal's proof, auto's choice), first seed
    if (!r.runs.front().note.empty()) {
      std::cout << fmt::format("{}{}: {}\n", first_note ? "\n" : "", r.method, r.runs.front().note);
      first_note = false;
    }
  if (!o.measure) return;
  std::cout << fmt::format(
      "\nsimulated means vs measured medians over these {} rows: Spearman {:.2f}, {}\n",
      c.rows.size(), c.summary.spearman,
      c.seconds_unit ? fmt::format("MAPE {:.1f}%", 100 * c.summary.mape)
                     : std::string("no MAPE (the reference model's units are not seconds: pass "
                                   "--hardware)"));
  std::vector<std::string> names;
  for (const Row& r : c.rows) names.push_back(r.method);
  std::cout << measured_winner_line(names, c.summary.winner);
  if (const std::string shared = shared_measurements(c.rows); !shared.empty())
    std::cout << "same placement, measured once: " << shared << "\n";
}

}  // namespace

void compare_graph(const Graph& g, const CompareOptions& o) {
  const Problem problem(g, platform_for(g, o.hardware, o.devices));
  warn_pricing(g, o.hardware, problem.platform());
  const std::vector<std::string> methods =
      o.methods == "none" ? std::vector<std::string>{} : expand_methods(o.methods, problem);
  for (const std::string& dir : {o.gantt_dir, o.assignments_dir})
    if (!dir.empty() && !std::filesystem::is_directory(dir))
      throw InputError(dir, 0, "not a directory");
  std::vector<Row> saved = saved_rows(g, problem, o);
  if (methods.empty() && saved.empty())
    throw InputError("nothing to compare: no method in --methods '" + o.methods +
                     "' and no --saved assignment");
  Compared c{g, problem, o, run_rows(problem, methods, o), 0, 0, false, false, {}};
  std::move(saved.begin(), saved.end(), std::back_inserter(c.rows));
  if (o.measure) measure_rows(g, o, c.rows);
  c.best = c.rows.front().mean;
  for (const Row& r : c.rows) c.best = std::min(c.best, r.mean);
  c.lb = problem.lower_bound();
  c.seconds_unit = problem.platform().unit() == CostUnit::seconds;
  c.ref_scale = !c.seconds_unit && g.meta().origin == "reference-text";
  if (o.measure) c.summary = summarize_measured(c.rows);
  write_method_files(c);
  if (!o.curves.empty()) write_curves(c);
  if (!o.csv.empty()) write_file_atomic(o.csv, csv_table(c).to_csv());
  const ojson j = compare_json(c);
  if (!o.json_file.empty()) write_file_atomic(o.json_file, j.dump(2) + "\n");
  if (o.json)
    print_json(j);
  else
    print_compare(c);
}

namespace {

void run_compare(const CompareOptions& o) {
  const Graph g = load_graph_logged(o.graph);
  CompareOptions resolved = o;
  resolved.devices = devices_for(g, o.devices);
  compare_graph(g, resolved);
}

}  // namespace

void add_compare(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Run several placement methods on one graph and compare their simulated makespans");
  cmd->add_option("graph", o->graph, "graph file (.txt or .json)")->required();
  add_graph_devices_option(*cmd, o->devices);
  cmd->add_option("--methods", o->methods,
                  "comma-separated method specs, all, or none (only the --saved rows)")
      ->capture_default_str();
  cmd->add_option("--saved", o->saved,
                  "NAME=FILE: a row NAME of the saved assignment FILE (doppler-assignment JSON, "
                  "e.g. from --assignments-dir or place -o), simulated (no search) and with "
                  "--measure run like the methods' placements: measure placements made elsewhere "
                  "(another machine, a learned method) on this machine's engine; repeat a NAME "
                  "for its seeds; repeatable")
      ->type_name("NAME=FILE")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--seeds", o->seeds,
                  "seeds per randomised method (deterministic methods run once)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--first-seed", o->first_seed,
                  "first seed of the randomised methods (seeds first .. first + seeds - 1), so "
                  "that runs split over processes give the seeds of one run")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  add_hardware_option(*cmd, o->hardware);
  add_threads_option(*cmd, o->threads, o->lanes, false);
  add_budget_options(*cmd, o->budget, o->time_budget, "each search or learned run",
                     kDefaultSearchCalls);
  cmd->add_option("--csv", o->csv, "also write the table as CSV to this file");
  cmd->add_option("--json-file", o->json_file, "also write the JSON result to this file");
  cmd->add_option("--gantt-dir", o->gantt_dir,
                  "write <method>.svg Gantt charts (best seed) into this directory");
  cmd->add_option("--curves", o->curves,
                  "write an SVG chart of each method's best makespan against seconds (first "
                  "seed; the anytime curves, most useful with --time-budget)");
  cmd->add_option("--assignments-dir", o->assignments_dir,
                  "write <method>.json assignments (best seed) into this directory, and "
                  "<method>.seed-<s>.json (every seed) for a method run on several seeds");
  cmd->add_flag("--json", o->json, "print one JSON object instead of the table");
  cmd->add_flag("--markdown", o->markdown, "print the table as Markdown");
  cmd->add_flag(
      "--measure", o->measure,
      "also run every assignment on the CPU engine and add measured columns: the median "
      "of all runs of all seeds with its 95% interval, the runs, the std of the seeds' "
      "medians; then Spearman and MAPE of the rows and the measured winner, named only "
      "when no other row's interval overlaps its own. The runs are interleaved (one round "
      "runs every placement once), and identical placements are run once and share "
      "their runs");
  cmd->add_option("--repeat", o->measure_repeat,
                  "measured runs per assignment for --measure (at least) and doppler-sys")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--max-repeat", o->measure_max_repeat,
                  "--measure: runs per assignment at most (never below --repeat); more runs are "
                  "made while the median's 95% interval is wider than +-target")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--target", o->measure_target,
                  "--measure: relative half-width of the median's 95% interval to reach (0: "
                  "always --repeat runs)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--max-seconds", o->measure_seconds,
                  "--measure: no further runs of an assignment once its runs took this long "
                  "(seconds; 0: no limit)")
      ->check(non_negative())
      ->capture_default_str();
  add_engine_options(*cmd, o->engine);
  cmd->add_option("--backend", o->backend,
                  "--measure on: local (threads) or cuda (GPU partitions or GPUs: "
                  "--gpu-partitions, --gpus; doppler-sys trains on the CPU engine)")
      ->check(CLI::IsMember({"local", "cuda"}))
      ->capture_default_str();
  cmd->footer(methods_help());
  cmd->callback([o, cmd] {
    if (o->time_budget > 0 && cmd->count("--budget") == 0) o->budget = 0;  // seconds alone
    run_compare(*o);
  });
}

}  // namespace doppler::cli
