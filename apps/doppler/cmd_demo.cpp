// doppler demo: the full pipeline on the default workload at a CPU-friendly size (what
// `make demo` runs): calibrate the engine, compare the heuristics, train Doppler (Stage I, II and
// a short Stage III on the engine), and measure every placement on the engine.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"
#include "engine_options.hpp"
#include "learned_commands.hpp"
#include "measured_winner.hpp"
#include "methods.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/measure_interleaved.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/hardware/profile.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/doppler_policy.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/train/pipeline.hpp"
#include "doppler/train/stage3_guard.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/median_interval.hpp"
#include "doppler/util/progress.hpp"
#include "doppler/util/stopwatch.hpp"
#include "doppler/validate/calibrate.hpp"
#include "doppler/validate/sim_to_real.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler::cli {

namespace {

struct DemoOptions {
  int devices = 2;
  int il = 200, sim = 1000, real = 32, repeat = 9, max_repeat = 41;
  double target = 0.01;
  std::string out = "build/demo", json_file;
  std::uint64_t seed = 0;
  std::string backend = "auto";  // auto: cuda when a GPU is usable, else cpu
};

// The demo's engine (o.backend resolved) with the engine flags' defaults: the CPU's threads, or
// P partitions of GPU 0 (the whole GPU for P = 1), by the rule of engine_options().
EngineOptions demo_engine(const DemoOptions& o) {
  return engine_options(EngineCliOptions{}, o.devices,
                        o.backend == "cuda" ? Backend::cuda : Backend::cpu);
}

// "cpu-engine" or "cuda-engine": the calibrated profile's name.
std::string engine_name(const EngineOptions& eo) {
  return std::string(backend_name(eo.backend)) + "-engine";
}

struct DemoRow {
  std::string method, trained;
  Assignment assignment;
  double simulated = 0, seconds = 0;  // simulated: with the profile taken before measuring
  Measurement measured;
  std::string same_as;   // an earlier row with the same placement (measured once), or empty
  double placed_at = 0;  // simulated with the first profile, the one every method placed with
};

// Stage III's safeguard on the demo's rows: doppler-sys keeps its placement only when an
// interleaved re-measurement against doppler-sim's finds it significantly faster.
void guard_stage3(Engine& engine, const DemoRow& sim_row, DemoRow& sys_row, int repeat) {
  const Stage3Check c = check_stage3(engine, sim_row.assignment, sys_row.assignment, repeat);
  std::cout << fmt::format("   Stage III check: {} (Stage III) vs {} (Stage II), {} runs each{}\n",
                           format_time(c.stage3.median, CostUnit::seconds),
                           format_time(c.stage2.median, CostUnit::seconds), repeat,
                           c.keep_stage3 ? ": significantly faster, Stage III's placement kept"
                                         : ": not significantly faster, Stage II's placement kept");
  if (c.keep_stage3) return;
  sys_row.assignment = sim_row.assignment;
  sys_row.simulated = sim_row.simulated;
  sys_row.trained += " (kept Stage II's placement)";
}

// Calibrates again right before the rows are measured and simulates every row with that profile
// (written as hw-measure.json): this machine's speed drifts up to 1.4x over minutes, and the
// first profile is ~20 s of training old by then (a demo whose calibration caught a fast spell
// simulated every row ~25% slower than measured, one in a slow spell 37% faster). The placements
// stay those made with the first profile; each row keeps that simulation in `placed_at`.
void resimulate_before_measuring(const Graph& g, const CalibrationOptions& co, const DemoOptions& o,
                                 std::vector<DemoRow>& rows) {
  const Calibration cal = calibrate(co);
  const std::string json = calibration_profile_json(cal, engine_name(demo_engine(o)), co.topology);
  write_file_atomic(std::filesystem::path(o.out) / "hw-measure.json", json);
  const Problem now(g, Platform::hardware(parse_hardware_profile(json, "calibration"), o.devices));
  double first = 0, again = 0;
  for (DemoRow& r : rows) {
    r.placed_at = r.simulated;
    r.simulated = now.simulator().makespan(r.assignment);
    first += r.placed_at;
    again += r.simulated;
  }
  std::cout << fmt::format(
      "5. calibrate  again before measuring: {:.3g} GFLOP/s per device, copies {:.3g} GB/s -> "
      "{}/hw-measure.json; the rows simulate {:+.1f}% against the first profile (the column "
      "'simulated' uses this one)\n",
      cal.peak_flops / 1e9, cal.bandwidth / 1e9, o.out, 100 * (again / first - 1));
}

// Measures every placement on the engine, interleaved, until each median's interval is tight
// enough; rows with the same placement share one measurement and say so.
void measure_demo_rows(Engine& engine, const DemoOptions& o, std::vector<DemoRow>& rows) {
  std::vector<Assignment> as;
  for (const DemoRow& r : rows) as.push_back(r.assignment);
  const RepeatPolicy policy{o.repeat, std::max(o.repeat, o.max_repeat), o.target, 2.0};
  std::int64_t runs = 0;
  Progress mp("6. measure", -1);
  const InterleavedMeasurements m = measure_interleaved(
      [&](const Assignment& a) {
        mp.update(++runs, "engine runs");
        return engine.run(a);
      },
      as, policy, 1);
  mp.finish();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].measured = m.measured[i];
    if (m.first[i] != i) rows[i].same_as = rows[m.first[i]].method;
  }
}

