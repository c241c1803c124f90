#include "doppler/hardware/profile.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "topology.hpp"

#include "doppler/graph/types.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/json_doc.hpp"

namespace doppler {

namespace {

using nlohmann::json;

// Largest device count of a ring topology (its routes grow as P^3).
constexpr int kMaxRingDevices = 256;

// Reads the optional number j[key] into `out` (left as it is when absent); fails unless it is in
// [0, max].
void read_bounded(const JsonDoc& doc, const json& j, const std::string& ptr, const char* key,
                  double max, double& out) {
  if (!j.contains(key)) return;
  out = doc.number(j[key], ptr + "/" + key);
  if (out < 0 || out > max)
    doc.fail(ptr + "/" + key, fmt::format("{} must be in [0, {}]", key, max));
}

DeviceSpec read_device(const JsonDoc& doc, const json& j, const std::string& ptr) {
  doc.expect_object(j, ptr);
  DeviceSpec d;
  if (j.contains("name")) d.name = doc.string(j["name"], ptr + "/name");
  const json& peak = doc.require(j, ptr, "peak_flops");
  doc.expect_object(peak, ptr + "/peak_flops");
  for (const auto& [dtype, v] : peak.items()) {
    d.peak_flops[dtype] = doc.number(v, ptr + "/peak_flops/" + dtype);
    if (d.peak_flops[dtype] <= 0) doc.fail(ptr + "/peak_flops/" + dtype, "peak FLOP/s must be > 0");
  }
  if (!d.peak_flops.count("f32"))
    doc.fail(ptr + "/peak_flops", "peak_flops needs an \"f32\" entry");
  if (j.contains("efficiency")) {
    d.efficiency = doc.number(j["efficiency"], ptr + "/efficiency");
    if (d.efficiency <= 0 || d.efficiency > 1)
      doc.fail(ptr + "/efficiency", "efficiency must be in (0, 1]");
  }
  if (j.contains("launch_overhead"))
    d.launch_overhead = doc.number(j["launch_overhead"], ptr + "/launch_overhead");
  if (j.contains("slots"))
    d.slots = static_cast<int>(doc.integer(j["slots"], ptr + "/slots", 1, 1024));
  read_bounded(doc, j, ptr, "copy_share", kMaxCopyShare, d.copy_share);
  read_bounded(doc, j, ptr, "contention", kMaxContention, d.contention);
  for (const auto& [key, v] : j.items()) {
    static const char* known[] = {"name",  "peak_flops", "efficiency", "launch_overhead",
                                  "slots", "copy_share", "contention"};
    bool ok = key.ends_with("source");
    for (const char* k : known) ok = ok || key == k;
    if (!ok) doc.fail(ptr + "/" + key, fmt::format("unknown device field '{}'", key));
  }
  return d;
}

// A kernel's "points": [[units, seconds], ...] with units > 0 increasing and seconds >= 0 not
// decreasing; "points_unit": "flops" (default) or "out_bytes".
void read_kernel_points(const JsonDoc& doc, const json& k, const std::string& ptr, KernelCost& c) {
  if (k.contains("points_unit")) {
    const std::string unit = doc.string(k["points_unit"], ptr + "/points_unit");
    if (unit != "flops" && unit != "out_bytes")
      doc.fail(ptr + "/points_unit", "points_unit must be flops or out_bytes");
    c.points_by_bytes = unit == "out_bytes";
  }
  if (!k.contains("points")) return;
  const json& pts = k["points"];
  doc.expect_array(pts, ptr + "/points");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const std::string at = fmt::format("{}/points/{}", ptr, i);
    if (!pts[i].is_array() || pts[i].size() != 2) doc.fail(at, "expected [units, seconds]");
    const KernelPoint pt{doc.number(pts[i][0], at + "/0"), doc.number(pts[i][1], at + "/1")};
    if (pt.units <= 0 || pt.seconds < 0) doc.fail(at, "units must be > 0 and seconds >= 0");
    if (!c.points.empty() &&
        (pt.units <= c.points.back().units || pt.seconds < c.points.back().seconds))
      doc.fail(at, "points must have increasing units and non-decreasing seconds");
    c.points.push_back(pt);
  }
}

// The optional calibration_source.kernels_left_out: names of kernels (doppler calibrate --kernels).
std::set<std::string> read_left_out(const JsonDoc& doc, const json& root) {
  const auto source = root.find("calibration_source");
  if (source == root.end() || !source->is_object()) return {};
  const auto list = source->find("kernels_left_out");
  if (list == source->end()) return {};
  const std::string ptr = "/calibration_source/kernels_left_out";
  if (!list->is_array()) doc.fail(ptr, "expected an array of kernel names");
  std::set<std::string> out;
  for (const json& k : *list) {
    if (!k.is_string()) doc.fail(ptr, "expected an array of kernel names");
    out.insert(k.get<std::string>());
  }
  return out;
}

// The optional "kernels" object: {name: {"seconds_per_op": a, "seconds_per_flop": b,
// "seconds_per_byte": c, "seconds_per_input_byte": r, "points": [[units, seconds], ...],
// "points_unit": u}} (each optional, default 0 / none).
std::map<std::string, KernelCost> read_kernels(const JsonDoc& doc, const json& j) {
  doc.expect_object(j, "/kernels");
  std::map<std::string, KernelCost> out;
  for (const auto& [name, k] : j.items()) {
    const std::string ptr = "/kernels/" + name;
    doc.expect_object(k, ptr);
    KernelCost c;
    for (const auto& [key, v] : k.items()) {
      double* field = key == "seconds_per_flop"         ? &c.seconds_per_flop
                      : key == "seconds_per_byte"       ? &c.seconds_per_byte
                      : key == "seconds_per_input_byte" ? &c.seconds_per_input_byte
                      : key == "seconds_per_op"         ? &c.seconds_per_op
                                                        : nullptr;
      if (!field) {
        if (!key.ends_with("source") && key != "samples" && key != "points" && key != "points_unit")
          doc.fail(ptr + "/" + key, fmt::format("unknown kernel field '{}'", key));
        continue;
      }
      *field = doc.number(v, ptr + "/" + key);
    }
    read_kernel_points(doc, k, ptr, c);
    out[name] = c;
  }
  return out;
}

// A kernel's cost by its size: the line, or its points interpolated (KernelCost::points).
double size_seconds(const KernelCost& c, double flops, double out_bytes) {
  const auto& points = c.points;
  if (points.empty())
    return c.seconds_per_op + flops * c.seconds_per_flop + out_bytes * c.seconds_per_byte;
  const double x = c.points_by_bytes ? out_bytes : flops;
  const auto hi = std::upper_bound(points.begin(), points.end(), x,
                                   [](double u, const KernelPoint& p) { return u < p.units; });
  if (hi == points.end()) return points.back().seconds * x / points.back().units;
  const KernelPoint lo = hi == points.begin()
                             ? KernelPoint{0, std::min(c.seconds_per_op, hi->seconds)}
                             : *std::prev(hi);
  return lo.seconds + (hi->seconds - lo.seconds) * (x - lo.units) / (hi->units - lo.units);
}

}  // namespace

