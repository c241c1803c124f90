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
};

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
  const std::string json = calibration_profile_json(cal, "cpu-engine", co.topology);
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

void run_demo(const DemoOptions& o) {
  if (!o.json_file.empty()) {  // fail before minutes of work
    const auto dir = std::filesystem::absolute(o.json_file).parent_path();
    if (!std::filesystem::is_directory(dir))
      throw InputError(o.json_file, 0, "directory " + dir.string() + " does not exist");
  }
  const workloads::WorkloadSpec spec = workloads::demo_workload_spec(o.devices);
  const Graph g = workloads::generate_workload(spec);
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

  // Calibrate the engine so that the simulator predicts it.
  CalibrationOptions co;
  co.devices = o.devices;
  const Calibration cal = calibrate(co);
  const std::string profile_json = calibration_profile_json(cal, "cpu-engine", co.topology);
  write_file_atomic(std::filesystem::path(o.out) / "hw.json", profile_json);
  const Problem problem(
      g, Platform::hardware(parse_hardware_profile(profile_json, "calibration"), o.devices));
  std::cout << fmt::format(
      "2. calibrate  {:.3g} GFLOP/s per device, {:.3g} us per op, copies {:.3g} GB/s -> "
      "{}/hw.json\n",
      cal.peak_flops / 1e9, cal.launch_overhead * 1e6, cal.bandwidth / 1e9, o.out);
  std::cout << fmt::format("   lower bound on {} devices: {}\n", o.devices,
                           format_time(problem.lower_bound(), CostUnit::seconds));

  std::vector<DemoRow> rows;
  for (const std::string& m : all_methods(problem)) {
    const MethodRun r = run_method(m, problem, {o.seed, {2000, 0}});
    rows.push_back({m,
                    r.evaluations > 0 ? fmt::format("{} simulations", r.evaluations) : "-",
                    r.assignment,
                    r.makespan,
                    r.seconds,
                    {},
                    {},
                    0});
  }
  std::cout << fmt::format("3. heuristics {} methods placed on the simulator\n", rows.size());
  if (std::filesystem::exists(default_policy_path())) {  // the shipped model, never trained here
    const MethodRun r = run_method("doppler:samples=64", problem, {o.seed, {2000, 0}});
    rows.push_back({"doppler-pretrained",
                    "zero-shot: shipped model, best of 64 rollouts",
                    r.assignment,
                    r.makespan,
                    r.seconds,
                    {},
                    {},
                    0});
    std::cout << fmt::format("   doppler-pretrained placed zero-shot in {:.2f} s\n", r.seconds);
  }

  // Doppler: Stage I, then II on the simulator, then a short Stage III on the engine.
  Engine engine(g, [&] {
    EngineOptions eo;
    eo.devices = o.devices;
    return eo;
  }());
  for (const auto& w : engine.warnings()) spdlog::warn("{}", w);
  TrainConfig cfg;
  cfg.checkpoint_every = 0;
  cfg.seed = o.seed;
  DopplerTrainer trainer(problem, cfg);
  const CostFunction measured = engine_cost(engine, 3);
  // One stage at a time through the shared pipeline, to report each stage's placement.
  const auto stage = [&](const char* name, int il, int sim, int real, const std::string& what) {
    PipelineSpec spec;
    spec.base = cfg;
    spec.il = il;
    spec.sim = sim;
    spec.real = real;
    const auto t0 = std::chrono::steady_clock::now();
    const TrainResult r = run_pipeline(trainer, spec, measured);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rows.push_back({name, what, r.best, problem.simulator().makespan(r.best), secs, {}, {}, 0});
    std::cout << fmt::format("   {:<12} {} rollouts in {:.1f} s\n", name, r.episodes, secs);
  };
  std::cout << "4. Doppler\n";
  stage("doppler-il", o.il, 0, 0, fmt::format("Stage I: {} rollouts", o.il));
  stage("doppler-sim", 0, o.sim, 0, fmt::format("+ Stage II: {} rollouts", o.sim));
  stage("doppler-sys", 0, 0, o.real, fmt::format("+ Stage III: {} engine rollouts", o.real));
  guard_stage3(engine, rows[rows.size() - 2], rows.back(), std::max(o.repeat, o.max_repeat));

  resimulate_before_measuring(g, co, o, rows);
  measure_demo_rows(engine, o, rows);
  std::vector<MedianInterval> intervals;
  for (const DemoRow& r : rows) intervals.push_back(r.measured.interval);
  const auto group = [&](std::size_t i) {  // the first row with row i's placement
    return rows[i].same_as.empty() ? rows[i].method : rows[i].same_as;
  };
  const MeasuredWinner mw = measured_winner(
      intervals, [&](std::size_t a, std::size_t b) { return group(a) == group(b); });
  const std::size_t winner = mw.fastest.fastest;
  const double best = rows[winner].measured.median;
  Table t;
  t.add_column("method", true);
  t.add_column("trained with", true);
  t.add_column("simulated");
  t.add_column("measured (median)");
  t.add_column("95% interval");
  t.add_column("runs");
  t.add_column("vs fastest");
  std::vector<double> sim, meas;
  for (const DemoRow& r : rows) {
    const MedianInterval& ci = r.measured.interval;
    t.add_row(
        {r.method, r.trained, format_time(r.simulated, CostUnit::seconds),
         format_time(ci.median, CostUnit::seconds),
         format_time(ci.lo, CostUnit::seconds) + " .. " + format_time(ci.hi, CostUnit::seconds),
         std::to_string(ci.n), fmt::format("{:.3f}", ci.median / best)});
    sim.push_back(r.simulated);
    meas.push_back(ci.median);
  }
  std::cout << "\n" << t.to_text();
  std::string shared;
  for (const DemoRow& r : rows)
    if (!r.same_as.empty())
      shared += fmt::format("{}{} = {}", shared.empty() ? "" : ", ", r.method, r.same_as);
  if (!shared.empty())
    std::cout << "same placement, measured once (runs interleaved with all others): " << shared
              << "\n";
  std::cout << fmt::format(
      "\nsimulated vs measured medians over these {} rows: Spearman {:.2f}, MAPE {:.1f}%\n",
      rows.size(), spearman(sim, meas), 100 * mape(sim, meas));
  std::vector<std::string> names;
  for (const DemoRow& r : rows) names.push_back(r.method);
  std::cout << measured_winner_line(names, mw);
  // The simulator's first choice against the measured winner's interval.
  std::size_t sim_first = 0;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].simulated < rows[sim_first].simulated) sim_first = i;
  const MedianInterval& wi = rows[winner].measured.interval;
  const double sf = rows[sim_first].measured.median;
  const bool sim_first_ok = sf >= wi.lo && sf <= wi.hi;
  std::cout << fmt::format(
      "the simulator ranks {} first: measured {}, {} the fastest's 95% interval\n",
      rows[sim_first].method, format_time(sf, CostUnit::seconds),
      sim_first_ok ? "within" : "outside");
  if (!o.json_file.empty())
    write_demo_json(o.json_file, rows, spearman(sim, meas), mape(sim, meas), mw, sim_first);
  const EngineResult run = engine.run(rows[winner].assignment);
  const auto svg = std::filesystem::path(o.out) / "winner.svg";
  write_file_atomic(
      svg, format_gantt_svg(g, run.schedule,
                            {fmt::format("{}: {} on {} devices (measured on the CPU engine)",
                                         g.meta().name, rows[winner].method, o.devices),
                             1400, true}));
  std::cout << fmt::format("Gantt chart of {}'s engine run: {}\n", rows[winner].method,
                           svg.string());
}

}  // namespace

void add_demo(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo",
                                 "The full pipeline on the default workload (a Llama layer) at a "
                                 "CPU-friendly size: calibrate the engine, place "
                                 "with every heuristic, train Doppler (Stage I, II and a short "
                                 "Stage III on the engine), calibrate again, then measure every "
                                 "placement on the engine beside its simulation with the "
                                 "second profile and draw the winner's Gantt chart");
  add_devices_option(*cmd, o->devices, false)->capture_default_str();
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