void write_demo_json(const std::string& file, const std::vector<DemoRow>& rows, double rho,
                     double mape_rows, const MeasuredWinner& mw, std::size_t sim_first) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json rs = nlohmann::ordered_json::array();
  for (const DemoRow& r : rows)
    rs.push_back(
        {{"method", r.method},
         {"trained", r.trained},
         {"simulated", r.simulated},
         {"simulated_with_first_profile", r.placed_at},
         {"measured", r.measured.interval.median},
         {"interval", {r.measured.interval.lo, r.measured.interval.hi}},
         {"runs", r.measured.interval.n},
         {"same_placement_as",
          r.same_as.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.same_as)},
         {"seconds", r.seconds},
         {"assignment", nlohmann::ordered_json::parse(format_assignment_json_line(r.assignment))}});
  j["rows"] = std::move(rs);
  j["spearman"] = rho;
  j["mape"] = mape_rows;
  j["winner"] = rows[mw.fastest.fastest].method;
  nlohmann::ordered_json tj = nlohmann::ordered_json::array();
  for (std::size_t t : mw.fastest.ties) tj.push_back(rows[t].method);
  j["not_distinguishable_from_winner"] = std::move(tj);
  nlohmann::ordered_json sj = nlohmann::ordered_json::array();
  for (std::size_t t : mw.same_placement) sj.push_back(rows[t].method);
  j["same_placement_as_winner"] = std::move(sj);
  j["simulator_first"] = rows[sim_first].method;
  write_file_atomic(file, j.dump(2) + "\n");
}

// Fails before minutes of work when the --json-file's directory does not exist.
void check_json_file(const DemoOptions& o) {
  if (o.json_file.empty()) return;
  const auto dir = std::filesystem::absolute(o.json_file).parent_path();
  if (!std::filesystem::is_directory(dir))
    throw InputError(o.json_file, 0, "directory " + dir.string() + " does not exist");
}

// Step 1: the demo workload blocked for o.devices devices, written as workload.json.
Graph demo_workload(const DemoOptions& o) {
  const workloads::WorkloadSpec spec = workloads::demo_workload_spec(o.devices);
  Graph g = workloads::generate_workload(spec);
  std::filesystem::create_directories(o.out);
  write_file_atomic(std::filesystem::path(o.out) / "workload.json", format_graph_json(g));
  int inputs = 0;
  for (const Node& n : g.nodes()) inputs += n.kind == OpKind::input;
  const auto& p = spec.params;
  std::cout << fmt::format(
      "1. workload   {} (seq {}, dim {}, {} heads, ffn {}, vocab {}, {}) blocked for {} devices: "
      "{} ops + {} input blocks\n",
      g.meta().name, p.at("seq"), p.at("dim"), p.at("heads"), p.at("ffn"), p.at("vocab"),
      spec.dtype, o.devices, g.num_nodes() - inputs, inputs);
  return g;
}

