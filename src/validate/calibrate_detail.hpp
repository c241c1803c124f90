#pragma once
// What the parts of doppler calibrate share (private to src/validate): the benchmark graphs and
// engines (calibrate_bench.cpp), the kernel and device-speed benchmarks (calibrate_bench.cpp),
// the copy benchmarks (calibrate_copies.cpp) and the fits (calibrate_fit.cpp) that calibrate()
// (calibrate.cpp) runs in order, and the constants the profile (calibrate_output.cpp) reports.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/validate/calibrate.hpp"

namespace doppler::calibrate_detail {

/// A block's shape (elements per dimension).
using Shape = std::vector<std::int64_t>;

/// Median of `x` (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> x);

/// Elements of a block of shape `s` (1 for a scalar).
std::int64_t count(const Shape& s);

/// Builds benchmark graphs: input blocks and ops with exec descriptions, and the device each
/// runs on.
class BenchGraph {
public:
  /// Blocks of `element_bytes` bytes an element (CalibrationOptions::element_bytes).
  explicit BenchGraph(int element_bytes) : element_bytes_(element_bytes) {}
  /// A new input block of `shape` (seeded by its id, scale 0.5).
  NodeId input(const Shape& shape);
  /// A new op of engine kernel `kernel` with output `shape`, reading `srcs` whole, of `flops`
  /// FLOPs (an einsum's `spec`, kernel attributes `attrs`).
  NodeId op(const std::string& kernel, const Shape& shape, const std::vector<NodeId>& srcs,
            double flops, const std::string& spec = "",
            const std::vector<std::pair<std::string, double>>& attrs = {});
  /// Records that node v runs on device d.
  void place(NodeId v, DeviceId d);
  /// The graph built so far.
  Graph build();
  /// The recorded devices as an assignment for `devices` devices.
  Assignment assignment(int devices) const;

private:
  double element_bytes_;
  GraphBuilder b_;
  std::vector<DeviceId> device_of_;
};

/// The engine settings every calibration benchmark shares: `devices` devices, pinning and copy
/// mode as asked.
EngineOptions benchmark_engine(const CalibrationOptions& o, int devices);

/// The engine of one benchmark: o.engines's, or the local threads backend's.
std::unique_ptr<EngineRunner> make_engine(const CalibrationOptions& o, const Graph& g,
                                          const EngineOptions& eo);

/// Per device: its first timed op's start to its last timed op's finish in `s` (seconds).
std::vector<double> device_spans(const Schedule& s, const std::vector<NodeId>& timed, int devices);

/// Kind of the GEMV benchmarks: einsums priced by the bytes they read, kept out of the einsum's
/// FLOPs points and of the peak (set_input_byte_floor).
inline constexpr const char* kGemvKind = "einsum gemv";

/// One kernel benchmark: independent ops per device, each reading its own input blocks.
struct KernelBench {
  std::string kind, what, kernel, spec;  ///< KernelSample's kind/what/kernel; einsum spec
  std::vector<Shape> inputs;             ///< shapes of each op's inputs
  Shape out;                             ///< shape of each op's output
  double flops, bytes;                   ///< per op: FLOPs, bytes read and written
  std::vector<std::pair<std::string, double>> attrs = {};  ///< kernel attributes
};

/// Every kernel benchmark (GEMMs, GEMVs, the elementwise, reduction, constant and
/// data-movement kernels at three sizes), in the order calibrate() runs them; byte counts at
/// `element_bytes` an element.
std::vector<KernelBench> standard_benchmarks(int element_bytes);

/// The benchmarks of `all` that a calibration of `kernels` (CalibrationOptions::kernels) runs:
/// every one when `kernels` is empty, else the GEMMs and GEMVs and each named kernel's, or its
/// measured kernel's (kernels_priced_like()). InputError naming a kernel the engine lacks.
std::vector<KernelBench> select_benchmarks(std::vector<KernelBench> all,
                                           const std::vector<std::string>& kernels);

/// Times one kernel benchmark with every device busy: per device its span over its op count, the
/// median over devices and runs (`seconds`) and each device's median (`device_seconds`).
KernelSample run_kernel_bench(const KernelBench& kb, const CalibrationOptions& o);

/// The engine's own cost per op (seconds): chains of empty ops on every device.
double engine_overhead(const CalibrationOptions& o);

/// The graph's own ops, round-robin over P devices in topological order: one "graph op" sample
/// per node (its median duration).
std::vector<KernelSample> graph_samples(const Graph& g, const CalibrationOptions& o);

/// One round of the device-speed benchmark, appended to c.device_slowdown_rounds,
/// c.device_gemm_seconds_rounds, c.device_gemm_alone_rounds and c.contention_rounds.
void device_slowdown_round(const CalibrationOptions& o, Calibration& c);

/// Blocks per device, and f32 elements per block, of the copies-on-busy-cores benchmark.
inline constexpr int kShareCopies = 8;
inline constexpr std::int64_t kShareElems = 262144;

/// Single copies of 4 KB to 8 MB between devices: one sample per size (median latency).
std::vector<CopySample> copy_samples(const CalibrationOptions& o);

/// Median span of a burst of kCopyBurst 4 KB copies per device, first producer's finish to the
/// last consumer's ready time (seconds).
double copy_burst_span(const CalibrationOptions& o);

/// Copies on busy cores: sets c.share_basis, share_kept, share_sent, copy_share_measured and
/// copy_share (needs the fitted link model: c.latency and c.bandwidth).
void measure_copy_share(const CalibrationOptions& o, Calibration& c);

/// Least squares y = a + b x (weights w), a >= 0 (else the line through the origin); {a, b}.
std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y,
                                   const std::vector<double>& w);

/// Link model: c.latency, c.delay and c.bandwidth from c.copies and c.burst_span.
void fit_link_model(Calibration& c);

/// A GEMM benchmark measured in passes (`first` and `later`) as one sample: seconds and each
/// device's seconds are the medians over the passes, pass_seconds each pass's.
void merge_passes(KernelSample& first, const std::vector<KernelSample>& later);

/// Devices of different speeds (c.device_slowdown beyond the noise): every benchmarked kernel
/// takes the fastest device's time.
void use_fastest_device(Calibration& c);

/// Device model: c.peak_flops, c.launch_overhead, c.kernel_costs (from `graph_ops`, the graph's
/// own samples, where given, else the microbenchmarks) and c.fit.
void fit_device_model(Calibration& c, const std::vector<KernelSample>& graph_ops,
                      const CalibrationOptions& o);

/// The kernels a calibration of every kernel prices (its benchmarks' and kernels_priced_like()'s)
/// that c.kernel_costs lacks, sorted.
std::vector<std::string> left_out_kernels(const Calibration& c);

/// Sets c.contention and prices every kernel alone: the busy-device costs x (1 - contention).
void price_alone(Calibration& c);

}  // namespace doppler::calibrate_detail
