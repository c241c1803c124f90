#include "topology.hpp"

#include <fmt/format.h>

namespace doppler::detail {

namespace {

using nlohmann::json;

// Reads {"bandwidth": B, "latency": L, "delay": D} (bandwidth > 0 bytes/s, latency and delay
// >= 0 s, both optional).
LinkSpec read_link(const JsonDoc& doc, const json& obj, const std::string& ptr, std::string name) {
  doc.expect_object(obj, ptr);
  LinkSpec l;
  l.name = std::move(name);
  l.bandwidth = doc.number(doc.require(obj, ptr, "bandwidth"), ptr + "/bandwidth");
  if (l.bandwidth <= 0) doc.fail(ptr + "/bandwidth", "bandwidth must be > 0 bytes/s");
  if (obj.contains("latency")) l.latency = doc.number(obj["latency"], ptr + "/latency");
  if (obj.contains("delay")) l.delay = doc.number(obj["delay"], ptr + "/delay");
  return l;
}

int add_link(HardwareProfile& p, LinkSpec l) {
  p.links.push_back(std::move(l));
  return static_cast<int>(p.links.size()) - 1;
}

std::vector<int>& route(HardwareProfile& p, int s, int d) {
  return p.routes[static_cast<std::size_t>(s) * p.devices.size() + static_cast<std::size_t>(d)];
}

void build_all_to_all(const JsonDoc& doc, const json& t, const std::string& ptr,
                      HardwareProfile& p) {
  const int n = p.num_devices();
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d)
        route(p, s, d) = {add_link(p, read_link(doc, doc.require(t, ptr, "link"), ptr + "/link",
                                                fmt::format("link {}->{}", s, d)))};
}

void build_ring(const JsonDoc& doc, const json& t, const std::string& ptr, HardwareProfile& p) {
  const int n = p.num_devices();
  std::vector<int> cw(static_cast<std::size_t>(n)), ccw(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    cw[static_cast<std::size_t>(i)] =
        add_link(p, read_link(doc, doc.require(t, ptr, "link"), ptr + "/link",
                              fmt::format("ring {}->{}", i, (i + 1) % n)));
    ccw[static_cast<std::size_t>(i)] = add_link(
        p,
        read_link(doc, t["link"], ptr + "/link", fmt::format("ring {}->{}", i, (i + n - 1) % n)));
  }
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      const int fwd = (d - s + n) % n, back = (s - d + n) % n;
      auto& r = route(p, s, d);
      if (fwd <= back)  // shorter way round; ties go clockwise
        for (int k = 0, i = s; k < fwd; ++k, i = (i + 1) % n)
          r.push_back(cw[static_cast<std::size_t>(i)]);
      else
        for (int k = 0, i = s; k < back; ++k, i = (i + n - 1) % n)
          r.push_back(ccw[static_cast<std::size_t>(i)]);
    }
}

void build_switch(const JsonDoc& doc, const json& t, const std::string& ptr, HardwareProfile& p) {
  const int n = p.num_devices();
  std::vector<int> out(static_cast<std::size_t>(n)), in(static_cast<std::size_t>(n));
  const json& port = doc.require(t, ptr, "port");
  for (int i = 0; i < n; ++i) {
    out[static_cast<std::size_t>(i)] =
        add_link(p, read_link(doc, port, ptr + "/port", fmt::format("switch port {} out", i)));
    in[static_cast<std::size_t>(i)] =
        add_link(p, read_link(doc, port, ptr + "/port", fmt::format("switch port {} in", i)));
  }
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d)
        route(p, s, d) = {out[static_cast<std::size_t>(s)], in[static_cast<std::size_t>(d)]};
}

// PCIe tree: devices under switches, switches under one host bridge shared by all traffic
// between switches. Fills only the routes of pairs for which `want(s, d)` is true.
void build_pcie_tree(const JsonDoc& doc, const json& t, const std::string& ptr, HardwareProfile& p,
                     const std::function<bool(int, int)>& want) {
  const int n = p.num_devices();
  const json& sw = doc.require(t, ptr, "switches");
  doc.expect_array(sw, ptr + "/switches");
  std::vector<int> switch_of(static_cast<std::size_t>(n), -1);
  for (std::size_t k = 0; k < sw.size(); ++k) {
    const std::string sp = fmt::format("{}/switches/{}", ptr, k);
    doc.expect_array(sw[k], sp);
    for (std::size_t i = 0; i < sw[k].size(); ++i) {
      const auto dev = doc.integer(sw[k][i], fmt::format("{}/{}", sp, i), 0, n - 1);
      if (switch_of[static_cast<std::size_t>(dev)] >= 0)
        doc.fail(sp, fmt::format("device {} is under two switches", dev));
      switch_of[static_cast<std::size_t>(dev)] = static_cast<int>(k);
    }
  }
  for (int d = 0; d < n; ++d)
    if (switch_of[static_cast<std::size_t>(d)] < 0)
      doc.fail(ptr + "/switches", fmt::format("device {} is under no switch", d));
  const json& dl = doc.require(t, ptr, "device_link");
  const json& sl = doc.require(t, ptr, "switch_link");
  std::vector<int> dev_up(static_cast<std::size_t>(n)), dev_down(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    dev_up[static_cast<std::size_t>(d)] =
        add_link(p, read_link(doc, dl, ptr + "/device_link", fmt::format("pcie dev {} up", d)));
    dev_down[static_cast<std::size_t>(d)] =
        add_link(p, read_link(doc, dl, ptr + "/device_link", fmt::format("pcie dev {} down", d)));
  }
  std::vector<int> sw_up(sw.size()), sw_down(sw.size());
  for (std::size_t k = 0; k < sw.size(); ++k) {
    sw_up[k] =
        add_link(p, read_link(doc, sl, ptr + "/switch_link", fmt::format("pcie switch {} up", k)));
    sw_down[k] = add_link(
        p, read_link(doc, sl, ptr + "/switch_link", fmt::format("pcie switch {} down", k)));
  }
  const int host = add_link(
      p, read_link(doc, doc.require(t, ptr, "host_bridge"), ptr + "/host_bridge", "host bridge"));
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d || !want(s, d)) continue;
      const auto ss = static_cast<std::size_t>(switch_of[static_cast<std::size_t>(s)]);
      const auto sd = static_cast<std::size_t>(switch_of[static_cast<std::size_t>(d)]);
      auto& r = route(p, s, d);
      if (ss == sd)
        r = {dev_up[static_cast<std::size_t>(s)], dev_down[static_cast<std::size_t>(d)]};
      else
        r = {dev_up[static_cast<std::size_t>(s)], sw_up[ss], host, sw_down[sd],
             dev_down[static_cast<std::size_t>(d)]};
    }
}

