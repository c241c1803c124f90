// doppler calibrate --devices P -o hw.json: measures this machine's engine and writes a hardware
// profile for the simulator.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "common.hpp"
#include "engine_options.hpp"

#include "doppler/engine/mpi_backend.hpp"
#include "doppler/engine/mpi_world.hpp"
#include "doppler/engine/runner.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/progress.hpp"
#include "doppler/validate/calibrate.hpp"

namespace doppler::cli {

namespace {

struct CalibrateOptions {
  std::string output, name = "cpu-engine", topology = "switch", graph, backend = "local";
  std::vector<std::string> kernels;  // --kernels
  std::string kernels_of;            // --kernels-of: a graph whose kernels are calibrated
  int devices = 1, repeat = 5;
  EngineCliOptions engine;  // links, pinning and copies (EngineFlags::links)
  bool json = false;
};

void run_calibrate(const CalibrateOptions& o) {
  const auto dir = std::filesystem::absolute(o.output).parent_path();
  if (!std::filesystem::is_directory(dir))  // fail before seconds of benchmarks
    throw InputError(o.output, 0, "directory " + dir.string() + " does not exist");
  CalibrationOptions co;
  co.devices = o.devices;
  co.repeat = o.repeat;
  co.topology = o.topology;
  const Backend backend = o.backend == "cuda" ? Backend::cuda : Backend::cpu;
  const EngineOptions eo = engine_options(o.engine, o.devices, backend);
  co.pin_threads = eo.pin_threads;
  co.copies = eo.copies;
  co.link = eo.link;
  co.kernels = o.kernels;
  if (!o.kernels_of.empty()) {
    co.kernels = graph_kernels(load_graph_logged(o.kernels_of));
    if (co.kernels.empty())
      throw InputError(o.kernels_of, 0, "graph has no engine ops (exec descriptions) to calibrate");
  }
  Graph g;
  if (!o.graph.empty()) {
    g = load_graph_logged(o.graph);
    co.graph = &g;
  }
  // MPI: every rank runs the same benchmarks (each engine is collective); rank 0 writes.
  std::unique_ptr<MpiWorld> world;
  if (backend == Backend::cuda) {
    co.engines = engine_factory(eo);  // every benchmark on the GPU
    co.element_bytes = gpu_storage_bytes(eo.gpu.storage);
  }
  if (o.backend == "mpi") {
    world = std::make_unique<MpiWorld>();
    co.engines = MpiEngine::factory();
    co.receiver_copies = true;  // a rank's worker takes delivery of blocks between its ops
  }
  const bool reporter = !world || world->rank() == 0;
  Calibration c;
  {
    Progress progress("calibrate", 0);
    c = calibrate(co, [&](int step, int steps, const std::string& what) {
      if (reporter) progress.update(step, fmt::format("of {}: {}", steps, what));
    });
  }
  if (!reporter) return;
  write_file_atomic(o.output, calibration_profile_json(c, o.name, o.topology));
  if (o.json) {
    ojson j;
    j["output"] = o.output;
    j["devices"] = c.devices;
    j["cores"] = c.cores;
    j["link_emulation"] = c.link;
    j["peak_flops"] = c.peak_flops;
    j["launch_overhead"] = c.launch_overhead;
    j["engine_overhead"] = c.engine_overhead;
    j["bandwidth"] = c.bandwidth;
    j["latency"] = c.latency;
    j["delay"] = c.delay;
    j["burst_span"] = c.burst_span;
    j["copy_share"] = c.copy_share;
    j["copy_share_measured"] = c.copy_share_measured;
    j["copy_share_basis"] = c.share_basis;
    j["fit"] = c.fit;
    j["benchmarked_kernels"] = c.benchmarked.empty() ? ojson("all") : ojson(c.benchmarked);
    ojson ks = ojson::array();
    for (const KernelSample& k : c.kernels)
      if (k.kind != "graph op") {
        ks.push_back({{"kind", k.kind},
                      {"what", k.what},
                      {"seconds", k.seconds},
                      {"gflops", k.flops / k.seconds / 1e9}});
        if (!k.pass_seconds.empty()) ks.back()["pass_seconds"] = k.pass_seconds;
      }
    j["kernels"] = std::move(ks);
    ojson kc = ojson::object();
    for (const auto& [kernel, f] : c.kernel_costs)
      kc[kernel] = {{"seconds_per_op", f.cost.seconds_per_op},
                    {"seconds_per_flop", f.cost.seconds_per_flop},
                    {"seconds_per_byte", f.cost.seconds_per_byte},
                    {"seconds_per_input_byte", f.cost.seconds_per_input_byte},
                    {"samples", f.samples},
                    {"source", f.source}};
    j["kernel_costs"] = std::move(kc);
    j["device_slowdown"] = c.device_slowdown;
    j["device_slowdown_rounds"] = c.device_slowdown_rounds;
    j["device_gemm_seconds_rounds"] = c.device_gemm_seconds_rounds;
    j["device_gemm_alone_rounds"] = c.device_gemm_alone_rounds;
    j["contention"] = c.contention;
    j["contention_rounds"] = c.contention_rounds;
    print_json(j);
    return;
  }
  const auto t = [](double x) { return format_time(x, CostUnit::seconds); };
  std::cout << fmt::format("{:<18}{} devices on {} cores, link emulation {}\n", "engine", c.devices,
                           c.cores, c.link);
  Table tab;
  tab.add_column("kind", true);
  tab.add_column("kernel", true);
  tab.add_column("time per op");
  tab.add_column("GFLOP/s");
  tab.add_column("GB/s");
  for (const KernelSample& k : c.kernels)
    if (k.kind != "graph op")
      tab.add_row({k.kind, k.what, t(k.seconds), fmt::format("{:.2f}", k.flops / k.seconds / 1e9),
                   fmt::format("{:.2f}", k.bytes / k.seconds / 1e9)});
  std::cout << tab.to_text();
  Table ct;
  ct.add_column("copy bytes");
  ct.add_column("time");
  ct.add_column("GB/s");
  for (const CopySample& s : c.copies)
    ct.add_row(
        {format_sig(s.bytes), t(s.seconds), fmt::format("{:.2f}", s.bytes / s.seconds / 1e9)});
  std::cout << ct.to_text();
  std::cout << fmt::format("{:<18}{}\n", "engine overhead", t(c.engine_overhead) + " per op");
  std::cout << fmt::format("{:<18}peak {:.3g} FLOP/s, launch overhead {}\n", "device model",
                           c.peak_flops, t(c.launch_overhead));
  const auto list = [](const std::vector<double>& v) {
    return fmt::format("{:.2f}", fmt::join(v, " "));
  };
  std::vector<std::string> rounds;
  for (const std::vector<double>& r : c.device_slowdown_rounds) rounds.push_back(list(r));
  std::cout << fmt::format(
      "{:<18}{} (time for the same work over the fastest device's; a device is slower only "
      "where all {} rounds read it more than {:.0f}% slower, then by its median reading: {})\n",
      "device slowdown", list(c.device_slowdown), rounds.size(), 100 * kDeviceSlowdownNoise,
      fmt::join(rounds, " | "));
  std::vector<std::string> levels;
  for (const std::vector<double>& r : c.device_gemm_seconds_rounds)
    levels.push_back(t(*std::min_element(r.begin(), r.end())));
  std::cout << fmt::format(
      "{:<18}{} (the fastest device's 256^3 GEMM, every device busy, in each round: a level "
      "that moves between rounds is a machine whose speed changed during the calibration)\n",
      "machine level", fmt::join(levels, " | "));
  std::cout << fmt::format(
      "{:<18}{:.3f} of a device's time is lost while the others compute (1 - a 256^3 GEMM alone "
      "over the same with every device busy, median of the rounds: {:.3f}); kernels are priced "
      "alone, their busy times x {:.3f}\n",
      "contention", c.contention, fmt::join(c.contention_rounds, " | "), 1 - c.contention);
  std::cout << fmt::format("{:<18}latency {} (+ {} pipelined delay), bandwidth {:.3g} B/s ({})\n",
                           "link model", t(c.latency), t(c.delay), c.bandwidth, o.topology);
  std::cout << fmt::format(
      "{:<18}{:.2f} of a copy's link time is taken from its destination's busy work (measured "
      "{:.2f}: {} of {} with copies, {} without{})\n",
      "copy share", c.copy_share, c.copy_share_measured, t(c.share_sent),
      c.share_basis == "span" ? "device spans" : "op time", t(c.share_kept),
      c.copy_share > c.copy_share_measured
          ? "; raised to the floor: the destination's own core performs each copy"
          : "");
  std::cout << fmt::format("{:<18}{}\n", "fit", c.fit);
  std::cout << fmt::format("{:<18}{}\n", "written", o.output);
}

}  // namespace

void add_calibrate(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      fmt::format(
          "Measure the engine on this machine (kernel time per op kind and size with every device "
          "busy, the GEMMs in {} passes spread over the calibration, each size their median, "
          "engine overhead per op, copy time per size (into busy receivers on the threads "
          "backend, whose copy workers share their cores; into waiting ones on MPI ranks, whose "
          "workers take delivery between ops, each run's mean over the ring of ranks, whose clock "
          "offsets cancel), and what each further copy of a burst "
          "adds: the link latency it occupies, the rest pipelined; and the share of a copy's time "
          "taken from a busy destination: from its ops' time, or on MPI ranks, whose workers copy "
          "blocks in between ops, from the devices' spans; each device's speed, in three rounds: a "
          "device is written slower only where every round reads it more than {:.0f}% slower; in "
          "each round also each device's GEMMs alone, the others idle: the time a device loses "
          "to the others' compute, its contention, with which the profile prices every kernel "
          "alone) and write a hardware profile that makes the simulator predict it (use it with "
          "simulate/place/compare/validate-sim --hardware).",
          kGemmPasses, 100 * kDeviceSlowdownNoise));
  add_devices_option(*cmd, o->devices, false)->capture_default_str();
  cmd->add_option("-o,--output", o->output, "profile to write (doppler-hardware JSON)")->required();
  cmd->add_option("--name", o->name, "profile name")->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "measured runs per benchmark")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--topology", o->topology,
                  "switch (a copy crosses the sender's and the receiver's port) or all-to-all")
      ->check(CLI::IsMember({"switch", "all-to-all"}))
      ->capture_default_str();
  cmd->add_option("--graph", o->graph,
                  "also time this graph's own ops and fit each kernel it uses to them (instead of "
                  "that kernel's microbenchmarks)");
  auto* kernels =
      cmd->add_option("--kernels", o->kernels,
                      "benchmark only these engine kernels (comma-separated, docs/exec.md), "
                      "besides the GEMMs, which always run; the others are priced by FLOPs at the "
                      "fitted peak (default: every kernel, about 3 times as long)")
          ->delimiter(',');
  cmd->add_option("--kernels-of", o->kernels_of,
                  "benchmark only the kernels this graph's ops use (as --kernels): a profile "
                  "for that graph in a third of the time")
      ->excludes(kernels);
  add_engine_options(*cmd, o->engine, EngineFlags::links);
  cmd->add_option("--backend", o->backend,
                  "engine to measure: local (threads), mpi (start with mpirun -np R; rank 0 "
                  "writes the profile) or cuda (GPU partitions or GPUs: --gpu-partitions, --gpus)")
      ->check(CLI::IsMember({"local", "mpi", "cuda"}))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object instead of text");
  cmd->callback([o] { run_calibrate(*o); });
}

}  // namespace doppler::cli
