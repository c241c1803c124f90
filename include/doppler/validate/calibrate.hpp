#pragma once
// Calibration: measures this engine (kernel time per op kind and size with P devices busy at
// once, the engine's own per-op overhead, copy time per size) and fits the simulator's hardware
// model to it, so that `doppler simulate --hardware hw.json` predicts the engine.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "doppler/engine/options.hpp"
#include "doppler/engine/runner.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/hardware/profile.hpp"

namespace doppler {

/// What calibrate() measures.
struct CalibrationOptions {
  int devices = 1;          ///< P: devices of the engine (all busy while kernels are timed)
  int repeat = 5;           ///< measured runs per benchmark (median per op)
  LinkEmulation link;       ///< copy slow-down to calibrate (off by default)
  bool pin_threads = true;  ///< as EngineOptions::pin_threads
  CopyMode copies = CopyMode::worker;  ///< as EngineOptions::copies
  std::string topology = "switch";     ///< profile topology: "switch" or "all-to-all"
  /// Optional graph whose own ops (run on P devices, round-robin in topological order) give
  /// the cost of each kernel it uses (their total time over their total FLOPs or bytes), in
  /// place of the microbenchmarks of those kernels; nullptr = microbenchmarks only.
  const Graph* graph = nullptr;
  /// The backend measured: builds the engine of each benchmark (empty = the local threads
  /// backend; MpiEngine::factory() for MPI ranks, where every rank runs calibrate() alike and
  /// rank 0's result counts).
  EngineFactory engines;
  /// True where the receiving device's worker copies incoming blocks itself, between its ops
  /// (MPI ranks): the copies' time is then measured in the devices' spans, not in their ops.
  bool receiver_copies = false;
  /// Bytes of one element as the measured engine stores it (4: f32; 2: the CUDA engine with
  /// bf16 tensors): the byte counts of the benchmark blocks and copies, so that the fitted
  /// bandwidths and per-byte costs are per real byte.
  int element_bytes = 4;
  /// Engine kernels (ExecDesc::op names) whose microbenchmarks run; empty = every one. The GEMM
  /// and GEMV benchmarks always run (the peak FLOP/s they give prices every kernel without a
  /// cost); a kernel priced like another (cos like sin: kernels_priced_like()) runs that one's;
  /// a kernel without a benchmark (conv2d, softmax pieces, ...) is accepted and priced by its
  /// FLOPs. InputError for a name that is no engine kernel. A calibration for one graph:
  /// graph_kernels(g).
  std::vector<std::string> kernels;
};

/// The distinct engine kernels of g's ops (ExecDesc::op), sorted; empty for a graph without exec
/// descriptions.
std::vector<std::string> graph_kernels(const Graph& g);

/// Kernels calibrate() does not benchmark, each priced like a measured kernel of the same work
/// ({kernel, measured}: cos like sin, selu like elu, floor like abs, ...).
const std::vector<std::pair<std::string, std::string>>& kernels_priced_like();

/// Median time of one benchmarked kernel.
struct KernelSample {
  std::string kind;      ///< "einsum", "einsum gemv", "elementwise", "reduction", "graph op", ...
  std::string kernel;    ///< engine kernel name (ExecDesc::op), e.g. "silu"; empty = none
  std::string what;      ///< e.g. "ij,jk->ik 64x64x64" or "silu 32768"
  double flops = 0;      ///< FLOPs of one op
  double bytes = 0;      ///< bytes read and written by one op (element_bytes each)
  double out_bytes = 0;  ///< bytes of one op's output (the basis of kernels without FLOPs)
  double seconds = 0;    ///< median duration of one op (the fastest device's when they differ)
  std::vector<double> device_seconds;  ///< per device: its median (benchmarks; else empty)
  /// GEMM benchmarks ("einsum"): `seconds` of each of the kGemmPasses passes spread over the
  /// calibration; seconds and device_seconds are their medians. Empty for other kinds.
  std::vector<double> pass_seconds;
};

/// Passes of each GEMM benchmark: with the other kernels, after them, after the second
/// device-speed round, after the copies on busy cores and after the third round. The host's GEMM
/// speed moves by up to 1.8x in spells of seconds (the 2-vCPU VM: a 512^3 GEMM benchmark ran at
/// 53 GFLOP/s in such a spell, against ~63 usually); the median of passes spread over the
/// calibration outvotes spells covering up to two of them (three passes read 77.5, 41.6, 49.1
/// GFLOP/s in one calibration, and the runs after it went at ~62).
constexpr int kGemmPasses = 5;

/// Median time of one copy size.
struct CopySample {
  double bytes = 0;    ///< bytes per copy
  double seconds = 0;  ///< median latency: producer's finish to the consumer's ready time
};

/// The fitted cost of one kernel and where it came from.
struct FittedKernel {
  KernelCost cost;     ///< fixed seconds per op, and seconds per FLOP or per output byte
  int samples = 0;     ///< measurements it was fitted to
  std::string source;  ///< "microbenchmarks" or "graph"
};

/// Measurements and the fitted model: an op of a fitted kernel k takes launch_overhead +
/// KernelCost::seconds (its measured sizes interpolated; graph-fitted kernels: seconds_per_op(k)
/// + flops(v) x seconds_per_flop(k), or out_bytes(v) x seconds_per_byte(k) for kernels without
/// FLOPs); any other op launch_overhead + flops(v) / peak_flops; copy(bytes) =
/// latency + bytes / bandwidth, of which the copy's link is busy for all but `delay`.
struct Calibration {
  int devices = 1;                    ///< P
  int element_bytes = 4;              ///< CalibrationOptions::element_bytes
  int cores = 1;                      ///< usable cores of the process
  std::string link;                   ///< link emulation label
  std::string copy_mode = "worker";   ///< who copied between devices (EngineOptions::copies)
  double engine_overhead = 0;         ///< seconds per op of empty kernels (hand-off cost)
  std::vector<KernelSample> kernels;  ///< every benchmarked kernel
  std::vector<CopySample> copies;     ///< every copy size
  double peak_flops = 0;              ///< fitted FLOP/s of one device
  double launch_overhead = 0;         ///< seconds per op (the engine's hand-off cost)
  std::map<std::string, FittedKernel> kernel_costs;  ///< per kernel name (the fastest device)
  /// Per device: its time for the same work over the fastest device's, over ~0.1-0.3 s of GEMMs
  /// per device (long enough for the OS to share a core with another process fairly): 1 =
  /// fastest, 2 = half as fast. From device_slowdown_rounds (persistent_slowdown): a spell of a
  /// slower core in one round is not a slower device.
  std::vector<double> device_slowdown;
  /// The kDeviceSpeedRounds readings of the device-speed benchmark, per round per device (same
  /// unit as device_slowdown), taken at the start, after the copy benchmarks and at the end.
  std::vector<std::vector<double>> device_slowdown_rounds;
  /// The same rounds in seconds: per round per device, the median time of one 256^3 GEMM with
  /// every device busy (the machine's level when that round ran; a level that moves between
  /// rounds is a machine whose speed changed during the calibration).
  std::vector<std::vector<double>> device_gemm_seconds_rounds;
  /// Per round, per device: the median time of the same 256^3 GEMM with that device computing
  /// alone (the others idle), in seconds.
  std::vector<std::vector<double>> device_gemm_alone_rounds;
  /// Per round: the time a device loses to the others' compute, 1 - alone / busy (the medians
  /// over devices of the two GEMM times above); unclamped.
  std::vector<double> contention_rounds;
  /// DeviceSpec::contention: persistent_contention(contention_rounds). The profile prices every
  /// kernel alone: its time measured with every device busy x
  /// (1 - contention), which the simulator lengthens again while other devices compute.
  double contention = 0;
  /// Median seconds from the first producer's finish to the last consumer's ready time of 16
  /// copies of 4 KB blocks produced back to back on each device (the copies' port throughput).
  double burst_span = 0;
  double bandwidth = 0;  ///< fitted bytes/s of a copy
  double latency = 0;    ///< fitted seconds per copy that occupy its port (what a burst adds)
  /// Fitted seconds per copy after it leaves its port, pipelined: the single copy's latency
  /// minus `latency` (the receiver's wake-up, message latency); >= 0.
  double delay = 0;
  /// Share of a copy's port occupancy taken from the busy compute of its destination, in
  /// 0..kMaxCopyShare
  /// (DeviceSpec::copy_share): measured from the summed op time (basis "ops") or the summed
  /// device spans (basis "span", CalibrationOptions::receiver_copies) of busy devices with
  /// incoming copies (share_sent, seconds) and without (share_kept).
  /// At least copy_share_floor(): where the destination's own core performs the copy, the
  /// benchmark's lower readings are its noise.
  double copy_share = 0;
  double copy_share_measured = 0;  ///< the benchmark's share before the floor, in 0..4
  double share_sent = 0, share_kept = 0;
  std::string share_basis = "ops";
  std::string fit;  ///< how the device model was fitted (one line)
  /// The kernels whose microbenchmarks ran when CalibrationOptions::kernels chose some (the
  /// GEMMs' "einsum" included), sorted; empty when every benchmark ran.
  std::vector<std::string> benchmarked;
  /// The kernels a calibration of every kernel prices that this one left out (chosen kernels
  /// only; sorted): the profile lists them (calibration_source.kernels_left_out), and a graph
  /// with their ops gets a warning where the profile prices it (kernel_coverage_warning).
  std::vector<std::string> left_out;
};

/// The least copy share of a device whose own core performs each incoming copy, link emulation
/// off: with the receiving device's copy worker (CopyMode::worker), the memcpy's part of the
/// share benchmark's copy occupancy, (bytes / c.bandwidth) / (c.latency + bytes / c.bandwidth)
/// for its 1 MB blocks: the memcpy holds the core, while the fitted latency is mostly the copy
/// thread's wake-up, wall time that a busy core's work does not lose; 1 with an MPI rank taking
/// delivery (receiver_copies); else 0 (the producer's core copies, or the copy worker mostly
/// waits out an emulated link). Needs the fitted link model (c.latency, c.bandwidth).
double copy_share_floor(const CalibrationOptions& o, const Calibration& c);

/// Copies per burst, and f32 elements of each copied block, of the copy-burst benchmark.
constexpr int kCopyBurst = 16;
constexpr std::int64_t kCopyBurstElems = 1024;

/// Splits c.latency (fitted to single copies) into the part a copy occupies its port for and
/// the pipelined rest (c.delay): each further copy of the burst adds (burst_span - the single
/// 4 KB copy's time) / (kCopyBurst - 1), of which all but bytes / bandwidth is occupied latency,
/// clamped to 0..latency. No change without a burst or a 4 KB sample; latency + delay is kept.
void split_copy_latency(Calibration& c);

/// The cost of one kernel beyond `launch_overhead` (seconds per op) from its samples, in FLOPs or,
/// when one has none, output bytes. Microbenchmarks (`from_graph` false): the line a + c x by
/// relative least squares (a >= 0), and the samples as KernelCost::points (one per size, mean
/// seconds, made non-decreasing by pooling adjacent violators), which the cost follows. Graph ops:
/// the total time above the overhead over the total units, so the kernel's summed time in that
/// graph is exact (no points).
FittedKernel fit_kernel(const std::vector<const KernelSample*>& samples, double launch_overhead,
                        bool from_graph);

/// Slowdowns that differ from 1 by at most this are measurement noise: the devices are written
/// as identical. On the 2-vCPU VM, readings of 1.1-1.2 in every round did not last into the runs
/// that followed (device 0 read 1.14-1.15 three times on 2 MPI ranks, and the engine then ran the
/// placements that loaded device 0 faster than those that spared it: re-simulated with identical
/// devices, Spearman 0.63 -> 0.86 on chainmm, 0.59 -> 0.91 on ffnn); a core shared with a busy
/// process reads 1.67-2.17.
constexpr double kDeviceSlowdownNoise = 0.25;

/// Rounds of the device-speed benchmark, spread over the calibration.
constexpr int kDeviceSpeedRounds = 3;

/// Contention readings at or below this are noise: on the 2-vCPU VM 256^3 GEMMs alone against
/// both devices busy read -0.05..+0.19 per round in two calibrations, never all three above 0.05
/// (512^3: -0.08..+0.22, 1024^3: -0.04..+0.07).
constexpr double kContentionNoise = 0.05;

/// The contention a profile writes from the per-round readings (Calibration::contention_rounds):
/// their median, clamped to 0..kMaxContention, where every round reads more than
/// kContentionNoise; else 0 (no rounds: 0).
double persistent_contention(const std::vector<double>& rounds);

/// Per device: the median of its slowdowns over the rounds where every round reads it slower
/// than kDeviceSlowdownNoise, else 1 (each round's readings are >= 1, its fastest device's 1).
/// On a 2-vCPU VM a single 0.3 s reading put one device 1.11-1.20x slower in 7 of 20 calibrations
/// while the engine's runs that followed showed no such difference (or the reverse): chainmm on 2
/// MPI ranks was ranked at Spearman 0.08 where identical devices rank it at 0.80. A core shared
/// with a busy process reads slower in every round (1.75-2.17 in three rounds on threads); the
/// median, not the least, prices it (re-simulated, chainmm 0.941 / 19.1% at the least, 0.968 /
/// 13.1% at the median). Empty for no rounds.
std::vector<double> persistent_slowdown(const std::vector<std::vector<double>>& rounds);

/// Runs every benchmark (a few seconds). `progress(step, steps, what)` is called before each
/// benchmark when set. InputError on bad options.
Calibration calibrate(const CalibrationOptions& o,
                      const std::function<void(int, int, const std::string&)>& progress = {});

/// A doppler-hardware profile document (docs/hardware.md) of `c`: P devices with peak_flops (f32
/// and f16) = c.peak_flops / slowdown (1 for all when every slowdown is within
/// kDeviceSlowdownNoise of 1), efficiency 1, launch_overhead, the fitted kernel costs
/// ("kernels", scaled to device 0), and the given
/// topology ("switch": each copy crosses the sender's egress and the receiver's ingress port,
/// each with half the latency and delay; "all-to-all": a dedicated link per pair). Every
/// measurement is kept under "calibration_source".
std::string calibration_profile_json(const Calibration& c, const std::string& name,
                                     const std::string& topology);

}  // namespace doppler