// Step 2: calibrates the engine so that the simulator predicts it; the profile, written as
// hw.json.
HardwareProfile calibrate_engine(const CalibrationOptions& co, const DemoOptions& o) {
  const Calibration cal = calibrate(co);
  const std::string profile_json =
      calibration_profile_json(cal, engine_name(demo_engine(o)), co.topology);
  write_file_atomic(std::filesystem::path(o.out) / "hw.json", profile_json);
  std::cout << fmt::format(
      "2. calibrate  {:.3g} GFLOP/s per device, {:.3g} us per op, copies {:.3g} GB/s -> "
      "{}/hw.json\n",
      cal.peak_flops / 1e9, cal.launch_overhead * 1e6, cal.bandwidth / 1e9, o.out);
  return parse_hardware_profile(profile_json, "calibration");
}

// A row of a placement made on the simulator.
DemoRow placed_row(const std::string& method, const std::string& trained, const MethodRun& r) {
  return {method, trained, r.assignment, r.makespan, r.seconds, {}, {}, 0};
}

// Step 3: every heuristic, and the shipped pretrained model zero-shot when present (never
// trained here).
void place_heuristics(const Problem& problem, const DemoOptions& o, std::vector<DemoRow>& rows) {
  for (const std::string& m : all_methods(problem)) {
    const MethodRun r = run_method(m, problem, {o.seed, {2000, 0}});
    rows.push_back(
        placed_row(m, r.evaluations > 0 ? fmt::format("{} simulations", r.evaluations) : "-", r));
  }
  std::cout << fmt::format("3. heuristics {} methods placed on the simulator\n", rows.size());
  if (!std::filesystem::exists(default_policy_path())) return;
  const MethodRun r = run_method("doppler:samples=64", problem, {o.seed, {2000, 0}});
  rows.push_back(
      placed_row("doppler-pretrained", "zero-shot: shipped model, best of 64 rollouts", r));
  std::cout << fmt::format("   doppler-pretrained placed zero-shot in {:.2f} s\n", r.seconds);
}

// Step 4: Doppler, one stage at a time through the shared pipeline to report each stage's
// placement: Stage I, then II on the simulator, then a short Stage III on the engine (kept
// only when significantly faster than Stage II's placement).
void train_doppler(Engine& engine, const Problem& problem, const DemoOptions& o,
                   std::vector<DemoRow>& rows) {
  TrainConfig cfg;
  cfg.checkpoint_every = 0;
  cfg.seed = o.seed;
  DopplerTrainer trainer(problem, cfg);
  const CostFunction measured = engine_cost(engine, 3);
  const auto stage = [&](const char* name, int il, int sim, int real, const std::string& what) {
    PipelineSpec spec;
    spec.base = cfg;
    spec.il = il;
    spec.sim = sim;
    spec.real = real;
    const Stopwatch clock;
    const TrainResult r = run_pipeline(trainer, spec, measured);
    const double secs = clock.seconds();
    rows.push_back({name, what, r.best, problem.simulator().makespan(r.best), secs, {}, {}, 0});
    std::cout << fmt::format("   {:<12} {} rollouts in {:.1f} s\n", name, r.episodes, secs);
  };
  std::cout << "4. Doppler\n";
  stage("doppler-il", o.il, 0, 0, fmt::format("Stage I: {} rollouts", o.il));
  stage("doppler-sim", 0, o.sim, 0, fmt::format("+ Stage II: {} rollouts", o.sim));
  stage("doppler-sys", 0, 0, o.real, fmt::format("+ Stage III: {} engine rollouts", o.real));
  guard_stage3(engine, rows[rows.size() - 2], rows.back(), std::max(o.repeat, o.max_repeat));
}

