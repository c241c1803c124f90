// doppler calibrate's fits: the simulator's device model (peak FLOP/s, per-op overhead, one cost
// per kernel, device slowdowns, contention) and link model (latency, delay, bandwidth) from the
// benchmarks' samples.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate_detail.hpp"

namespace doppler {

namespace calibrate_detail {

// Least squares y = a + b x (weights w); returns {a, b}.
std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y,
                                   const std::vector<double>& w) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sw += w[i], sx += w[i] * x[i], sy += w[i] * y[i];
    sxx += w[i] * x[i] * x[i], sxy += w[i] * x[i] * y[i];
  }
  const double det = sw * sxx - sx * sx;
  if (std::abs(det) <= 0) return {0, sxx > 0 ? sxy / sxx : 0};
  const double b = (sw * sxy - sx * sy) / det;
  double a = (sy - b * sx) / sw;
  if (a < 0) return {0, sxy / sxx};  // through the origin
  return {a, b};
}

namespace {

// The measured sizes as KernelCost::points: by increasing units (samples of one size averaged),
// seconds >= 0 made non-decreasing by pooling adjacent violators (a larger op measured faster than
// a smaller one is noise: both get their mean).
std::vector<KernelPoint> kernel_points(const std::vector<double>& units,
                                       const std::vector<double>& seconds) {
  std::map<double, std::pair<double, int>> by_size;
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (units[i] <= 0) continue;
    auto& [sum, n] = by_size[units[i]];
    sum += std::max(seconds[i], 0.0), ++n;
  }
  struct Block {
    double sum;
    int n;
    std::vector<double> units;
  };
  std::vector<Block> pool;
  for (const auto& [u, sn] : by_size) {
    pool.push_back({sn.first / sn.second, 1, {u}});
    while (pool.size() > 1 &&
           pool[pool.size() - 2].sum / pool[pool.size() - 2].n > pool.back().sum / pool.back().n) {
      Block b = std::move(pool.back());
      pool.pop_back();
      pool.back().sum += b.sum, pool.back().n += b.n;
      pool.back().units.insert(pool.back().units.end(), b.units.begin(), b.units.end());
    }
  }
  std::vector<KernelPoint> out;
  for (const Block& b : pool)
    for (double u : b.units) out.push_back({u, b.sum / b.n});
  return out;
}

// The einsum's floor per byte read (KernelCost::seconds_per_input_byte): the median over the
// GEMV benchmarks of their time beyond the overhead per input byte. A graph-fitted einsum
// (--graph) keeps none: its line already prices that graph's own shapes.
void set_input_byte_floor(Calibration& c) {
  const auto it = c.kernel_costs.find("einsum");
  if (it == c.kernel_costs.end() || it->second.source != "microbenchmarks") return;
  std::vector<double> per_byte;
  for (const KernelSample& k : c.kernels)
    if (k.kind == kGemvKind && k.bytes > k.out_bytes)
      per_byte.push_back(std::max(0.0, k.seconds - c.launch_overhead) / (k.bytes - k.out_bytes));
  if (!per_byte.empty()) it->second.cost.seconds_per_input_byte = median(per_byte);
}

}  // namespace

// Devices of different speeds (a slowdown beyond the noise): every benchmarked kernel takes the
// fastest device's time, which the profile's kernel costs describe (the slowdown prices the
// others). The median over all devices mixed a core shared with another process into the kernel
// costs, and the slowdown then counted it again: with a busy loop on one of 2 cores, chainmm and
// ffnn were simulated 1.2-1.4x too long. Identical devices keep the median over all of them:
// the faster of two equal devices' medians is the luckier one (the demo on 2 MPI ranks was then
// simulated 8% shorter).
void use_fastest_device(Calibration& c) {
  const auto& s = c.device_slowdown;
  if (std::all_of(s.begin(), s.end(),
                  [](double x) { return std::abs(x - 1) <= kDeviceSlowdownNoise; }))
    return;
  const auto fastest = static_cast<std::size_t>(std::min_element(s.begin(), s.end()) - s.begin());
  for (KernelSample& k : c.kernels)
    if (fastest < k.device_seconds.size()) k.seconds = k.device_seconds[fastest];
}

// A GEMM benchmark measured in passes (`first` and `later`) as one sample: seconds and each
// device's seconds are the medians over the passes, pass_seconds each pass's.
void merge_passes(KernelSample& first, const std::vector<KernelSample>& later) {
  first.pass_seconds = {first.seconds};
  for (const KernelSample& k : later) first.pass_seconds.push_back(k.seconds);
  first.seconds = median(first.pass_seconds);
  for (std::size_t d = 0; d < first.device_seconds.size(); ++d) {
    std::vector<double> per_pass = {first.device_seconds[d]};
    for (const KernelSample& k : later) per_pass.push_back(k.device_seconds.at(d));
    first.device_seconds[d] = median(per_pass);
  }
}