// NVLink table: dedicated links (per direction) between listed pairs with lanes x lane
// bandwidth; other pairs go through the fallback PCIe tree.
void build_nvlink_table(const JsonDoc& doc, const json& t, const std::string& ptr,
                        HardwareProfile& p) {
  const int n = p.num_devices();
  const json& lane = doc.require(t, ptr, "lane");
  const LinkSpec lane_spec = read_link(doc, lane, ptr + "/lane", "");
  const json& pairs = doc.require(t, ptr, "pairs");
  doc.expect_array(pairs, ptr + "/pairs");
  std::vector<char> direct(static_cast<std::size_t>(n * n), 0);
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const std::string pp = fmt::format("{}/pairs/{}", ptr, k);
    if (!pairs[k].is_array() || pairs[k].size() != 3)
      doc.fail(pp, "expected [device, device, lanes]");
    const auto a = static_cast<int>(doc.integer(pairs[k][0], pp + "/0", 0, n - 1));
    const auto b = static_cast<int>(doc.integer(pairs[k][1], pp + "/1", 0, n - 1));
    const auto lanes = doc.integer(pairs[k][2], pp + "/2", 1, 64);
    if (a == b) doc.fail(pp, "an NVLink pair joins two different devices");
    if (direct[static_cast<std::size_t>(a * n + b)])
      doc.fail(pp, fmt::format("pair {}-{} listed twice", a, b));
    for (const auto& [s, d] : {std::pair{a, b}, std::pair{b, a}}) {
      direct[static_cast<std::size_t>(s * n + d)] = 1;
      LinkSpec l = lane_spec;
      l.name = fmt::format("nvlink x{} {}->{}", lanes, s, d);
      l.bandwidth *= static_cast<double>(lanes);
      route(p, s, d) = {add_link(p, l)};
    }
  }
  const json& fb = doc.require(t, ptr, "fallback");
  doc.expect_object(fb, ptr + "/fallback");
  build_pcie_tree(doc, fb, ptr + "/fallback", p,
                  [&](int s, int d) { return !direct[static_cast<std::size_t>(s * n + d)]; });
}

void build_matrix(const JsonDoc& doc, const json& t, const std::string& ptr, HardwareProfile& p) {
  const int n = p.num_devices();
  const json& bw = doc.require(t, ptr, "bandwidth");
  const json& lat = doc.require(t, ptr, "latency");
  for (const auto& [m, name] : {std::pair{&bw, "bandwidth"}, std::pair{&lat, "latency"}}) {
    const std::string mp = ptr + "/" + name;
    if (!m->is_array() || static_cast<int>(m->size()) != n)
      doc.fail(mp, fmt::format("expected a {}x{} matrix", n, n));
    for (int i = 0; i < n; ++i)
      if (!(*m)[static_cast<std::size_t>(i)].is_array() ||
          static_cast<int>((*m)[static_cast<std::size_t>(i)].size()) != n)
        doc.fail(fmt::format("{}/{}", mp, i), fmt::format("expected a row of {} numbers", n));
  }
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      const std::string bp = fmt::format("{}/bandwidth/{}/{}", ptr, s, d);
      LinkSpec l;
      l.name = fmt::format("link {}->{}", s, d);
      l.bandwidth = doc.number(bw[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)], bp);
      if (l.bandwidth <= 0) doc.fail(bp, "bandwidth must be > 0 bytes/s");
      l.latency = doc.number(lat[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)],
                             fmt::format("{}/latency/{}/{}", ptr, s, d));
      route(p, s, d) = {add_link(p, l)};
    }
}

}  // namespace

void build_topology(const JsonDoc& doc, const json& topo, const std::string& pointer,
                    HardwareProfile& profile) {
  doc.expect_object(topo, pointer);
  const std::string kind = doc.string(doc.require(topo, pointer, "kind"), pointer + "/kind");
  profile.topology = kind;
  profile.routes.assign(profile.devices.size() * profile.devices.size(), {});
  if (kind == "all-to-all") {
    build_all_to_all(doc, topo, pointer, profile);
  } else if (kind == "ring") {
    build_ring(doc, topo, pointer, profile);
  } else if (kind == "switch") {
    build_switch(doc, topo, pointer, profile);
  } else if (kind == "pcie-tree") {
    build_pcie_tree(doc, topo, pointer, profile, [](int, int) { return true; });
  } else if (kind == "nvlink-table") {
    build_nvlink_table(doc, topo, pointer, profile);
  } else if (kind == "matrix") {
    build_matrix(doc, topo, pointer, profile);
  } else {
    doc.fail(pointer + "/kind", fmt::format("unknown topology \"{}\" (expected all-to-all, ring, "
                                            "switch, pcie-tree, nvlink-table or matrix)",
                                            kind));
  }
}

}  // namespace doppler::detail
