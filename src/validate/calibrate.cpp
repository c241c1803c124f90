// doppler calibrate: benchmarks run through the engine itself (P devices busy at once), then
// least-squares fits of the simulator's device and link models. This file runs the steps in
// order; the benchmarks are in calibrate_bench.cpp and calibrate_copies.cpp, the fits in
// calibrate_fit.cpp, the profile document in calibrate_output.cpp.
#include <algorithm>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "calibrate_detail.hpp"

#include "doppler/util/error.hpp"

namespace doppler {

namespace {

using namespace calibrate_detail;
using ProgressFn = std::function<void(int, int, const std::string&)>;

void check_options(const CalibrationOptions& o) {
  if (o.devices < 1 || o.devices > kMaxDevices)
    throw InputError(fmt::format("calibrate: device count must be in 1..{}", kMaxDevices));
  if (o.repeat < 1) throw InputError("calibrate: repeat must be >= 1");
  if (o.element_bytes != 2 && o.element_bytes != 4)
    throw InputError("calibrate: element_bytes must be 2 (bf16) or 4 (f32)");
  if (o.topology != "switch" && o.topology != "all-to-all")
    throw InputError("calibrate: topology must be switch or all-to-all");
}

// The kernel benchmarks and their GEMM passes, with the progress of every step.
class BenchRun {
public:
  BenchRun(const CalibrationOptions& o, const ProgressFn& progress)
      : o_(o),
        progress_(progress),
        benches_(select_benchmarks(standard_benchmarks(o.element_bytes), o.kernels)),
        later_(benches_.size()) {
    steps_ = static_cast<int>(benches_.size()) + 3 + kDeviceSpeedRounds + (kGemmPasses - 1) +
             (o.graph ? 1 : 0);
  }

  // Reports the next step, `what`.
  void tick(const std::string& what) {
    if (progress_) progress_(step_, steps_, what);
    ++step_;
  }

  // The kernels whose benchmarks run (sorted), or none when every benchmark runs.
  std::vector<std::string> benchmarked() const {
    if (o_.kernels.empty()) return {};
    std::set<std::string> ks;
    for (const KernelBench& kb : benches_) ks.insert(kb.kernel);
    return {ks.begin(), ks.end()};
  }

  // Every kernel benchmark once (the GEMMs' first pass), appended to c.kernels.
  void kernels(Calibration& c) {
    for (const KernelBench& kb : benches_) {
      tick(kb.what);
      c.kernels.push_back(run_kernel_bench(kb, o_));
    }
  }

  // A later pass of the GEMM benchmarks (pass 2..kGemmPasses).
  void gemm_pass(int pass) {
    tick(fmt::format("GEMMs (pass {} of {})", pass, kGemmPasses));
    for (std::size_t i = 0; i < benches_.size(); ++i)
      if (benches_[i].kind == "einsum") later_[i].push_back(run_kernel_bench(benches_[i], o_));
  }

  // The GEMMs' passes merged into their samples in c.kernels (kernels() put them first).
  void merge_passes(Calibration& c) const {
    for (std::size_t i = 0; i < benches_.size(); ++i)
      if (!later_[i].empty()) calibrate_detail::merge_passes(c.kernels[i], later_[i]);
  }

private:
  const CalibrationOptions& o_;
  const ProgressFn& progress_;
  const std::vector<KernelBench> benches_;
  std::vector<std::vector<KernelSample>> later_;  // per benchmark: its later passes
  int steps_ = 0, step_ = 0;
};

// The copy benchmarks the link model is fitted to: single copies per size and the burst.
void measure_copies(const CalibrationOptions& o, BenchRun& run, Calibration& c) {
  run.tick("copies");
  c.copies = copy_samples(o);
  c.burst_span = copy_burst_span(o);
}

// The graph's own ops (CalibrationOptions::graph), appended to c.kernels; empty without one.
std::vector<KernelSample> measure_graph(const CalibrationOptions& o, BenchRun& run,
                                        Calibration& c) {
  if (!o.graph) return {};
  run.tick("graph " + o.graph->meta().name);
  std::vector<KernelSample> own = graph_samples(*o.graph, o);
  c.kernels.insert(c.kernels.end(), own.begin(), own.end());
  return own;
}

}  // namespace

Calibration calibrate(const CalibrationOptions& o, const ProgressFn& progress) {
  check_options(o);
  Calibration c;
  c.devices = o.devices;
  c.element_bytes = o.element_bytes;
  c.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.link = o.link.label();
  c.copy_mode = copy_mode_name(o.copies);
  BenchRun run(o, progress);
  c.benchmarked = run.benchmarked();
  run.tick("device speeds (1)");  // rounds at the start, after the copies and at the end
  device_slowdown_round(o, c);
  run.tick("engine overhead");
  c.engine_overhead = engine_overhead(o);
  run.kernels(c);
  // The GEMM passes: the first with the kernels above, then after the other kernels, after the
  // second device-speed round, after the copies on busy cores and after the third round.
  static_assert(kGemmPasses == 5, "calibrate() runs gemm_pass(2) to gemm_pass(5) below");
  run.gemm_pass(2);
  measure_copies(o, run, c);
  run.tick("device speeds (2)");  // after the copies: its full load would disturb their latencies
  device_slowdown_round(o, c);
  run.gemm_pass(3);
  const std::vector<KernelSample> fit_on = measure_graph(o, run, c);
  fit_link_model(c);
  run.tick("copies on busy cores");
  measure_copy_share(o, c);
  run.gemm_pass(4);
  run.tick("device speeds (3)");
  device_slowdown_round(o, c);
  run.gemm_pass(5);
  run.merge_passes(c);
  c.device_slowdown = persistent_slowdown(c.device_slowdown_rounds);
  use_fastest_device(c);
  fit_device_model(c, fit_on, o);
  price_alone(c);
  if (!o.kernels.empty()) c.left_out = left_out_kernels(c);
  return c;
}

}  // namespace doppler