// Prices every kernel alone (Calibration::contention): the benchmarks ran with every device
// busy, which the simulator's contention adds back. The per-op overhead (the engine's hand-off)
// stays as measured.
void price_alone(Calibration& c) {
  c.contention = persistent_contention(c.contention_rounds);
  const double f = 1 - c.contention;
  c.peak_flops /= f;
  for (auto& [name, k] : c.kernel_costs) {
    KernelCost& cost = k.cost;
    cost.seconds_per_op *= f, cost.seconds_per_flop *= f, cost.seconds_per_byte *= f;
    cost.seconds_per_input_byte *= f;
    for (KernelPoint& pt : cost.points) pt.seconds *= f;
  }
}

// Prices each kernel of kernels_priced_like() that has no cost of its own like its measured
// kernel; its source says which ("like sin").
void price_like_measured(Calibration& c) {
  for (const auto& [kernel, measured] : kernels_priced_like()) {
    const auto it = c.kernel_costs.find(measured);
    if (it == c.kernel_costs.end() || c.kernel_costs.count(kernel)) continue;
    FittedKernel f = it->second;
    f.source = "like " + measured;
    c.kernel_costs[kernel] = std::move(f);
  }
}

// Device model: peak FLOP/s from the einsum benchmarks (the fallback for kernels without a
// fitted cost), the engine's hand-off cost as the per-op overhead, then one cost per kernel:
// from the graph's own ops where given, else from the microbenchmarks.
void fit_device_model(Calibration& c, const std::vector<KernelSample>& graph_ops,
                      const CalibrationOptions& o) {
  std::vector<double> x, y, w;
  for (const KernelSample& k : c.kernels)
    if (k.kind == "einsum")
      x.push_back(k.flops), y.push_back(k.seconds), w.push_back(1 / (k.seconds * k.seconds));
  const double spf = fit_line(x, y, w).second;
  c.peak_flops = spf > 0 ? 1 / spf : 1e10;
  c.launch_overhead = c.engine_overhead;
  std::map<std::string, std::vector<const KernelSample*>> bench, own;
  for (const KernelSample& k : c.kernels)
    if (!k.kernel.empty() && k.kind != kGemvKind)
      (k.kind == "graph op" ? own : bench)[k.kernel].push_back(&k);
  for (const auto& [name, s] : bench)
    c.kernel_costs[name] = fit_kernel(s, c.launch_overhead, false);
  for (const auto& [name, s] : own) c.kernel_costs[name] = fit_kernel(s, c.launch_overhead, true);
  if (!o.graph) price_like_measured(c);
  set_input_byte_floor(c);
  c.fit = fmt::format(
      "per kernel: op time = overhead + the measured time at its FLOPs (or output bytes), "
      "linear between the measured sizes and at the largest size's rate beyond it (the line "
      "a fixed cost + units x a cost per unit, fitted by relative least squares, is kept beside "
      "it; graph-fitted kernels have the line alone), {} kernels{}; "
      "other kernels: overhead + FLOPs / peak, peak by relative least squares over the einsum "
      "benchmarks; overhead: the engine's hand-off cost{}",
      c.kernel_costs.size(),
      o.graph ? fmt::format(" ({} from the {} ops of graph '{}', run round-robin on {} devices)",
                            own.size(), graph_ops.size(), o.graph->meta().name, o.devices)
              : " (microbenchmarks)",
      c.benchmarked.empty()
          ? ""
          : fmt::format("; benchmarked: {} (--kernels)", fmt::join(c.benchmarked, ", ")));
}

// Link model: latency + bytes / bandwidth by relative least squares over the single copies, the
// latency then split into its occupied and pipelined parts.
void fit_link_model(Calibration& c) {
  std::vector<double> x, y, w;
  for (const CopySample& s : c.copies)
    x.push_back(s.bytes), y.push_back(s.seconds), w.push_back(1 / (s.seconds * s.seconds));
  const auto [lat, spb] = fit_line(x, y, w);
  c.latency = std::max(lat, 0.0);
  c.bandwidth = spb > 0 ? 1 / spb : 1e12;
  split_copy_latency(c);
}

}  // namespace calibrate_detail

