// doppler calibrate's output: the fitted models as a doppler-hardware profile document
// (docs/hardware.md), every measurement kept under "calibration_source".
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "calibrate_detail.hpp"

namespace doppler {

namespace {

using calibrate_detail::kShareCopies;
using calibrate_detail::kShareElems;
using nlohmann::ordered_json;

// The slowdowns written to the profile: all 1 when every one is within the noise.
std::vector<double> written_slowdowns(const Calibration& c) {
  std::vector<double> s = c.device_slowdown;
  s.resize(static_cast<std::size_t>(c.devices), 1.0);
  const bool noise = std::all_of(s.begin(), s.end(),
                                 [](double x) { return std::abs(x - 1) <= kDeviceSlowdownNoise; });
  if (noise) std::fill(s.begin(), s.end(), 1.0);
  return s;
}

// Where the copy share came from (the profile's "copy_share_source").
std::string copy_share_source(const Calibration& c) {
  return fmt::format(
      "busy devices' time added per incoming copy over its port occupancy: {} copies of {} KB "
      "per device, {:.3g} ms of {} with the copies, {:.3g} ms without: {:.3g}{}",
      kShareCopies, c.element_bytes * kShareElems / 1024, c.share_sent * 1e3,
      c.share_basis == "span" ? "device spans (the receiving worker copies between its ops)"
                              : "producer, background and input op time",
      c.share_kept * 1e3, c.copy_share_measured,
      c.copy_share > c.copy_share_measured
          ? fmt::format(", raised to {:.3g}: the destination's own core performs each copy",
                        c.copy_share)
          : "");
}

// One device of slowdown `s` (its time over the fastest device's).
ordered_json device_json(const Calibration& c, double s) {
  ordered_json dev;
  dev["name"] = s == 1
                    ? "engine device (1 core)"
                    : fmt::format("engine device (1 core, {:.2f}x the fastest device's time)", s);
  dev["peak_flops"] = {
      {"f32", c.peak_flops / s}, {"f16", c.peak_flops / s}, {"bf16", c.peak_flops / s}};
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
  dev["copy_share_source"] = copy_share_source(c);
  return dev;
}

// The fitted kernel costs on device 0 (x its slowdown `slow0`), per kernel name.
ordered_json kernel_costs_json(const Calibration& c, double slow0) {
  ordered_json kc = ordered_json::object();
  for (const auto& [kernel, f] : c.kernel_costs) {
    ordered_json e;
    e["seconds_per_op"] = f.cost.seconds_per_op * slow0;
    e["seconds_per_flop"] = f.cost.seconds_per_flop * slow0;
    e["seconds_per_byte"] = f.cost.seconds_per_byte * slow0;
    if (f.cost.seconds_per_input_byte > 0)
      e["seconds_per_input_byte"] = f.cost.seconds_per_input_byte * slow0;
    if (!f.cost.points.empty()) {
      ordered_json pts = ordered_json::array();
      for (const KernelPoint& pt : f.cost.points) pts.push_back({pt.units, pt.seconds * slow0});
      e["points"] = std::move(pts);
      e["points_unit"] = f.cost.points_by_bytes ? "out_bytes" : "flops";
    }
    e["samples"] = f.samples;
    e["source"] = f.source;
    kc[kernel] = std::move(e);
  }
  return kc;
}

// The link model in `topology`: "switch" (half the latency and delay on each of the two ports
// a copy crosses) or "all-to-all" (one link per pair).
ordered_json topology_json(const Calibration& c, const std::string& topology) {
  ordered_json link = {{"bandwidth", c.bandwidth}, {"latency", c.latency}, {"delay", c.delay}};
  constexpr const char* kCopySource =
      "fitted copy time = latency + delay + bytes / bandwidth (single copies of 4 KB-8 MB); the "
      "link is busy for latency + bytes / bandwidth (what each further copy of a 16-copy burst "
      "adds), the delay is pipelined";
  if (topology != "switch")
    return {{"kind", "all-to-all"}, {"link", link}, {"source", kCopySource}};
  link["latency"] = c.latency / 2;  // a copy crosses two ports
  link["delay"] = c.delay / 2;
  return {{"kind", "switch"},
          {"port", link},
          {"source",
           std::string(kCopySource) + "; one incoming-copy worker per device (the ingress port)"}};
}

// Every measurement behind the profile ("calibration_source").
ordered_json calibration_source_json(const Calibration& c) {
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
  return {{"devices", c.devices},
          {"device_slowdown", c.device_slowdown},
          {"cores", c.cores},
          {"link_emulation", c.link},
          {"copy_mode", c.copy_mode},
          {"engine_overhead_seconds", c.engine_overhead},
          {"benchmarked_kernels",
           c.benchmarked.empty() ? ordered_json("all") : ordered_json(c.benchmarked)},
          {"kernels_left_out", c.left_out},
          {"kernels", ks},
          {"copies", cs},
          {"copy_burst",
           {{"copies", kCopyBurst},
            {"bytes", c.element_bytes * kCopyBurstElems},
            {"span_seconds", c.burst_span}}},
          {"copy_share",
           {{"copies_per_device", kShareCopies},
            {"bytes", c.element_bytes * kShareElems},
            {"basis", c.share_basis},
            {"busy_seconds_sent", c.share_sent},
            {"busy_seconds_kept", c.share_kept},
            {"share", c.copy_share}}}};
}

}  // namespace

std::string calibration_profile_json(const Calibration& c, const std::string& name,
                                     const std::string& topology) {
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
  if (std::all_of(slow.begin(), slow.end(), [](double s) { return s == 1; })) {
    j["device"] = device_json(c, 1);
    j["count"] = c.devices;
  } else {
    ordered_json devs = ordered_json::array();
    for (double s : slow) devs.push_back(device_json(c, s));
    j["devices"] = std::move(devs);
  }
  j["kernels"] = kernel_costs_json(c, slow[0]);
  j["topology"] = topology_json(c, topology);
  j["calibration_source"] = calibration_source_json(c);
  return j.dump(2) + "\n";
}

}  // namespace doppler
