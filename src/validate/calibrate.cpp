// doppler calibrate: benchmarks run through the engine itself (P devices busy at once), then
// least-squares fits of the simulator's device and link models.
#include "doppler/validate/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "doppler/engine/engine.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/kernels.hpp"

namespace doppler {

namespace {

// The engine settings every calibration benchmark shares: `devices` devices, pinning and copy
// mode as asked.
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

using Shape = std::vector<std::int64_t>;

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

// Builds benchmark graphs: input blocks and ops with exec descriptions.
class BenchGraph {
public:
  NodeId input(const Shape& shape) {
    Node n;
    n.kind = OpKind::input;
    n.name = fmt::format("in{}", b_.num_nodes());
    n.out_bytes = 4.0 * static_cast<double>(count(shape));
    ExecDesc e;
    e.op = "input";
    e.shape = shape;
    e.origin.assign(shape.size(), 0);
    e.attrs = {{"seed", static_cast<double>(b_.num_nodes() + 1)}, {"scale", 0.5}};
    n.exec = std::move(e);
    return b_.add_node(std::move(n));
  }
  NodeId op(const std::string& kernel, const Shape& shape, const std::vector<NodeId>& srcs,
            double flops, const std::string& spec = "",
            const std::vector<std::pair<std::string, double>>& attrs = {}) {
    Node n;
    n.kind = workloads::find_kernel(kernel)->kind;
    n.name = fmt::format("{}{}", kernel, b_.num_nodes());
    n.flops = flops;
    n.out_bytes = 4.0 * static_cast<double>(count(shape));
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
  // Records that node v runs on device d.
  void place(NodeId v, DeviceId d) {
    if (device_of_.size() <= static_cast<std::size_t>(v))
      device_of_.resize(static_cast<std::size_t>(v) + 1);
    device_of_[static_cast<std::size_t>(v)] = d;
  }
  Graph build() { return b_.build(); }
  Assignment assignment(int devices) const {
    Assignment a;
    a.devices = devices;
    a.device_of = device_of_;
    return a;
  }

private:
  GraphBuilder b_;
  std::vector<DeviceId> device_of_;
};

// Kind of the GEMV benchmarks: einsums priced by the bytes they read, kept out of the einsum's
// FLOPs points and of the peak (set_input_byte_floor).
constexpr const char* kGemvKind = "einsum gemv";

// One kernel benchmark: `reps` independent ops per device reading the same inputs.
struct KernelBench {
  std::string kind, what, kernel, spec;
  std::vector<Shape> inputs;
  Shape out;
  double flops, bytes;
  std::vector<std::pair<std::string, double>> attrs = {};
};

// Every elementwise, aggregate, reduction, constant and copy kernel of the engine on n elements
// (n / 256 rows of 256; reductions keep one column), with the FLOPs docs/exec.md charges.
std::vector<KernelBench> elementwise_benchmarks(std::int64_t n) {
  static const char* unary[] = {"relu",     "exp",  "silu",        "scale",     "rsqrt", "sqrt",
                                "sigmoid",  "tanh", "erf",         "gelu",      "neg",   "pow",
                                "identity", "clip", "hardsigmoid", "hardswish", "rotary"};
  static const char* binary[] = {"add",       "sub",       "mul",        "div",
                                 "relu_grad", "silu_grad", "rsqrt_grad", "sumsq_grad"};
  static const char* reductions[] = {"reduce_sum", "reduce_max", "reduce_sumsq"};
  static const char* aggregates[] = {"sum", "max"};
  static const char* constants[] = {"input", "fill"};
  // Copies of a block (one whole piece): priced by output bytes. Left out, the demo's re-blocking
  // ops (assemble, 256 KB) were priced at the hand-off overhead alone and ran 24-28 us.
  static const char* movers[] = {"assemble", "select", "reshape"};
  const Shape rows = {n / 256, 256};
  const double e = static_cast<double>(n);
  const auto fpe = [](const char* k) { return workloads::find_kernel(k)->flops_per_element; };
  std::vector<KernelBench> b;
  const auto what = [&](const char* k) { return fmt::format("{} {}", k, n); };
  for (const char* k : unary) {
    KernelBench kb{"elementwise", what(k), k, "", {rows}, rows, fpe(k) * e, 8 * e};
    if (std::string_view(k) == "rotary")
      kb.attrs = {{"pos_axis", 0}, {"theta", 10000}, {"head_dim", 256}};
    b.push_back(std::move(kb));
  }
  for (const char* k : binary)
    b.push_back({"elementwise", what(k), k, "", {rows, rows}, rows, fpe(k) * e, 12 * e});
  for (const char* k : reductions)
    b.push_back({"reduction", what(k), k, "", {rows}, {n / 256, 1}, fpe(k) * e, 4 * e + e / 64});
  for (const char* k : aggregates)
    b.push_back({"aggregate", what(k), k, "", {rows, rows}, rows, fpe(k) * e, 12 * e});
  for (const char* k : constants) b.push_back({"constant", what(k), k, "", {}, rows, 0, 4 * e});
  for (const char* k : movers)
    b.push_back({"data movement", what(k), k, "", {rows}, rows, 0, 8 * e});
  b.push_back({"data movement",
               what("transpose"),
               "transpose",
               "ab->ba",
               {rows},
               {256, n / 256},
               0,
               8 * e});
  return b;
}

std::vector<KernelBench> standard_benchmarks() {
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
                 12 * nn * nn});
  }
  b.push_back({"einsum",
               "bshe,bthe->bhst 1x64x4x32",
               "einsum",
               "bshe,bthe->bhst",
               {{1, 64, 4, 32}, {1, 64, 4, 32}},
               {1, 4, 64, 64},
               2.0 * 64 * 64 * 4 * 32,
               4.0 * (2 * 64 * 4 * 32 + 4 * 64 * 64)});
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
                 4 * (nn * nn + 2 * nn)});
  }
  for (std::int64_t n : {4096, 32768, 262144})
    for (const KernelBench& k : elementwise_benchmarks(n)) b.push_back(k);
  return b;
}

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
  BenchGraph bg;
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
                 kb.flops, kb.bytes,  4.0 * static_cast<double>(count(kb.out)),
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
  BenchGraph bg;
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