// Kernels left out of the microbenchmarks because a measured one of the same work prices them:
// the other trigonometric and hyperbolic functions like sin (a libm call an element each),
// selu and celu like elu (an expm1), fmod like mod (an fmod), the one-instruction unary ones
// like abs and the compare-and-pick binary ones like maximum (memory-bound, a read and a write
// an element), gather_along like gather (an indexed read per output element). Each benchmark runs
// at three sizes in every calibration, the tests' included.
const std::vector<std::pair<std::string, std::string>>& kernels_priced_like() {
  static const std::vector<std::pair<std::string, std::string>> like = {
      {"cos", "sin"},   {"tan", "sin"},         {"asin", "sin"},       {"acos", "sin"},
      {"atan", "sin"},  {"sinh", "sin"},        {"cosh", "sin"},       {"selu", "elu"},
      {"celu", "elu"},  {"fmod", "mod"},        {"floor", "abs"},      {"ceil", "abs"},
      {"round", "abs"}, {"sign", "abs"},        {"reciprocal", "abs"}, {"isnan", "abs"},
      {"isinf", "abs"}, {"minimum", "maximum"}, {"prelu", "maximum"},  {"gather_along", "gather"}};
  return like;
}

using calibrate_detail::fit_line;
using calibrate_detail::kernel_points;
using calibrate_detail::median;

// Cost of one kernel beyond the per-op overhead `lo`, per unit (FLOP, or output byte when the
// kernel has no FLOPs). Microbenchmarks: relative least squares of lo + a + c x against t over
// the sizes (a >= 0: the kernel's own fixed cost, e.g. GEMM set-up). Graph ops: total time above
// lo over total units (a = 0), so the kernel's summed time in that graph is exact.
FittedKernel fit_kernel(const std::vector<const KernelSample*>& s, double lo, bool graph) {
  bool by_flops = true;
  for (const KernelSample* k : s) by_flops = by_flops && k->flops > 0;
  double a = 0, c = 0, num = 0, den = 0;
  std::vector<double> x, y, w;
  for (const KernelSample* k : s) {
    const double t = std::max(k->seconds, 1e-12);
    x.push_back(by_flops ? k->flops : k->out_bytes), y.push_back(t - lo), w.push_back(1 / (t * t));
    num += std::max(0.0, t - lo), den += x.back();
  }
  if (graph) {
    c = den > 0 ? num / den : 0;
  } else {
    std::tie(a, c) = fit_line(x, y, w);
    if (c < 0) a = std::max(0.0, median(y)), c = 0;
  }
  FittedKernel f;
  f.cost.seconds_per_op = a;
  (by_flops ? f.cost.seconds_per_flop : f.cost.seconds_per_byte) = c;
  if (!graph) f.cost.points = kernel_points(x, y), f.cost.points_by_bytes = !by_flops;
  f.samples = static_cast<int>(s.size());
  f.source = graph ? "graph" : "microbenchmarks";
  return f;
}

std::vector<double> persistent_slowdown(const std::vector<std::vector<double>>& rounds) {
  if (rounds.empty()) return {};
  std::vector<double> s(rounds.front().size(), 1.0);
  for (std::size_t d = 0; d < s.size(); ++d) {
    std::vector<double> readings;
    for (const std::vector<double>& r : rounds) readings.push_back(d < r.size() ? r[d] : 1.0);
    const bool every_round = std::all_of(readings.begin(), readings.end(),
                                         [](double x) { return x > 1 + kDeviceSlowdownNoise; });
    if (every_round) s[d] = median(readings);
  }
  return s;
}

double persistent_contention(const std::vector<double>& rounds) {
  const bool every_round =
      !rounds.empty() &&
      std::all_of(rounds.begin(), rounds.end(), [](double x) { return x > kContentionNoise; });
  return every_round ? std::clamp(median(rounds), 0.0, kMaxContention) : 0.0;
}

double copy_share_floor(const CalibrationOptions& o, const Calibration& c) {
  if (o.link.enabled()) return 0.0;
  if (o.receiver_copies) return 1.0;
  if (o.copies != CopyMode::worker) return 0.0;
  const double move =
      static_cast<double>(c.element_bytes * calibrate_detail::kShareElems) / c.bandwidth;
  return move > 0 ? move / (c.latency + move) : 0.0;
}

void split_copy_latency(Calibration& c) {
  const double bytes = static_cast<double>(c.element_bytes * kCopyBurstElems);
  const auto single = std::find_if(c.copies.begin(), c.copies.end(),
                                   [&](const CopySample& s) { return s.bytes == bytes; });
  if (single == c.copies.end() || c.burst_span <= 0) return;
  const double per_copy = (c.burst_span - single->seconds) / (kCopyBurst - 1);
  const double occupied = std::clamp(per_copy - bytes / c.bandwidth, 0.0, c.latency);
  c.delay = c.latency - occupied;
  c.latency = occupied;
}

}  // namespace doppler