double KernelCost::seconds(double flops, double out_bytes, double in_bytes) const {
  return std::max(size_seconds(*this, flops, out_bytes), in_bytes * seconds_per_input_byte);
}

RouteCost HardwareProfile::route_cost(int s, int d) const {
  RouteCost r{0, 0, std::numeric_limits<double>::infinity()};
  for (int l : route(s, d)) {
    const LinkSpec& link = links[static_cast<std::size_t>(l)];
    r.latency += link.latency;
    r.delay += link.delay;
    r.bandwidth = std::min(r.bandwidth, link.bandwidth);
  }
  return r;
}

double HardwareProfile::transfer_time(int s, int d, double bytes) const {
  if (s == d) return 0;
  const RouteCost r = route_cost(s, d);
  return r.latency + r.delay + bytes / r.bandwidth;
}

double HardwareProfile::seconds_per_flop(int d, std::string_view dtype) const {
  const DeviceSpec& dev = devices[static_cast<std::size_t>(d)];
  auto it = dev.peak_flops.find(std::string(dtype));
  if (it == dev.peak_flops.end()) it = dev.peak_flops.find("f32");
  return 1.0 / (it->second * dev.efficiency);
}

HardwareProfile parse_hardware_profile(std::string_view text, const std::string& file) {
  JsonLimits limits;
  limits.arrays = {{"devices", kMaxDevices, "devices", ""}};
  const JsonDoc doc(std::string(text), file, limits);
  doc.expect_format("doppler-hardware", 1);
  const json& root = doc.root();
  HardwareProfile p;
  p.name = doc.string(doc.require(root, "", "name"), "/name");
  if (root.contains("description")) p.description = doc.string(root["description"], "/description");
  if (root.contains("devices")) {
    const json& devs = root["devices"];
    doc.expect_array(devs, "/devices");
    for (std::size_t i = 0; i < devs.size(); ++i)
      p.devices.push_back(read_device(doc, devs[i], fmt::format("/devices/{}", i)));
  } else {
    const DeviceSpec d = read_device(doc, doc.require(root, "", "device"), "/device");
    const auto count = doc.integer(doc.require(root, "", "count"), "/count", 1, kMaxDevices);
    p.devices.assign(static_cast<std::size_t>(count), d);
  }
  if (p.devices.empty() || p.num_devices() > kMaxDevices)
    doc.fail("/devices", fmt::format("a profile needs 1..{} devices", kMaxDevices));
  for (std::size_t i = 0; i < p.devices.size(); ++i)
    if (p.devices[i].name.empty()) p.devices[i].name = fmt::format("dev{}", i);
  const json& topology = doc.require(root, "", "topology");
  // A ring's routes hold P^3 / 4 link ids in all: bound P so that a profile cannot take GiBs.
  if (topology.is_object() && topology.value("kind", json()) == "ring" &&
      p.num_devices() > kMaxRingDevices)
    doc.fail("/topology/kind", fmt::format("a ring topology supports at most {} devices, the "
                                           "profile has {}",
                                           kMaxRingDevices, p.num_devices()));
  detail::build_topology(doc, topology, "/topology", p);
  if (root.contains("kernels")) p.kernels = read_kernels(doc, root["kernels"]);
  p.left_out = read_left_out(doc, root);
  for (const auto& [key, v] : root.items()) {
    static const char* known[] = {"format",  "version", "name",  "aliases",  "description",
                                  "devices", "device",  "count", "topology", "kernels"};
    bool ok = key.ends_with("source");
    for (const char* k : known) ok = ok || key == k;
    if (!ok) doc.fail("/" + key, fmt::format("unknown field '{}'", key));
  }
  return p;
}

}  // namespace doppler