// The copy benchmarks' graph on p devices: on every device `burst` ops produce n-element blocks,
// each read by an op on the next device (these come first: the lowest ids), then `background`
// kernels per device that keep every compute worker busy (0.1 ms each).
struct CopyBench {
  BenchGraph bg;
  std::vector<std::vector<std::pair<NodeId, NodeId>>> pairs;  // per device: producer, consumer
};

CopyBench copy_bench(int p, std::int64_t n, int burst, int background) {
  CopyBench b;
  b.pairs.resize(static_cast<std::size_t>(p));
  for (DeviceId d = 0; d < p; ++d)
    for (int k = 0; k < burst; ++k) {
      const NodeId x = b.bg.input({n});
      b.bg.place(x, d);
      const NodeId prod = b.bg.op("scale", {n}, {x}, static_cast<double>(n));
      b.bg.place(prod, d);
      const NodeId cons = b.bg.op("reduce_sum", {1}, {prod}, static_cast<double>(n));
      b.bg.place(cons, (d + 1) % p);
      b.pairs[static_cast<std::size_t>(d)].emplace_back(prod, cons);
    }
  for (DeviceId d = 0; d < p; ++d)
    for (int k = 0; k < background; ++k) {
      const NodeId x = b.bg.input({262144});
      b.bg.place(x, d);
      b.bg.place(b.bg.op("scale", {262144}, {x}, 262144.0), d);
    }
  return b;
}

// A copy benchmark on its engine (p = its device count, link emulation as asked), warmed up by
// one run. Rule priority runs the ops in id order.
struct CopyRun {
  std::unique_ptr<Graph> g;  // the engine keeps a reference: a stable address
  std::unique_ptr<EngineRunner> e;
  Assignment a;
  DispatchRule rule = DispatchRule::fifo;