// The measured winner among the rows; rows with the same placement are one group.
MeasuredWinner demo_winner(const std::vector<DemoRow>& rows) {
  std::vector<MedianInterval> intervals;
  for (const DemoRow& r : rows) intervals.push_back(r.measured.interval);
  const auto group = [&](std::size_t i) {  // the first row with row i's placement
    return rows[i].same_as.empty() ? rows[i].method : rows[i].same_as;
  };
  return measured_winner(intervals,
                         [&](std::size_t a, std::size_t b) { return group(a) == group(b); });
}

// The table of every row: simulated, measured median, its interval, runs, and the median over
// the fastest's (`best`).
void print_demo_table(const std::vector<DemoRow>& rows, double best) {
  Table t;
  t.add_column("method", true);
  t.add_column("trained with", true);
  t.add_column("simulated");
  t.add_column("measured (median)");
  t.add_column("95% interval");
  t.add_column("runs");
  t.add_column("vs fastest");
  for (const DemoRow& r : rows) {
    const MedianInterval& ci = r.measured.interval;
    t.add_row(
        {r.method, r.trained, format_time(r.simulated, CostUnit::seconds),
         format_time(ci.median, CostUnit::seconds),
         format_time(ci.lo, CostUnit::seconds) + " .. " + format_time(ci.hi, CostUnit::seconds),
         std::to_string(ci.n), fmt::format("{:.3f}", ci.median / best)});
  }
  std::cout << "\n" << t.to_text();
  std::string shared;
  for (const DemoRow& r : rows)
    if (!r.same_as.empty())
      shared += fmt::format("{}{} = {}", shared.empty() ? "" : ", ", r.method, r.same_as);
  if (!shared.empty())
    std::cout << "same placement, measured once (runs interleaved with all others): " << shared
              << "\n";
}

// The row the simulator ranks first (the lowest simulated makespan; the first of equals).
std::size_t simulator_first(const std::vector<DemoRow>& rows) {
  std::size_t first = 0;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].simulated < rows[first].simulated) first = i;
  return first;
}

// The table, the simulator's agreement with the measurements, the measured winner and the
// simulator's first choice against the winner's interval; also the JSON file when asked.
void report_demo(const std::vector<DemoRow>& rows, const MeasuredWinner& mw, const DemoOptions& o) {
  const std::size_t winner = mw.fastest.fastest;
  print_demo_table(rows, rows[winner].measured.median);
  std::vector<double> sim, meas;
  std::vector<std::string> names;
  for (const DemoRow& r : rows) {
    sim.push_back(r.simulated);
    meas.push_back(r.measured.interval.median);
    names.push_back(r.method);
  }
  std::cout << fmt::format(
      "\nsimulated vs measured medians over these {} rows: Spearman {:.2f}, MAPE {:.1f}%\n",
      rows.size(), spearman(sim, meas), 100 * mape(sim, meas));
  std::cout << measured_winner_line(names, mw);
  const std::size_t sim_first = simulator_first(rows);
  const MedianInterval& wi = rows[winner].measured.interval;
  const double sf = rows[sim_first].measured.median;
  std::cout << fmt::format(
      "the simulator ranks {} first: measured {}, {} the fastest's 95% interval\n",
      rows[sim_first].method, format_time(sf, CostUnit::seconds),
      sf >= wi.lo && sf <= wi.hi ? "within" : "outside");
  if (!o.json_file.empty())
    write_demo_json(o.json_file, rows, spearman(sim, meas), mape(sim, meas), mw, sim_first);
}

