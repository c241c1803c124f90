// doppler calibrate's copy benchmarks: single copies per size, bursts of small copies, and copies
// into busy devices (the share of a copy's time taken from the destination's compute).
#include <algorithm>
#include <functional>
#include <numeric>

#include "calibrate_detail.hpp"

namespace doppler::calibrate_detail {

namespace {

// The copy benchmarks' graph on p devices: on every device `burst` ops produce n-element blocks,
// each read by an op on the next device (these come first: the lowest ids), then `background`
// kernels per device that keep every compute worker busy (0.1 ms each).
struct CopyBench {
  explicit CopyBench(int element_bytes) : bg(element_bytes) {}
  BenchGraph bg;
  std::vector<std::vector<std::pair<NodeId, NodeId>>> pairs;  // per device: producer, consumer
};

CopyBench copy_bench(int p, std::int64_t n, int burst, int background, int element_bytes) {
  CopyBench b(element_bytes);
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

// One device's reading of a run: from the schedule and the device's (producer, consumer) pairs.
using CopyReading =
    std::function<double(const Schedule&, const std::vector<std::pair<NodeId, NodeId>>&)>;

// Runs a copy benchmark: the warm-up, then 2 x repeat measured runs, and returns every device's
// reading of every run. With receiver copies (MPI ranks) the devices report on their ranks'
// clocks, which start at each rank's exit from a barrier (tens of us apart on a 2-vCPU VM): a
// sample is then one run's mean over the ring of devices, around which the offsets cancel.
std::vector<double> copy_readings(const CalibrationOptions& o, CopyBench& b, DispatchRule rule,
                                  const CopyReading& reading) {
  CopyRun r = start_copy_bench(o, b, rule);
  std::vector<double> out;
  for (int k = 0; k < 2 * o.repeat; ++k) {
    const Schedule s = r.run();
    double ring = 0;
    for (const auto& pairs : b.pairs) {
      const double x = reading(s, pairs);
      if (!o.receiver_copies) out.push_back(x);
      ring += x;
    }
    if (o.receiver_copies) out.push_back(ring / static_cast<double>(b.pairs.size()));
  }
  return out;
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

// Copies as the dataflow sees them: copy_bench with one block per device, every device sending
// to the next at once. A reading is a consumer's ready time minus its producer's finish: the
// receiving copy worker's wake-up and its share of a busy core are part of it (the copy worker's
// own start-to-arrival time missed them: 10x too short a cross-device latency on 2 cores,
// docs/engine.md).
std::vector<double> copy_times(const CalibrationOptions& o, int p, std::int64_t n) {
  CopyBench b = copy_bench(p, n, 1, copy_background(o), o.element_bytes);
  return copy_readings(o, b, DispatchRule::fifo, [](const Schedule& s, const auto& pairs) {
    return s.ready[static_cast<std::size_t>(pairs[0].second)] -
           s.finish[static_cast<std::size_t>(pairs[0].first)];
  });
}

}  // namespace

// Copy time per size (copy_times' median).
std::vector<CopySample> copy_samples(const CalibrationOptions& o) {
  const int p = std::max(2, o.devices);  // one device has no copies: measure a pair
  std::vector<CopySample> out;
  for (std::int64_t n : {1024, 16384, 262144, 2097152})
    out.push_back({static_cast<double>(o.element_bytes * n), median(copy_times(o, p, n))});
  return out;
}

// Copies in bursts: copy_bench with kCopyBurst 4 KB blocks per device, run in id order (rule
// priority), so that the burst's producers run first, one after another. A device's reading is the
// span from the first producer's finish to the last consumer's ready time.
double copy_burst_span(const CalibrationOptions& o) {
  const int p = std::max(2, o.devices);
  CopyBench b = copy_bench(p, kCopyBurstElems, kCopyBurst, copy_background(o), o.element_bytes);
  return median(
      copy_readings(o, b, DispatchRule::priority, [](const Schedule& s, const auto& pairs) {
        double first = 1e300, last = 0;
        for (const auto& [prod, cons] : pairs) {
          first = std::min(first, s.finish[static_cast<std::size_t>(prod)]);
          last = std::max(last, s.ready[static_cast<std::size_t>(cons)]);
        }
        return last - first;
      }));
}

namespace {

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
//
// The benchmark of one variant (blocks sent or kept), ready to run.
struct ShareBench {
  explicit ShareBench(int element_bytes) : b(element_bytes) {}
  CopyBench b;
  std::vector<NodeId> timed;  // producers, background ops and their input ops
  std::vector<NodeId> all;    // producers, background ops and consumers
  CopyRun run;
};

ShareBench share_bench(const CalibrationOptions& o, bool sent) {
  const int p = std::max(2, o.devices);
  ShareBench sb(o.element_bytes);
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

}  // namespace

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
  const double occupancy =
      c.latency + static_cast<double>(o.element_bytes * kShareElems) / c.bandwidth;
  const double per_copy = (c.share_sent - c.share_kept) / (p * kShareCopies);
  const double share = occupancy > 0 ? per_copy / occupancy : 0.0;
  c.copy_share_measured = std::clamp(share, 0.0, kMaxCopyShare);
  c.copy_share = std::max(c.copy_share_measured, copy_share_floor(o, c));
}

}  // namespace doppler::calibrate_detail