  Schedule run() { return e->run(a, rule).schedule; }
};

CopyRun start_copy_bench(const CalibrationOptions& o, CopyBench& b, DispatchRule rule) {
  const int p = static_cast<int>(b.pairs.size());
  CopyRun r;
  r.g = std::make_unique<Graph>(b.bg.build());
  EngineOptions eo = benchmark_engine(o, p);
  eo.link = o.link;
  r.e = make_engine(o, *r.g, eo);
  r.a = b.bg.assignment(p);
  r.rule = rule;
  if (rule == DispatchRule::priority) {
    r.a.order.resize(static_cast<std::size_t>(r.g->num_nodes()));
    std::iota(r.a.order.begin(), r.a.order.end(), 0);
  }
  r.run();  // warm-up
  return r;
}

// Runs a copy benchmark: the warm-up, then 2 x repeat measured runs, each schedule passed to
// `sample`.
void run_copy_bench(const CalibrationOptions& o, CopyBench& b, DispatchRule rule,
                    const std::function<void(const Schedule&)>& sample) {
  CopyRun r = start_copy_bench(o, b, rule);
  for (int k = 0; k < 2 * o.repeat; ++k) sample(r.run());
}

// Background kernels per device of the copy latency benchmarks. With a copy worker beside the
// compute worker (threads backend), busy devices: the copy worker's wake-up and its share of a
// busy core belong to every copy. With receiver copies (MPI ranks), none: a busy receiver takes
// delivery at its next op boundary, and that wait is its device being busy, which the simulator
// already charges; measured on busy receivers it came out as a 25-35 us delay per copy (half a
// 0.1 ms background op), charged again on every copy of a critical path.
int copy_background(const CalibrationOptions& o) {
  return o.receiver_copies ? 0 : 8;
}

// Copies as the dataflow sees them (copy_bench with one block per device); a sample is the
// consumer's ready time minus the producer's finish. The receiving copy worker's wake-up and
// its share of a busy core are part of it: the copy worker's own start-to-arrival time missed
// them (10x too short a cross-device latency on 2 cores, docs/engine.md).
std::vector<CopySample> copy_samples(const CalibrationOptions& o) {
  const int p = std::max(2, o.devices);  // one device has no copies: measure a pair
  std::vector<CopySample> out;
  for (std::int64_t n : {1024, 16384, 262144, 2097152}) {
    CopyBench b = copy_bench(p, n, 1, copy_background(o));
    std::vector<double> t;
    run_copy_bench(o, b, DispatchRule::fifo, [&](const Schedule& s) {
      for (const auto& pairs : b.pairs)
        t.push_back(s.ready[static_cast<std::size_t>(pairs[0].second)] -
                    s.finish[static_cast<std::size_t>(pairs[0].first)]);
    });
    out.push_back({4.0 * static_cast<double>(n), median(t)});
  }
  return out;
}

// Copies in bursts: copy_bench with kCopyBurst 4 KB blocks per device, run in id order (rule
// priority), so that the burst's producers run first, one after another. A sample is the span from
// the first producer's finish to the last consumer's ready time.
double copy_burst_span(const CalibrationOptions& o) {
  const int p = std::max(2, o.devices);
  CopyBench b = copy_bench(p, kCopyBurstElems, kCopyBurst, copy_background(o));
  std::vector<double> spans;
  run_copy_bench(o, b, DispatchRule::priority, [&](const Schedule& s) {
    for (const auto& pairs : b.pairs) {
      double first = 1e300, last = 0;
      for (const auto& [prod, cons] : pairs) {
        first = std::min(first, s.finish[static_cast<std::size_t>(prod)]);
        last = std::max(last, s.ready[static_cast<std::size_t>(cons)]);
      }
      spans.push_back(last - first);
    }
  });
  return median(spans);
}

