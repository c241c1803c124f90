#include "doppler/report/trace.hpp"

#include <map>

#include <nlohmann/json.hpp>

namespace doppler {

namespace {
double to_us(double t, CostUnit unit) {
  return unit == CostUnit::seconds ? t * 1e6 : t / 1e10 * 1e6;
}
}  // namespace

std::string format_chrome_trace(const Graph& g, const Schedule& s, const std::string& title) {
  using nlohmann::ordered_json;
  ordered_json events = ordered_json::array();
  const auto meta = [&](const char* what, int pid, int tid, const std::string& name) {
    ordered_json e = {{"name", what}, {"ph", "M"}, {"pid", pid}};
    if (tid >= 0) e["tid"] = tid;
    e["args"] = {{"name", name}};
    events.push_back(std::move(e));
  };
  meta("process_name", 0, -1, "devices");
  for (int d = 0; d < s.devices; ++d) meta("thread_name", 0, d, "device " + std::to_string(d));
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto i = static_cast<std::size_t>(v);
    if (s.device[i] < 0) continue;
    events.push_back({{"name", g.label(v)},
                      {"cat", std::string(op_kind_name(g.node(v).kind))},
                      {"ph", "X"},
                      {"ts", to_us(s.start[i], s.unit)},
                      {"dur", to_us(s.finish[i] - s.start[i], s.unit)},
                      {"pid", 0},
                      {"tid", s.device[i]},
                      {"args", {{"op", v}, {"ready", to_us(s.ready[i], s.unit)}}}});
  }
  if (!s.transfers.empty()) {
    meta("process_name", 1, -1, "links");
    std::map<std::pair<int, int>, int> pair_track;  // reference model: one track per device pair
    std::map<int, bool> link_named;
    for (const TransferRecord& t : s.transfers) {
      std::vector<int> tracks = t.links;
      if (tracks.empty()) {
        auto [it, fresh] =
            pair_track.try_emplace({t.from, t.to}, static_cast<int>(pair_track.size()));
        if (fresh)
          meta("thread_name", 1, it->second,
               "dev " + std::to_string(t.from) + " -> dev " + std::to_string(t.to));
        tracks = {it->second};
      } else {
        for (int l : t.links)
          if (!link_named[l]) {
            link_named[l] = true;
            meta("thread_name", 1, l,
                 static_cast<std::size_t>(l) < s.link_names.size()
                     ? s.link_names[static_cast<std::size_t>(l)]
                     : "link " + std::to_string(l));
          }
      }
      for (int track : tracks)
        events.push_back(
            {{"name", g.label(t.src) + " -> dev " + std::to_string(t.to)},
             {"cat", "transfer"},
             {"ph", "X"},
             {"ts", to_us(t.start, s.unit)},
             {"dur", to_us(t.finish - t.start, s.unit)},
             {"pid", 1},
             {"tid", track},
             {"args", {{"op", t.src}, {"from", t.from}, {"to", t.to}, {"bytes", t.bytes}}}});
    }
  }
  ordered_json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ms";
  doc["otherData"] = {{"title", title},
                      {"graph", g.meta().name},
                      {"makespan", s.makespan},
                      {"unit", s.unit == CostUnit::seconds
                                   ? "seconds (trace in us)"
                                   : "reference units (trace shows value / 1e10 as seconds)"},
                      {"devices", s.devices},
                      {"cross_transfers", s.cross_transfers},
                      {"cross_bytes", s.cross_bytes}};
  return doc.dump() + "\n";
}

}  // namespace doppler
