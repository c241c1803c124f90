// doppler calibrate's benchmarks of kernels and device speeds: graphs of independent ops run
// through the engine itself, P devices busy at once (docs/engine.md, calibration).
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "calibrate_detail.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/kernels.hpp"

namespace doppler::calibrate_detail {

std::unique_ptr<EngineRunner> make_engine(const CalibrationOptions& o, const Graph& g,
                                          const EngineOptions& eo) {
  return o.engines ? o.engines(g, eo) : local_engine_factory()(g, eo);
}

EngineOptions benchmark_engine(const CalibrationOptions& o, int devices) {
  EngineOptions eo;
  eo.devices = devices;
  eo.pin_threads = o.pin_threads;
  eo.copies = o.copies;
  return eo;
}

double median(std::vector<double> x) {
  if (x.empty()) return 0;
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

std::int64_t count(const Shape& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

NodeId BenchGraph::input(const Shape& shape) {
  Node n;
  n.kind = OpKind::input;
  n.name = fmt::format("in{}", b_.num_nodes());
  n.out_bytes = element_bytes_ * static_cast<double>(count(shape));
  ExecDesc e;
  e.op = "input";
  e.shape = shape;
  e.origin.assign(shape.size(), 0);
  e.attrs = {{"seed", static_cast<double>(b_.num_nodes() + 1)}, {"scale", 0.5}};
  n.exec = std::move(e);
  return b_.add_node(std::move(n));
}

NodeId BenchGraph::op(const std::string& kernel, const Shape& shape,
                      const std::vector<NodeId>& srcs, double flops, const std::string& spec,
                      const std::vector<std::pair<std::string, double>>& attrs) {
  Node n;
  n.kind = workloads::find_kernel(kernel)->kind;
  n.name = fmt::format("{}{}", kernel, b_.num_nodes());
  n.flops = flops;
  n.out_bytes = element_bytes_ * static_cast<double>(count(shape));
  ExecDesc e;
  e.op = kernel;
  e.shape = shape;
  e.origin.assign(shape.size(), 0);
  e.einsum = spec;
  e.attrs = attrs;
  for (NodeId s : srcs) e.inputs.push_back({s, {}, {}});
  n.exec = std::move(e);
  const NodeId v = b_.add_node(std::move(n));
  for (NodeId s : srcs) b_.add_edge(s, v);
  return v;
}

void BenchGraph::place(NodeId v, DeviceId d) {
  if (device_of_.size() <= static_cast<std::size_t>(v))
    device_of_.resize(static_cast<std::size_t>(v) + 1);
  device_of_[static_cast<std::size_t>(v)] = d;
}

Graph BenchGraph::build() {
  return b_.build();
}

Assignment BenchGraph::assignment(int devices) const {
  Assignment a;
  a.devices = devices;
  a.device_of = device_of_;
  return a;
}

namespace {

// Every elementwise, aggregate, reduction, constant and copy kernel of the engine on n elements
// (n / 256 rows of 256; reductions keep one column), with the FLOPs docs/exec.md charges.
std::vector<KernelBench> elementwise_benchmarks(std::int64_t n, int element_bytes) {
  // Priced like a measured kernel of the same work instead (calibrate_fit.cpp:
  // price_like_measured): cos .. cosh like sin, selu and celu like elu, fmod like mod, floor,
  // ceil, round, sign, reciprocal, isnan and isinf like abs, minimum and prelu like maximum,
  // gather_along like gather (kernels_priced_like()).
  static const char* unary[] = {"relu",      "exp",        "silu",     "scale",    "rsqrt",
                                "sqrt",      "sigmoid",    "tanh",     "erf",      "gelu",
                                "neg",       "pow",        "identity", "clip",     "hardsigmoid",
                                "hardswish", "leaky_relu", "elu",      "softplus", "abs",
                                "log",       "not",        "cumsum",   "rotary",   "sin"};
  static const char* binary[] = {"add",       "sub",        "mul",           "div",  "relu_grad",
                                 "silu_grad", "rsqrt_grad", "sumsq_grad",    "less", "greater",
                                 "equal",     "less_equal", "greater_equal", "and",  "or",
                                 "xor",       "maximum",    "power",         "mod"};
  static const char* reductions[] = {"reduce_sum", "reduce_max", "reduce_sumsq", "reduce_argmax",
                                     "topk"};  // topk of 1: k = the output's last extent
  static const char* aggregates[] = {"sum", "max"};
  static const char* constants[] = {"input", "fill"};
  // Copies of a block (one whole piece): priced by output bytes. Left out, the demo's re-blocking
  // ops (assemble, 256 KB) were priced at the hand-off overhead alone and ran 24-28 us.
  static const char* movers[] = {"assemble", "select", "reshape", "stride"};
  const Shape rows = {n / 256, 256};
  const double e = static_cast<double>(n), eb = element_bytes;
  const auto fpe = [](const char* k) { return workloads::find_kernel(k)->flops_per_element; };
  std::vector<KernelBench> b;
  const auto what = [&](const char* k) { return fmt::format("{} {}", k, n); };
  for (const char* k : unary) {
    KernelBench kb{"elementwise", what(k), k, "", {rows}, rows, fpe(k) * e, 2 * eb * e};
    if (std::string_view(k) == "rotary")
      kb.attrs = {{"pos_axis", 0}, {"theta", 10000}, {"head_dim", 256}};
    b.push_back(std::move(kb));
  }
  for (const char* k : binary)
    b.push_back({"elementwise", what(k), k, "", {rows, rows}, rows, fpe(k) * e, 3 * eb * e});
  b.push_back({"elementwise",
               what("where"),
               "where",
               "",
               {rows, rows, rows},
               rows,
               fpe("where") * e,
               4 * eb * e});
  // Fused recurrent steps of rows of 256 units: gates [rows, 4 x 256] (LSTM) or x and h R^T
  // [rows, 3 x 256] (GRU, no Rb_n: 16 FLOPs an element), with the state [rows, 256].
  const Shape units = {n / 256, 256}, lstm = {n / 256, 1024}, gru = {n / 256, 768};
  for (const char* k : {"lstm_cell", "lstm_hidden"})
    b.push_back({"elementwise", what(k), k, "", {lstm, units}, units, fpe(k) * e, 6 * eb * e});
  b.push_back({"elementwise",
               what("gru_cell"),
               "gru_cell",
               "",
               {gru, gru, units},
               units,
               16 * e,
               8 * eb * e});
  for (const char* k : reductions)
    b.push_back(
        {"reduction", what(k), k, "", {rows}, {n / 256, 1}, fpe(k) * e, eb * (e + e / 256)});
  for (const char* k : aggregates)
    b.push_back({"aggregate", what(k), k, "", {rows, rows}, rows, fpe(k) * e, 3 * eb * e});
  for (const char* k : constants) b.push_back({"constant", what(k), k, "", {}, rows, 0, eb * e});
  for (const char* k : movers) {
    KernelBench kb{"data movement", what(k), k, "", {rows}, rows, 0, 2 * eb * e};
    if (std::string_view(k) == "stride") kb.attrs = {{"axis", 1}, {"step", -1}};  // a reversal
    b.push_back(std::move(kb));
  }
  // Rows of a table at indices (the benchmark's generated indices name its first or last row).
  b.push_back({"data movement",
               what("gather"),
               "gather",
               "",
               {rows, {n / 256}},
               rows,
               0,
               eb * (2 * e + e / 256)});
  // A 2x nearest upsampling of 16 x 16 planes, 0 FLOPs: resize2d is priced by the bytes it
  // writes, in either mode (a linear resize moves the same bytes and adds 9 FLOPs an element).
  b.push_back({"data movement",
               what("resize2d"),
               "resize2d",
               "",
               {{1, n / 1024, 16, 16}},
               {1, n / 1024, 32, 32},
               0,
               eb * (e + e / 4),
               {{"pieces", 1},
                {"row0", 0},
                {"c0", 0},
                {"in_h", 16},
                {"in_w", 16},
                {"out_h", 32},
                {"out_w", 32},
                {"coord", 1},
                {"nearest", 2}}});
  // A column repeated across the rows (a mask expanded over its queries).
  b.push_back(
      {"data movement", what("expand"), "expand", "", {{n / 256, 1}}, rows, 0, eb * (e + e / 256)});
  b.push_back({"data movement",
               what("transpose"),
               "transpose",
               "ab->ba",
               {rows},
               {256, n / 256},
               0,
               2 * eb * e});
  return b;
}

}  // namespace

std::vector<KernelBench> standard_benchmarks(int element_bytes) {
  const double eb = element_bytes;
  std::vector<KernelBench> b;
  for (std::int64_t n : {16, 32, 64, 128, 256, 512}) {
    const double nn = static_cast<double>(n);
    b.push_back({"einsum",
                 fmt::format("ij,jk->ik {}x{}x{}", n, n, n),
                 "einsum",
                 "ij,jk->ik",
                 {{n, n}, {n, n}},
                 {n, n},
                 2 * nn * nn * nn,
                 3 * eb * nn * nn});
  }
  b.push_back({"einsum",
               "bshe,bthe->bhst 1x64x4x32",
               "einsum",
               "bshe,bthe->bhst",
               {{1, 64, 4, 32}, {1, 64, 4, 32}},
               {1, 4, 64, 64},
               2.0 * 64 * 64 * 4 * 32,
               eb * (2 * 64 * 4 * 32 + 4 * 64 * 64)});
  // GEMVs: a 1 x n row by an n x n block, 2 FLOPs per weight element, bound by the bytes read
  // (the demo's logits, 1 x 128 by 128 x 512, ran 22-26 us, priced 2 us by their FLOPs).
  for (std::int64_t n : {256, 512, 1024}) {
    const double nn = static_cast<double>(n);
    b.push_back({kGemvKind,
                 fmt::format("ij,jk->ik 1x{}x{}", n, n),
                 "einsum",
                 "ij,jk->ik",
                 {{1, n}, {n, n}},
                 {1, n},
                 2 * nn * nn,
                 eb * (nn * nn + 2 * nn)});
  }
  for (std::int64_t n : {4096, 32768, 262144})
    for (const KernelBench& k : elementwise_benchmarks(n, element_bytes)) b.push_back(k);
  return b;
}

std::vector<std::string> left_out_kernels(const Calibration& c) {
  std::set<std::string> all;
  for (const KernelBench& kb : standard_benchmarks(c.element_bytes)) all.insert(kb.kernel);
  for (const auto& [kernel, measured] : kernels_priced_like()) all.insert(kernel);
  std::vector<std::string> out;
  for (const std::string& k : all)
    if (!c.kernel_costs.count(k)) out.push_back(k);
  return out;
}

std::vector<KernelBench> select_benchmarks(std::vector<KernelBench> all,
                                           const std::vector<std::string>& kernels) {
  if (kernels.empty()) return all;
  std::set<std::string> keep = {"einsum"};
  for (const std::string& k : kernels) {
    if (!workloads::find_kernel(k))
      throw InputError(
          fmt::format("calibrate: '{}' is no engine kernel (docs/exec.md lists them)", k));
    keep.insert(k);
    for (const auto& [kernel, measured] : kernels_priced_like())
      if (kernel == k) keep.insert(measured);
  }
  std::erase_if(all, [&](const KernelBench& b) { return !keep.count(b.kernel); });
  return all;
}

// Per device: its first timed op's start to its last timed op's finish in `s` (seconds).
std::vector<double> device_spans(const Schedule& s, const std::vector<NodeId>& timed, int devices) {
  std::vector<double> first(static_cast<std::size_t>(devices), 1e300), last(first.size(), 0);
  for (NodeId v : timed) {
    const auto d = static_cast<std::size_t>(s.device[static_cast<std::size_t>(v)]);
    first[d] = std::min(first[d], s.start[static_cast<std::size_t>(v)]);
    last[d] = std::max(last[d], s.finish[static_cast<std::size_t>(v)]);
  }
  std::vector<double> span;
  for (std::size_t d = 0; d < first.size(); ++d) span.push_back(last[d] - first[d]);
  return span;
}

// Effective time per op with every device busy: per device, the span from its first op's start
// to its last op's finish divided by its op count (so time-slicing of shared cores and memory
// contention count); the median over devices and runs, and each device's median over runs
// (use_fastest_device() picks one when the devices differ).
KernelSample run_kernel_bench(const KernelBench& kb, const CalibrationOptions& o) {
  const int reps = static_cast<int>(std::clamp(6e7 / std::max(kb.flops, kb.bytes), 8.0, 64.0));
  BenchGraph bg(o.element_bytes);
  std::vector<NodeId> timed;
  for (DeviceId d = 0; d < o.devices; ++d)
    for (int r = 0; r < reps; ++r) {
      std::vector<NodeId> ins;  // its own operands, as in a dataflow graph (not cache-hot)
      for (const Shape& s : kb.inputs) {
        ins.push_back(bg.input(s));
        bg.place(ins.back(), d);
      }
      timed.push_back(bg.op(kb.kernel, kb.out, ins, kb.flops, kb.spec, kb.attrs));
      bg.place(timed.back(), d);
    }
  const Graph g = bg.build();
  EngineOptions eo = benchmark_engine(o, o.devices);
  const auto e = make_engine(o, g, eo);
  const Assignment a = bg.assignment(o.devices);
  std::vector<std::vector<double>> per_op(static_cast<std::size_t>(o.devices));
  e->run(a, DispatchRule::fifo);  // warm-up
  for (int r = 0; r < o.repeat; ++r) {
    const Schedule s = e->run(a, DispatchRule::fifo).schedule;
    const std::vector<double> spans = device_spans(s, timed, o.devices);
    for (std::size_t d = 0; d < spans.size(); ++d) per_op[d].push_back(spans[d] / reps);
  }
  KernelSample k{kb.kind,  kb.kernel, kb.what,
                 kb.flops, kb.bytes,  static_cast<double>(o.element_bytes * count(kb.out)),
                 0,        {},        {}};
  std::vector<double> all;
  for (const auto& t : per_op) {
    k.device_seconds.push_back(median(t));
    all.insert(all.end(), t.begin(), t.end());
  }
  k.seconds = median(all);
  return k;
}

double engine_overhead(const CalibrationOptions& o) {
  BenchGraph bg(o.element_bytes);
  const int chain = 256;
  for (DeviceId d = 0; d < o.devices; ++d) {
    NodeId prev = bg.input({1});
    bg.place(prev, d);
    for (int i = 0; i < chain; ++i) {
      prev = bg.op("scale", {1}, {prev}, 1);
      bg.place(prev, d);
    }
  }
  const Graph g = bg.build();
  EngineOptions eo = benchmark_engine(o, o.devices);
  eo.kernels = KernelMode::empty;
  const auto e = make_engine(o, g, eo);
  const Assignment a = bg.assignment(o.devices);
  e->run(a, DispatchRule::fifo);  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < o.repeat; ++r) ms.push_back(e->run(a, DispatchRule::fifo).makespan_seconds);
  return median(ms) / (chain + 1);
}

namespace {

// Per-op durations (seconds) of the ops of `a` selected by `want`, over `repeat` runs.
std::vector<std::vector<double>> op_times(EngineRunner& e, const Assignment& a, int repeat,
                                          const std::vector<char>& want) {
  std::vector<std::vector<double>> t(want.size());
  e.run(a, DispatchRule::fifo);  // warm-up
  for (int r = 0; r < repeat; ++r) {
    const EngineResult res = e.run(a, DispatchRule::fifo);
    for (std::size_t v = 0; v < want.size(); ++v)
      if (want[v]) t[v].push_back(res.schedule.finish[v] - res.schedule.start[v]);
  }
  return t;
}

}  // namespace

// The graph's own ops, round-robin over P devices in topological order.
std::vector<KernelSample> graph_samples(const Graph& g, const CalibrationOptions& o) {
  Assignment a;
  a.devices = o.devices;
  a.device_of.assign(static_cast<std::size_t>(g.num_nodes()), 0);
  int i = 0;
  for (NodeId v : g.topo_order()) a.device_of[static_cast<std::size_t>(v)] = i++ % o.devices;
  EngineOptions eo = benchmark_engine(o, o.devices);
  eo.link = o.link;
  const auto e = make_engine(o, g, eo);
  std::vector<char> want(static_cast<std::size_t>(g.num_nodes()), 1);
  const auto t = op_times(*e, a, o.repeat, want);
  std::vector<KernelSample> out;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    out.push_back({"graph op",
                   g.node(v).exec ? g.node(v).exec->op : "",
                   g.label(v),
                   g.node(v).flops,
                   g.node(v).out_bytes,
                   g.node(v).out_bytes,
                   median(t[static_cast<std::size_t>(v)]),
                   {},
                   {}});
  return out;
}

namespace {

// The device-speed benchmark's graph: `reps` 256 x 256 x 256 GEMMs on each device of `on`, all
// reading one input block of their device; `timed` receives the GEMMs.
Graph gemm_round_graph(const std::vector<DeviceId>& on, int reps, BenchGraph& bg,
                       std::vector<NodeId>& timed) {
  const std::int64_t n = 256;
  for (const DeviceId d : on) {
    const NodeId x = bg.input({n, n});
    bg.place(x, d);
    for (int r = 0; r < reps; ++r) {
      timed.push_back(bg.op("einsum", {n, n}, {x, x}, 2.0 * n * n * n, "ij,jk->ik"));
      bg.place(timed.back(), d);
    }
  }
  return bg.build();
}

// Per device of `on`: the median over runs (after a warm-up) of the span of its GEMMs, seconds.
std::vector<double> gemm_round_spans(const CalibrationOptions& o, const std::vector<DeviceId>& on,
                                     int reps) {
  BenchGraph bg(o.element_bytes);
  std::vector<NodeId> timed;
  const Graph g = gemm_round_graph(on, reps, bg, timed);
  const auto e = make_engine(o, g, benchmark_engine(o, o.devices));
  const Assignment a = bg.assignment(o.devices);
  std::vector<std::vector<double>> spans(static_cast<std::size_t>(o.devices));
  e->run(a, DispatchRule::fifo);  // warm-up
  for (int r = 0; r < std::max(2, o.repeat / 3); ++r) {
    const Schedule s = e->run(a, DispatchRule::fifo).schedule;
    const std::vector<double> span = device_spans(s, timed, o.devices);
    for (std::size_t d = 0; d < spans.size(); ++d) spans[d].push_back(span[d]);
  }
  std::vector<double> med;
  for (const DeviceId d : on) med.push_back(median(spans[static_cast<std::size_t>(d)]));
  return med;
}

}  // namespace

// One round of the device-speed benchmark, appended to c.device_slowdown_rounds,
// c.device_gemm_seconds_rounds, c.device_gemm_alone_rounds and c.contention_rounds. Per device:
// the median over runs of the span of 384 GEMMs of 256 x 256 x 256 (~0.1-0.3 s per device,
// every device busy) over the fastest device's, and per GEMM in seconds; then each device's
// GEMMs alone (the others idle), and the time lost to the others' compute. The kernel
// benchmarks are short bursts that a shared core runs at full speed, so the fastest device is
// the one they describe.
void device_slowdown_round(const CalibrationOptions& o, Calibration& c) {
  const int reps = 384;
  std::vector<DeviceId> all;
  for (DeviceId d = 0; d < o.devices; ++d) all.push_back(d);
  const std::vector<double> med = gemm_round_spans(o, all, reps);
  std::vector<double> per_gemm, alone;
  for (double m : med) per_gemm.push_back(m / reps);
  for (DeviceId d = 0; d < o.devices && o.devices > 1; ++d)
    alone.push_back(gemm_round_spans(o, {d}, reps).front() / reps);
  const double fastest = *std::min_element(med.begin(), med.end());
  std::vector<double> out;
  for (double m : med) out.push_back(fastest > 0 ? m / fastest : 1.0);
  c.device_slowdown_rounds.push_back(std::move(out));
  const double busy = median(per_gemm);
  c.contention_rounds.push_back(alone.empty() || busy <= 0 ? 0.0 : 1 - median(alone) / busy);
  c.device_gemm_seconds_rounds.push_back(std::move(per_gemm));
  c.device_gemm_alone_rounds.push_back(std::move(alone));
}

}  // namespace doppler::calibrate_detail

namespace doppler {

std::vector<std::string> graph_kernels(const Graph& g) {
  std::set<std::string> ks;
  for (const Node& n : g.nodes())
    if (n.exec) ks.insert(n.exec->op);
  return {ks.begin(), ks.end()};
}

}  // namespace doppler