// Copies on a busy core (docs/engine.md, calibration step 6): on every device kShareCopies ops
// produce 1 MB blocks (first, lowest ids) and 24 background kernels follow; each block is read
// by an op on the next device (sent), or on its own device (kept). Per run: the summed duration
// of the producers and background ops and of their input ops over all devices (`ops`; without
// the input ops, the copies that ran beside them went uncounted: median share 0.52 in 13
// calibrations, where a chain on a busy device loses ~1 copy time per copy; 0.78 since), and the
// summed span of the devices, first op start to last op finish, consumers included (`span`);
// medians over runs.
// The sent variant's excess over the kept one, per copy, is the copy time taken from the
// devices' work: inside their ops (a copy thread sharing the core: `ops`), or also between them
// (a worker that copies blocks in between its ops: `span`).
constexpr int kShareCopies = 8;
constexpr std::int64_t kShareElems = 262144;

// The benchmark of one variant (blocks sent or kept), ready to run.
struct ShareBench {
  CopyBench b;
  std::vector<NodeId> timed;  // producers, background ops and their input ops
  std::vector<NodeId> all;    // producers, background ops and consumers
  CopyRun run;
};

ShareBench share_bench(const CalibrationOptions& o, bool sent) {
  const int p = std::max(2, o.devices);
  ShareBench sb;
  CopyBench& b = sb.b;
  b.pairs.resize(static_cast<std::size_t>(p));
  const auto add = [&](DeviceId d, std::int64_t n) {
    const NodeId x = b.bg.input({n});
    b.bg.place(x, d);
    const NodeId v = b.bg.op("scale", {n}, {x}, static_cast<double>(n));
    b.bg.place(v, d);
    sb.timed.push_back(x);
    sb.timed.push_back(v);
    sb.all.push_back(v);
    return v;
  };
  for (DeviceId d = 0; d < p; ++d)
    for (int k = 0; k < kShareCopies; ++k) {
      const NodeId prod = add(d, kShareElems);
      const NodeId cons = b.bg.op("reduce_sum", {1}, {prod}, static_cast<double>(kShareElems));
      b.bg.place(cons, sent ? (d + 1) % p : d);
      sb.all.push_back(cons);
      b.pairs[static_cast<std::size_t>(d)].emplace_back(prod, cons);
    }
  for (DeviceId d = 0; d < p; ++d)
    for (int k = 0; k < 24; ++k) add(d, kShareElems);
  sb.run = start_copy_bench(o, b, DispatchRule::fifo);
  return sb;
}

// One run's summed op time of the producers and background ops (`ops`: seconds) or summed
// device spans (`span`), whichever `by_span` asks for.
double busy_run(ShareBench& sb, bool by_span) {
  const int p = static_cast<int>(sb.b.pairs.size());
  const Schedule s = sb.run.run();
  double sum = 0;
  if (by_span) {
    for (double x : device_spans(s, sb.all, p)) sum += x;
  } else {
    for (NodeId v : sb.timed)
      sum += s.finish[static_cast<std::size_t>(v)] - s.start[static_cast<std::size_t>(v)];
  }
  return sum;
}