// The winner's engine run as a Gantt chart, winner.svg.
void draw_winner(Engine& engine, const Graph& g, const DemoRow& winner, const DemoOptions& o) {
  const EngineResult run = engine.run(winner.assignment);
  const auto svg = std::filesystem::path(o.out) / "winner.svg";
  const std::string title =
      fmt::format("{}: {} on {} devices (measured on the {} engine)", g.meta().name, winner.method,
                  o.devices, backend_name(demo_engine(o).backend));
  write_file_atomic(svg, format_gantt_svg(g, run.schedule, {title, 1400, true}));
  std::cout << fmt::format("Gantt chart of {}'s engine run: {}\n", winner.method, svg.string());
}

void run_demo(const DemoOptions& asked) {
  DemoOptions o = asked;  // "auto" resolved once: whether a GPU is usable does not change
  if (o.backend == "auto") o.backend = cuda_usable() ? "cuda" : "cpu";
  check_json_file(o);
  const Graph g = demo_workload(o);
  const EngineOptions eo = demo_engine(o);
  std::cout << fmt::format("   engine      {}\n", eo.backend == Backend::cuda
                                                      ? "cuda (SM partitions of GPU 0)"
                                                      : "cpu (one thread per device)");
  CalibrationOptions co;
  co.devices = o.devices;
  co.kernels = graph_kernels(g);  // the workload's kernels and the GEMMs: a third of the time
  if (eo.backend == Backend::cuda) co.engines = engine_factory(eo);
  const Problem problem(g, Platform::hardware(calibrate_engine(co, o), o.devices));
  std::cout << fmt::format("   lower bound on {} devices: {}\n", o.devices,
                           format_time(problem.lower_bound(), CostUnit::seconds));
  std::vector<DemoRow> rows;
  place_heuristics(problem, o, rows);
  Engine engine(g, eo);
  for (const auto& w : engine.warnings()) spdlog::warn("{}", w);
  train_doppler(engine, problem, o, rows);
  resimulate_before_measuring(g, co, o, rows);
  measure_demo_rows(engine, o, rows);
  const MeasuredWinner mw = demo_winner(rows);
  report_demo(rows, mw, o);
  draw_winner(engine, g, rows[mw.fastest.fastest], o);
}

}  // namespace

void learned::add_demo(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo", learned::kDemoSummary);
  add_devices_option(*cmd, o->devices, false)->capture_default_str();
  cmd->add_option("--backend", o->backend,
                  "engine: cpu (threads), cuda (SM partitions of GPU 0) or auto (cuda when a GPU "
                  "is usable)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--il", o->il, "Stage I episodes")->capture_default_str();
  cmd->add_option("--sim", o->sim, "Stage II episodes")->capture_default_str();
  cmd->add_option("--real", o->real, "Stage III episodes (on the engine)")->capture_default_str();
  cmd->add_option("--repeat", o->repeat,
                  "measured runs per placement at least (their median and its 95% interval)")
      ->capture_default_str();
  cmd->add_option("--max-repeat", o->max_repeat,
                  "measured runs per placement at most: more runs are made until the 95% interval "
                  "is within +-target of the median (or 2 s of runs); also the runs per "
                  "placement of the Stage III check (Stage III's placement is kept only when "
                  "significantly faster)")
      ->capture_default_str();
  cmd->add_option("--target", o->target, "relative half-width of the 95% interval to reach")
      ->capture_default_str();
  cmd->add_option("--out", o->out,
                  "directory for workload.json (the graph), hw.json (the first profile), "
                  "hw-measure.json (the one taken before measuring) and winner.svg")
      ->capture_default_str();
  cmd->add_option("-s,--seed", o->seed, "seed of training and of every randomised method")
      ->capture_default_str();
  cmd->add_option("--json-file", o->json_file,
                  "also write the table as JSON: rows (simulated with both profiles and measured "
                  "seconds, 95% interval, runs, the placement as a doppler-assignment object), "
                  "Spearman, MAPE, the measured winner and its ties, the simulator's first "
                  "choice");
  cmd->callback([o] { run_demo(*o); });
}

}  // namespace doppler::cli
