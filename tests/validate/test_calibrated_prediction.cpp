// A workload whose makespan is known by construction, predicted by the simulator with a profile
// that `calibrate` measured on this machine's engine (issue 26).
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/validate/calibrate.hpp"

namespace doppler {
namespace {

constexpr std::int64_t kElems = 65536;

// A node running `kernel` on `elems` f32 elements (a multiple of 256), reading `srcs`.
NodeId add_op(GraphBuilder& b, const std::string& kernel, const std::vector<NodeId>& srcs,
              double flops_per_elem, std::int64_t elems = kElems) {
  Node n;
  n.kind = srcs.empty() ? OpKind::input : OpKind::elementwise;
  n.name = kernel + std::to_string(b.num_nodes());
  n.flops = flops_per_elem * static_cast<double>(elems);
  n.out_bytes = 4.0 * static_cast<double>(elems);
  ExecDesc e;
  e.op = kernel;
  e.shape = {elems / 256, 256};
  e.origin = {0, 0};
  if (srcs.empty()) e.attrs = {{"seed", 1.0 + b.num_nodes()}, {"scale", 0.5}};
  for (NodeId s : srcs) e.inputs.push_back({s, {}, {}});
  n.exec = std::move(e);
  const NodeId v = b.add_node(std::move(n));
  for (NodeId s : srcs) b.add_edge(s, v);
  return v;
}

// Device 0: a chain of 32 silu ops; device 1: a chain of 8; then one 256 KB copy of device 0's
// last output into an add on device 1. The makespan is device 0's chain, the copy and the add:
// almost all of it kernel time that a FLOPs-only model prices 100x too low.
struct Chains {
  Graph g;
  Assignment a;
};

Chains build_chains() {
  GraphBuilder b;
  std::vector<DeviceId> dev;
  const auto chain = [&](int len, DeviceId d) {
    NodeId v = add_op(b, "input", {}, 0);
    dev.push_back(d);
    for (int i = 0; i < len; ++i) {
      v = add_op(b, "silu", {v}, 4);
      dev.push_back(d);
    }
    return v;
  };
  const NodeId long_end = chain(32, 0), short_end = chain(8, 1);
  add_op(b, "add", {short_end, long_end}, 1);
  dev.push_back(1);
  Chains c{b.build(), {}};
  c.a.devices = 2;
  c.a.device_of = dev;
  return c;
}

// An op on device 1 reading one row (256 elements, 1 KB) of `src`'s block: the whole block is
// copied to device 1, and the op itself costs next to nothing, whether the block is in the cache
// or not.
NodeId add_row_reader(GraphBuilder& b, NodeId src) {
  Node n;
  n.kind = OpKind::elementwise;
  n.name = "row" + std::to_string(b.num_nodes());
  n.flops = 256;
  n.out_bytes = 1024;
  ExecDesc e;
  e.op = "scale";
  e.shape = {1, 256};
  e.origin = {0, 0};
  e.inputs.push_back({src, {0, 0}, {1, 256}});
  n.exec = std::move(e);
  const NodeId v = b.add_node(std::move(n));
  b.add_edge(src, v);
  return v;
}

// Device 1: a chain of 32 silu ops (~3.3 ms here); device 0: 32 input blocks of 1 MB (the size
// calibrate measures the share at), each sent whole to device 1 for an op that reads one row of
// it. The 32 copies arrive while device 1's chain runs, and its copy worker takes their time from
// the chain: a model that runs copies beside the compute for free predicts the chain alone.
// (A consumer reading the whole block would be priced at calibrate's 1 MB kernel time, measured
// with every device streaming its own operands from memory: 2x what it takes here, a mispricing
// that cancels the copies' time in the free model.)
Chains build_copies_into_busy_device() {
  constexpr std::int64_t kBlock = 262144;
  GraphBuilder b;
  std::vector<DeviceId> dev;
  NodeId v = add_op(b, "input", {}, 0);
  dev.push_back(1);
  for (int i = 0; i < 32; ++i) {
    v = add_op(b, "silu", {v}, 4);
    dev.push_back(1);
  }
  for (int k = 0; k < 32; ++k) {
    const NodeId x = add_op(b, "input", {}, 0, kBlock);
    dev.push_back(0);
    add_row_reader(b, x);
    dev.push_back(1);
  }
  Chains c{b.build(), {}};
  c.a.devices = 2;
  c.a.device_of = dev;
  return c;
}

// A calibration of this machine's engine on 2 devices (3 runs per benchmark) for the kernels of
// c's graph (and the GEMMs): a third of a full calibration's time.
Calibration calibrate_for(const Chains& c) {
  CalibrationOptions o;
  o.devices = 2;
  o.repeat = 3;
  o.kernels = graph_kernels(c.g);
  return calibrate(o);
}

// The calibrated simulator's makespan of the chains and the engine's median of `runs` runs;
// edit changes the calibration before it is written as a profile (e.g. drops the kernel table).
std::pair<double, double> simulated_and_measured(
    const Chains& c, int runs, const std::function<void(Calibration&)>& edit = nullptr) {
  Calibration cal = calibrate_for(c);
  if (edit) edit(cal);
  const HardwareProfile hw =
      parse_hardware_profile(calibration_profile_json(cal, "test", "switch"), "calibrated");
  const Problem problem(c.g, Platform::hardware(hw, 2));
  EngineOptions eo;
  eo.devices = 2;
  Engine engine(c.g, eo);
  return {problem.simulator().makespan(c.a.device_of),
          engine.measure(c.a, DispatchRule::fifo, runs).median};
}

// Relative error of the calibrated simulator's makespan against the engine's median.
double prediction_error(const Chains& c) {
  const auto [simulated, measured] = simulated_and_measured(c, 9);
  return std::abs(simulated - measured) / measured;
}

// Independent calibrate-and-measure attempts of the timing checks: 5 (each test stops at the first
// that meets it). 5 under AddressSanitizer, which slows kernels, copies and the engine's hand-offs
// by different factors (one clean-clone CI run missed with 28.9% at best of 3 there, on a noisy
// machine); 5 in the regular build too since a clean-clone CI run on 2026-11-28 missed
// CopiesIntoABusyDeviceTakeItsTime in all 3 (simulated 6.5-7.0 ms against 4.9-5.5 ms measured,
// copy_share at its floor of 1, since lowered: see that test) and passed alone right after,
// twice.
constexpr int kAttempts = 5;

// Stated tolerance: within 25% of the measured median. Timing on a shared machine can be
// disturbed by other processes, so up to kAttempts independent calibrate-and-measure attempts
// are made; a model that misprices the kernels misses on every attempt (the FLOPs-only model is
// off by ~90% here).
TEST(CalibratedPrediction, KnownChainsArePredictedWithin25Percent) {
  const Chains c = build_chains();
  double best = 1e300;
  for (int attempt = 0; attempt < kAttempts && best > 0.25; ++attempt)
    best = std::min(best, prediction_error(c));
  EXPECT_LE(best, 0.25);
}

// The same chains under the profile without its kernel table (FLOPs / peak for every op) are
// predicted far too short: the check above can fail.
TEST(CalibratedPrediction, WithoutKernelCostsTheSameChainsAreMispriced) {
  const auto [simulated, measured] =
      simulated_and_measured(build_chains(), 5, [](Calibration& cal) { cal.kernel_costs.clear(); });
  EXPECT_LT(simulated, 0.5 * measured);
}

// One calibration's predictions of `c`, with its measured copy_share and with copy_share 0 (the
// simulator before 2026-11-26: copies beside the compute for free), and the engine's median.
struct CopyPrediction {
  double with_share = 0, free_copies = 0, measured = 0, share = 0;
};

CopyPrediction predict_copies(const Chains& c) {
  Calibration cal = calibrate_for(c);
  const auto simulate = [&](const Calibration& k) {
    const HardwareProfile hw =
        parse_hardware_profile(calibration_profile_json(k, "test", "switch"), "calibrated");
    return Problem(c.g, Platform::hardware(hw, 2)).simulator().makespan(c.a.device_of);
  };
  CopyPrediction p;
  p.share = cal.copy_share;
  p.with_share = simulate(cal);
  cal.copy_share = 0;
  p.free_copies = simulate(cal);
  EngineOptions eo;
  eo.devices = 2;
  Engine engine(c.g, eo);
  p.measured = engine.measure(c.a, DispatchRule::fifo, 9).median;
  return p;
}

// Copies into a busy device, within 25% of the measured median with the calibrated copy_share,
// and closer than without it (copy_share 0), from the same calibration and measurement, where the
// charged copies are at least 20% of the makespan. Timing on a shared machine can be disturbed, so
// up to kAttempts calibrate-and-measure attempts are made and one must meet both. Idle machine,
// 2026-11-26, Release, four runs: simulated 5.83, 5.93, 5.43 and 5.49 ms against 6.13, 5.82, 5.55
// and 5.45 ms measured (copy_share 1.05, 1.51, 0.81, 0.70); with copy_share 0, 3.56-3.91 ms.
// Before the share benchmark counted its input ops (copies take time from them too) the share
// came out at 0.48-0.77 in 6 of 7 runs (1.53 in the 7th) and this graph was simulated up to 24%
// short; later readings of 0-0.15 failed this test 2 times in 14 (simulated 4.1-4.4 ms against
// 5.8-6.5 ms), which a floor of 1 (copy_share_floor: the destination's core performs the
// copy) then prevented. On the AMD EPYC VM that floor overshot (simulated 6.7-8.8 ms against
// 5.2-6.2 ms: a copy's fitted latency there, 32-41 us, is mostly the idle copy thread's wake-up,
// which a busy core does not lose; a CI run missed all 5 attempts, 2026-12-07); the copy
// worker's floor is now the memcpy's part of the occupancy, 0.57-0.66 there. Four idle runs
// then (2026-12-07) passed at 5.49-6.86 ms against 5.46-5.92 ms measured (shares 0.57-1.00),
// one after a first attempt that read a share of 1.41 (7.59 ms against 5.24 ms).
TEST(CalibratedPrediction, CopiesIntoABusyDeviceTakeItsTime) {
  const Chains c = build_copies_into_busy_device();
  const auto met = [](const CopyPrediction& p) {
    const auto error = [&](double simulated) {
      return std::abs(simulated - p.measured) / p.measured;
    };
    // Which model is closer says something only where the charged copies are a fair part of the
    // makespan (under ASan the kernels slow down more than the copies).
    const bool charged = (p.with_share - p.free_copies) / p.measured >= 0.2;
    return error(p.with_share) <= 0.25 && (!charged || error(p.with_share) < error(p.free_copies));
  };
  std::string tries;
  bool ok = false;
  for (int attempt = 0; attempt < kAttempts && !ok; ++attempt) {
    const CopyPrediction p = predict_copies(c);
    tries += " simulated " + std::to_string(p.with_share) + " s (" + std::to_string(p.free_copies) +
             " s with copy_share 0), measured " + std::to_string(p.measured) + " s, copy_share " +
             std::to_string(p.share) + ";";
    ok = met(p);
  }
  RecordProperty("attempts", tries);
  EXPECT_TRUE(ok) << tries;
}

// A device measured slower than the others (a core shared with another process) is written with a
// proportionally lower peak, and every kernel cost follows it; slowdowns within the noise give
// identical devices.
TEST(CalibratedPrediction, SlowDevicesAreWrittenSlower) {
  Calibration cal;
  cal.devices = 2;
  cal.peak_flops = 1e11;
  cal.launch_overhead = 1e-7;
  cal.bandwidth = 1e10;
  cal.kernel_costs["silu"] = {{2e-6, 4e-10, 0, {}, false}, 3, "microbenchmarks"};
  GraphBuilder b;
  const NodeId x = add_op(b, "input", {}, 0);
  add_op(b, "silu", {x}, 4);
  const Graph g = b.build();
  const double fastest = 2e-6 + 4 * kElems * 4e-10;  // above the launch overhead
  const auto op_time = [&](std::vector<double> slowdown, DeviceId d) {
    cal.device_slowdown = std::move(slowdown);
    const HardwareProfile hw =
        parse_hardware_profile(calibration_profile_json(cal, "t", "switch"), "t.json");
    return Platform::hardware(hw, 2).cost_model(g).compute(1, d) - 1e-7;
  };
  EXPECT_NEAR(op_time({1, 2}, 0), fastest, 1e-12);
  EXPECT_NEAR(op_time({1, 2}, 1), 2 * fastest, 1e-12);
  EXPECT_NEAR(op_time({2, 1}, 0), 2 * fastest, 1e-12);
  EXPECT_NEAR(op_time({2, 1}, 1), fastest, 1e-12);
  EXPECT_NEAR(op_time({1, 1.2}, 1), fastest, 1e-12);  // within the noise: identical devices
}

// GEMMs get faster per FLOP as they grow (here 20 GFLOP/s at 16^3 up to 120 at 512^3, the shape
// measured on this machine): no line a + c x goes through every size, and the relative least
// squares line prices the 512^3 GEMM ~9% too long (the chainmm and ffnn graphs, made of such
// GEMMs, were simulated 7-17% too slow with it). The measured sizes as points price every
// benchmarked size at its measured time, and interpolate in between.
TEST(CalibratedPrediction, KernelPointsFollowTheMeasuredSizes) {
  const double lo = 0.2e-6;
  std::vector<KernelSample> samples;
  const std::vector<std::pair<double, double>> sizes = {{16, 20e9},   {32, 50e9},   {64, 90e9},
                                                        {128, 110e9}, {256, 118e9}, {512, 120e9}};
  for (const auto& [n, rate] : sizes)
    samples.push_back({"einsum",
                       "einsum",
                       "gemm",
                       2 * n * n * n,
                       12 * n * n,
                       4 * n * n,
                       2 * n * n * n / rate,
                       {},
                       {}});
  std::vector<const KernelSample*> ptrs;
  for (const KernelSample& k : samples) ptrs.push_back(&k);
  const FittedKernel f = fit_kernel(ptrs, lo, false);
  ASSERT_EQ(f.cost.points.size(), sizes.size());
  for (const KernelSample& k : samples)
    EXPECT_NEAR(f.cost.seconds(k.flops, k.out_bytes), k.seconds - lo, 1e-12 * k.seconds);
  const KernelSample& big = samples.back();
  const double line = f.cost.seconds_per_op + big.flops * f.cost.seconds_per_flop;
  EXPECT_GT(line, 1.05 * (big.seconds - lo));
  // Half-way between 256^3 and 512^3 in FLOPs: the mean of their times.
  const KernelSample& mid = samples[4];
  EXPECT_NEAR(f.cost.seconds(0.5 * (mid.flops + big.flops), 0),
              0.5 * (mid.seconds + big.seconds) - lo, 1e-12);
  // A graph-fitted kernel keeps its exact total and no points.
  EXPECT_TRUE(fit_kernel(ptrs, lo, true).cost.points.empty());
}

// Points never go down with the size: a larger op measured faster than a smaller one is noise,
// and the two get their mean (by hand: 3 and 2 us become 2.5 and 2.5; 4 us stays). Two samples of
// one size are one point, their mean.
TEST(CalibratedPrediction, KernelPointsPoolDecreasingTimes) {
  std::vector<KernelSample> samples = {{"e", "exp", "a", 1000, 0, 0, 3e-6, {}, {}},
                                       {"e", "exp", "b", 2000, 0, 0, 2e-6, {}, {}},
                                       {"e", "exp", "c", 3000, 0, 0, 3.5e-6, {}, {}},
                                       {"e", "exp", "d", 3000, 0, 0, 4.5e-6, {}, {}}};
  std::vector<const KernelSample*> ptrs;
  for (const KernelSample& k : samples) ptrs.push_back(&k);
  const FittedKernel f = fit_kernel(ptrs, 0, false);
  ASSERT_EQ(f.cost.points.size(), 3u);
  EXPECT_NEAR(f.cost.points[0].seconds, 2.5e-6, 1e-15);
  EXPECT_NEAR(f.cost.points[1].seconds, 2.5e-6, 1e-15);
  EXPECT_NEAR(f.cost.points[2].seconds, 4e-6, 1e-15);
  EXPECT_DOUBLE_EQ(f.cost.points[2].units, 3000);
}

// The single copy's latency splits into what each further copy of a burst adds (the port is busy)
// and the pipelined rest, computed by hand: 4 KB copies at 4.096 GB/s (1 us of bytes); a single
// copy takes 300 us, a 16-copy burst 1.5 ms, so each further copy adds 80 us, 79 us of it
// latency; the fitted 290 us latency leaves 211 us of delay.
TEST(CalibratedPrediction, CopyLatencySplitsIntoOccupiedAndPipelined) {
  ASSERT_EQ(kCopyBurst, 16);
  ASSERT_EQ(kCopyBurstElems, 1024);
  Calibration c;
  c.copies = {{4096, 300e-6}, {65536, 320e-6}};
  c.burst_span = 1.5e-3;
  c.bandwidth = 4.096e9;
  c.latency = 290e-6;
  split_copy_latency(c);
  EXPECT_NEAR(c.latency, 79e-6, 1e-12);
  EXPECT_NEAR(c.delay, 211e-6, 1e-12);
  // A burst paying the whole latency per copy: nothing is pipelined.
  c.latency = 290e-6;
  c.delay = 0;
  c.burst_span = 300e-6 + 15 * 400e-6;
  split_copy_latency(c);
  EXPECT_DOUBLE_EQ(c.latency, 290e-6);
  EXPECT_DOUBLE_EQ(c.delay, 0);
  // Copies that overlap completely: all of it is pipelined.
  c.burst_span = 250e-6;
  split_copy_latency(c);
  EXPECT_DOUBLE_EQ(c.latency, 0);
  EXPECT_DOUBLE_EQ(c.delay, 290e-6);
}

// Two MPI ranks, one device each: a chain of 64 scale ops on 4 KB blocks alternating between the
// devices, so that its makespan is mostly 64 copies between ranks, each awaited by an idle worker.
Chains build_ping_pong() {
  constexpr std::int64_t kSmall = 1024;
  GraphBuilder b;
  std::vector<DeviceId> dev;
  NodeId v = add_op(b, "input", {}, 0, kSmall);
  dev.push_back(0);
  for (int i = 1; i <= 64; ++i) {
    v = add_op(b, "scale", {v}, 1, kSmall);
    dev.push_back(i % 2);
  }
  Chains c{b.build(), {}};
  c.a.devices = 2;
  c.a.device_of = dev;
  return c;
}

// One attempt on 2 ranks: calibrate (CLI, --backend mpi), then the calibrated simulator's
// makespan of the ping-pong chain, the same with every copy given a 30 us pipelined delay (what
// the copies measured into busy receivers, before 2026-11-26), and the engine's median of 9 runs.
struct RankPrediction {
  double simulated = 0, busy_receiver_delay = 0, measured = 0;
  std::string note;
};

RankPrediction predict_ping_pong(const Chains& c) {
  test::TempDir dir;
  const std::string g = (dir / "g.json").string(), a = (dir / "a.json").string(),
                    hw = (dir / "hw.json").string();
  save_graph(g, c.g, GraphFormat::json);
  write_file_atomic(a, format_assignment_json(c.a));
  RankPrediction p;
  const test::CliResult cal = test::run_cli_mpi2(
      "-q calibrate --devices 2 --repeat 3 --backend mpi --kernels-of '" + g + "' -o '" + hw + "'");
  if (cal.exit_code != 0) return p.note = "calibrate failed: " + cal.err, p;
  const test::CliResult run =
      test::run_cli_mpi2("execute '" + g + "' -a '" + a + "' --backend mpi --repeat 9 --json");
  if (run.exit_code != 0) return p.note = "execute failed: " + run.err, p;
  p.measured = nlohmann::json::parse(run.out)["makespan_median"].get<double>();
  nlohmann::json profile = nlohmann::json::parse(read_file(hw));
  const auto simulate = [&](const nlohmann::json& j) {
    const HardwareProfile h = parse_hardware_profile(j.dump(), hw);
    return Problem(c.g, Platform::hardware(h, 2)).simulator().makespan(c.a.device_of);
  };
  p.simulated = simulate(profile);
  profile["topology"]["port"]["delay"] = 30e-6;
  p.busy_receiver_delay = simulate(profile);
  p.note = "simulated " + std::to_string(p.simulated) + " s (" +
           std::to_string(p.busy_receiver_delay) + " s with a 30 us delay), measured " +
           std::to_string(p.measured) + " s;";
  return p;
}

// Copies between ranks, received by a worker that waits for them, predicted within 2.5x of the
// measured median either way (best of five attempts): the copies' latency is measured into idle
// receivers. Measured into busy ones, a copy waited for the receiver's next op boundary (half a
// 0.1 ms background op) and the simulator charged that wait as a delay on every copy: with a
// 30 us delay the same calibration predicts the chain over 5x too long (checked below, so the
// first check can fail; the busy-receiver calibration of 2026-11-25 predicted 4.1-4.8 ms against
// 0.18-0.21 ms). The bound is loose because calibrate times copies with every rank sending and
// receiving at once (as in the workloads' copies), which on this 2-vCPU VM costs a lone copy up
// to twice its time in a ping-pong (docs/engine.md, step 4): 2026-11-29, idle, simulated
// 0.55-0.93 ms against 0.31-0.51 ms measured (1.4-2.3x; a 35% bound missed all five attempts);
// 2026-11-26 on the other VM, 0.192 against 0.184 ms.
TEST(CalibratedPrediction, CopiesBetweenRanksToWaitingWorkers) {
  if (!test::have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin): skipping";
  DOPPLER_REQUIRE_CLI_COMPONENT(mpi);
  const Chains c = build_ping_pong();
  const auto factor = [](const RankPrediction& p) {
    if (p.measured <= 0 || p.simulated <= 0) return 1e300;
    return std::max(p.simulated / p.measured, p.measured / p.simulated);
  };
  RankPrediction best;
  std::string tries;
  for (int attempt = 0; attempt < 5 && (attempt == 0 || factor(best) > 2.5); ++attempt) {
    const RankPrediction p = predict_ping_pong(c);
    tries += " " + p.note;
    if (attempt == 0 || factor(p) < factor(best)) best = p;
  }
  RecordProperty("attempts", tries);
  ASSERT_GT(best.measured, 0) << tries;
  EXPECT_LE(factor(best), 2.5) << tries;
  EXPECT_GT(best.busy_receiver_delay, 5 * best.measured) << tries;
}

}  // namespace
}  // namespace doppler