// The share of a copy's port occupancy (the fitted latency + bytes / bandwidth) taken from the
// compute of a busy device, clamped to 0..kMaxCopyShare (DeviceSpec::copy_share), from the op
// time or, when the receiving worker copies between its ops, from the devices' spans. The runs
// go in blocks, kept, sent, sent, kept, each block after a warm-up run, so that a steady drift
// of the machine's speed falls on both variants alike. Strict alternation made every run
// slower, the kept runs' spans up to 2x (measured on 2 MPI ranks; a run after the other
// variant's finds its blocks cold, likely also reclaimed by this VM's memory daemon).
void measure_copy_share(const CalibrationOptions& o, Calibration& c) {
  const int p = std::max(2, o.devices);
  const bool by_span = o.receiver_copies;
  ShareBench kept = share_bench(o, false), sent = share_bench(o, true);
  std::vector<double> k, s;
  for (auto [bench, out] : {std::pair{&kept, &k}, {&sent, &s}, {&sent, &s}, {&kept, &k}}) {
    bench->run.run();  // warm again: the other's blocks ran last
    for (int r = 0; r < o.repeat; ++r) out->push_back(busy_run(*bench, by_span));
  }
  c.share_basis = by_span ? "span" : "ops";
  c.share_kept = median(k);
  c.share_sent = median(s);
  const double occupancy = c.latency + 4.0 * static_cast<double>(kShareElems) / c.bandwidth;
  const double per_copy = (c.share_sent - c.share_kept) / (p * kShareCopies);
  const double share = occupancy > 0 ? per_copy / occupancy : 0.0;
  c.copy_share_measured = std::clamp(share, 0.0, kMaxCopyShare);
  c.copy_share = std::max(c.copy_share_measured, copy_share_floor(o));
}

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
  BenchGraph bg;
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
  set_input_byte_floor(c);
  c.fit = fmt::format(
      "per kernel: op time = overhead + the measured time at its FLOPs (or output bytes), "
      "linear between the measured sizes and at the largest size's rate beyond it (the line "
      "a fixed cost + units x a cost per unit, fitted by relative least squares, is kept beside "
      "it; graph-fitted kernels have the line alone), {} kernels{}; "
      "other kernels: overhead + FLOPs / peak, peak by relative least squares over the einsum "
      "benchmarks; overhead: the engine's hand-off cost",
      c.kernel_costs.size(),
      o.graph ? fmt::format(" ({} from the {} ops of graph '{}', run round-robin on {} devices)",
                            own.size(), graph_ops.size(), o.graph->meta().name, o.devices)
              : " (microbenchmarks)");
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

}  // namespace

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

double copy_share_floor(const CalibrationOptions& o) {
  const bool own_core = o.receiver_copies || o.copies == CopyMode::worker;
  return own_core && !o.link.enabled() ? 1.0 : 0.0;
}

void split_copy_latency(Calibration& c) {
  const double bytes = 4.0 * static_cast<double>(kCopyBurstElems);
  const auto single = std::find_if(c.copies.begin(), c.copies.end(),
                                   [&](const CopySample& s) { return s.bytes == bytes; });
  if (single == c.copies.end() || c.burst_span <= 0) return;
  const double per_copy = (c.burst_span - single->seconds) / (kCopyBurst - 1);
  const double occupied = std::clamp(per_copy - bytes / c.bandwidth, 0.0, c.latency);
  c.delay = c.latency - occupied;
  c.latency = occupied;
}

Calibration calibrate(const CalibrationOptions& o,
                      const std::function<void(int, int, const std::string&)>& progress) {
  if (o.devices < 1 || o.devices > kMaxDevices)
    throw InputError(fmt::format("calibrate: device count must be in 1..{}", kMaxDevices));
  if (o.repeat < 1) throw InputError("calibrate: repeat must be >= 1");
  if (o.topology != "switch" && o.topology != "all-to-all")
    throw InputError("calibrate: topology must be switch or all-to-all");
  Calibration c;
  c.devices = o.devices;
  c.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.link = o.link.label();
  c.copy_mode = copy_mode_name(o.copies);
  const auto benches = standard_benchmarks();
  const int steps = static_cast<int>(benches.size()) + 3 + kDeviceSpeedRounds + (kGemmPasses - 1) +
                    (o.graph ? 1 : 0);
  int step = 0;
  const auto tick = [&](const std::string& what) {
    if (progress) progress(step, steps, what);
    ++step;
  };
  tick("device speeds (1)");  // rounds at the start, after the copies and at the end
  device_slowdown_round(o, c);
  tick("engine overhead");
  c.engine_overhead = engine_overhead(o);
  for (const KernelBench& kb : benches) {
    tick(kb.what);
    c.kernels.push_back(run_kernel_bench(kb, o));
  }
  // The GEMM passes: the first with the kernels above, then after the other kernels, after the
  // second device-speed round, after the copies on busy cores and after the third round.
  static_assert(kGemmPasses == 5, "calibrate() runs gemm_pass(2) to gemm_pass(5) below");
  std::vector<std::vector<KernelSample>> later_passes(benches.size());
  const auto gemm_pass = [&](int pass) {
    tick(fmt::format("GEMMs (pass {} of {})", pass, kGemmPasses));
    for (std::size_t i = 0; i < benches.size(); ++i)
      if (benches[i].kind == "einsum") later_passes[i].push_back(run_kernel_bench(benches[i], o));
  };
  gemm_pass(2);
  tick("copies");
  c.copies = copy_samples(o);
  c.burst_span = copy_burst_span(o);
  tick("device speeds (2)");  // after the copies: its full load would disturb their latencies
  device_slowdown_round(o, c);
  gemm_pass(3);
  std::vector<KernelSample> fit_on;
  if (o.graph) {
    tick("graph " + o.graph->meta().name);
    fit_on = graph_samples(*o.graph, o);
    c.kernels.insert(c.kernels.end(), fit_on.begin(), fit_on.end());
  }
  fit_link_model(c);
  tick("copies on busy cores");
  measure_copy_share(o, c);
  gemm_pass(4);
  tick("device speeds (3)");
  device_slowdown_round(o, c);
  gemm_pass(5);
  for (std::size_t i = 0; i < benches.size(); ++i)
    if (!later_passes[i].empty()) merge_passes(c.kernels[i], later_passes[i]);
  c.device_slowdown = persistent_slowdown(c.device_slowdown_rounds);
  use_fastest_device(c);
  fit_device_model(c, fit_on, o);
  price_alone(c);
  return c;
}

namespace {

// The slowdowns written to the profile: all 1 when every one is within the noise.
std::vector<double> written_slowdowns(const Calibration& c) {
  std::vector<double> s = c.device_slowdown;
  s.resize(static_cast<std::size_t>(c.devices), 1.0);
  const bool noise = std::all_of(s.begin(), s.end(),
                                 [](double x) { return std::abs(x - 1) <= kDeviceSlowdownNoise; });
  if (noise) std::fill(s.begin(), s.end(), 1.0);
  return s;
}

}  // namespace

std::string calibration_profile_json(const Calibration& c, const std::string& name,
                                     const std::string& topology) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["format"] = "doppler-hardware";
  j["version"] = 1;
  j["name"] = name;
  j["description"] = fmt::format(
      "this machine's engine: {} devices (one worker thread each) on {} cores, measured by "
      "doppler calibrate",
      c.devices, c.cores);
  j["source"] = "doppler calibrate (docs/engine.md); link emulation " + c.link;
  const std::vector<double> slow = written_slowdowns(c);
  const auto device = [&](double s) {
    ordered_json dev;
    dev["name"] = s == 1
                      ? "engine device (1 core)"
                      : fmt::format("engine device (1 core, {:.2f}x the fastest device's time)", s);
    dev["peak_flops"] = {{"f32", c.peak_flops / s}, {"f16", c.peak_flops / s}};
    dev["peak_flops_source"] = c.fit;
    dev["efficiency"] = 1.0;
    dev["launch_overhead"] = c.launch_overhead;
    dev["launch_overhead_source"] = "the engine's own hand-off cost per op (a chain of empty ops)";
    dev["contention"] = c.contention;
    dev["contention_source"] = fmt::format(
        "1 - (256^3 GEMM alone) / (with every device busy), median of {} rounds ({:.3f}); kernel "
        "prices are the busy times x {:.3g}",
        c.contention_rounds.size(), fmt::join(c.contention_rounds, ", "), 1 - c.contention);
    dev["copy_share"] = c.copy_share;
    dev["copy_share_source"] = fmt::format(
        "busy devices' time added per incoming copy over its port occupancy: {} copies of {} KB "
        "per device, {:.3g} ms of {} with the copies, {:.3g} ms without: {:.3g}{}",
        kShareCopies, 4 * kShareElems / 1024, c.share_sent * 1e3,
        c.share_basis == "span" ? "device spans (the receiving worker copies between its ops)"
                                : "producer, background and input op time",
        c.share_kept * 1e3, c.copy_share_measured,
        c.copy_share > c.copy_share_measured
            ? fmt::format(", raised to {:.3g}: the destination's own core performs each copy",
                          c.copy_share)
            : "");
    return dev;
  };
  if (std::all_of(slow.begin(), slow.end(), [](double s) { return s == 1; })) {
    j["device"] = device(1);
    j["count"] = c.devices;
  } else {
    ordered_json devs = ordered_json::array();
    for (double s : slow) devs.push_back(device(s));
    j["devices"] = std::move(devs);
  }
  ordered_json kc = ordered_json::object();
  for (const auto& [kernel, f] : c.kernel_costs) {  // on device 0: x its slowdown
    ordered_json e;
    e["seconds_per_op"] = f.cost.seconds_per_op * slow[0];
    e["seconds_per_flop"] = f.cost.seconds_per_flop * slow[0];
    e["seconds_per_byte"] = f.cost.seconds_per_byte * slow[0];
    if (f.cost.seconds_per_input_byte > 0)
      e["seconds_per_input_byte"] = f.cost.seconds_per_input_byte * slow[0];
    if (!f.cost.points.empty()) {
      ordered_json pts = ordered_json::array();
      for (const KernelPoint& pt : f.cost.points) pts.push_back({pt.units, pt.seconds * slow[0]});
      e["points"] = std::move(pts);
      e["points_unit"] = f.cost.points_by_bytes ? "out_bytes" : "flops";
    }
    e["samples"] = f.samples;
    e["source"] = f.source;
    kc[kernel] = std::move(e);
  }
  j["kernels"] = std::move(kc);
  ordered_json link = {{"bandwidth", c.bandwidth}, {"latency", c.latency}, {"delay", c.delay}};
  constexpr const char* kCopySource =
      "fitted copy time = latency + delay + bytes / bandwidth (single copies of 4 KB-8 MB); the "
      "link is busy for latency + bytes / bandwidth (what each further copy of a 16-copy burst "
      "adds), the delay is pipelined";
  if (topology == "switch") {
    link["latency"] = c.latency / 2;  // a copy crosses two ports
    link["delay"] = c.delay / 2;
    j["topology"] = {{"kind", "switch"},
                     {"port", link},
                     {"source", std::string(kCopySource) +
                                    "; one incoming-copy worker per device (the ingress port)"}};
  } else {
    j["topology"] = {{"kind", "all-to-all"}, {"link", link}, {"source", kCopySource}};
  }
  ordered_json ks = ordered_json::array();
  for (const KernelSample& k : c.kernels)
    if (k.kind != "graph op")
      ks.push_back({{"kind", k.kind},
                    {"what", k.what},
                    {"flops", k.flops},
                    {"bytes", k.bytes},
                    {"seconds", k.seconds},
                    {"gflops", k.flops / k.seconds / 1e9}});
  ordered_json cs = ordered_json::array();
  for (const CopySample& s : c.copies)
    cs.push_back(
        {{"bytes", s.bytes}, {"seconds", s.seconds}, {"gbytes_per_s", s.bytes / s.seconds / 1e9}});
  j["calibration_source"] = {
      {"devices", c.devices},
      {"device_slowdown", c.device_slowdown},
      {"cores", c.cores},
      {"link_emulation", c.link},
      {"copy_mode", c.copy_mode},
      {"engine_overhead_seconds", c.engine_overhead},
      {"kernels", ks},
      {"copies", cs},
      {"copy_burst",
       {{"copies", kCopyBurst}, {"bytes", 4 * kCopyBurstElems}, {"span_seconds", c.burst_span}}},
      {"copy_share",
       {{"copies_per_device", kShareCopies},
        {"bytes", 4 * kShareElems},
        {"basis", c.share_basis},
        {"busy_seconds_sent", c.share_sent},
        {"busy_seconds_kept", c.share_kept},
        {"share", c.copy_share}}}};
  return j.dump(2) + "\n";
}

}  // namespace doppler
