#include "doppler/graph/io/dot_reader.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "cgraph_reader.hpp"
#include "dot_text.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"
#include "doppler/util/utf8.hpp"

namespace doppler {

namespace {

constexpr const char* kWeight = "Weight";
constexpr std::array<const char*, 4> kDeviceAttrs = {"Processors", "processors", "NumProcessors",
                                                     "Number of processors"};
constexpr std::array<const char*, 4> kOptimumAttrs = {
    "Optimal schedule length", "OptimalScheduleLength", "Optimum", "optimum"};
constexpr const char* kLengthAttr = "Total schedule length";
constexpr const char* kProcessorAttr = "Processor";
constexpr std::array<const char*, 4> kStartAttrs = {"Start", "Start time", "StartTime", "start"};
constexpr int kMaxCycleEdgesLocated = 64;

// One add_edge call: its ends and which parallel tail -> head edge it is (0-based).
struct EdgeRecord {
  NodeId tail, head;
  int k;
};

// What the conversion needs besides cgraph: the file, its text and the node names.
struct Source {
  const dot::DotText& text;
  const std::string& file;
  std::vector<std::string> names;
  std::vector<Agnode_t*> nodes;
};

// A non-negative finite number, or an InputError at `line()` naming `what`.
template <class LineFn>
double cost(const std::string& value, const std::string& what, const std::string& file,
            LineFn line) {
  double x = 0;
  std::string why;
  if (!parse_finite_double(value, x, why)) throw InputError(file, line(), what + ": " + why);
  if (x < 0) throw InputError(file, line(), fmt::format("{} is negative ({})", what, value));
  return x;
}

// Value of the first of `names` set on `object`, with the name; empty when none is.
template <std::size_t K>
std::pair<std::string, const char*> first_attribute(void* object,
                                                    const std::array<const char*, K>& names) {
  for (const char* name : names) {
    std::string v = dot::attribute(object, name);
    if (!v.empty()) return {std::move(v), name};
  }
  return {{}, nullptr};
}

void check_limits(Agraph_t* g, const Source& src, const ReadLimits& limits) {
  if (agnnodes(g) > limits.max_ops) {
    std::int64_t i = 0;
    Agnode_t* n = agfstnode(g);
    for (; i < limits.max_ops; ++i) n = agnxtnode(g, n);
    throw InputError(src.file, src.text.node_line(agnameof(n)),
                     fmt::format("more than {} nodes, the limit (raise it with DOPPLER_MAX_OPS)",
                                 limits.max_ops));
  }
  if (agnedges(g) > limits.max_edges) {
    std::int64_t i = 0;
    for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n))
      for (Agedge_t* e = agfstout(g, n); e; e = agnxtout(g, e))
        if (i++ == limits.max_edges)
          throw InputError(
              src.file, src.text.edge_line(agnameof(agtail(e)), agnameof(aghead(e)), 0),
              fmt::format("more than {} edges, the limit (raise it with DOPPLER_MAX_EDGES)",
                          limits.max_edges));
  }
}

void add_nodes(Agraph_t* g, Source& src, GraphBuilder& b,
               std::unordered_map<Agnode_t*, NodeId>& id_of) {
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
    Node nd;
    nd.name = agnameof(n);
    if (!valid_utf8(nd.name))
      throw InputError(src.file, src.text.node_line(nd.name),
                       fmt::format("node name {} is not valid UTF-8", quote_token(nd.name)));
    const std::string w = dot::attribute(n, kWeight);
    if (w.empty())
      throw InputError(
          src.file, src.text.node_line(nd.name),
          fmt::format("node {} has no Weight (its compute cost)", quote_token(nd.name)));
    nd.compute_cost = cost(w, fmt::format("node {}: Weight", quote_token(nd.name)), src.file,
                           [&] { return src.text.node_line(nd.name, kWeight); });
    nd.transfer_cost = 0.0;  // every edge carries its own
    id_of[n] = b.add_node(nd);
    src.names.push_back(std::move(nd.name));
    src.nodes.push_back(n);
  }
}

// Adds every edge with its own transfer cost; parallel edges with the same Weight collapse into
// one (returns how many did), with different Weights they are an error.
int add_edges(Agraph_t* g, const Source& src, GraphBuilder& b,
              const std::unordered_map<Agnode_t*, NodeId>& id_of,
              std::vector<EdgeRecord>& records) {
  std::map<std::pair<NodeId, NodeId>, std::pair<double, int>> seen;  // weight, count
  int collapsed = 0;
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
    for (Agedge_t* e = agfstout(g, n); e; e = agnxtout(g, e)) {
      const NodeId u = id_of.at(n), v = id_of.at(aghead(e));
      auto [it, fresh] = seen.try_emplace({u, v}, 0.0, 0);
      const int k = it->second.second++;
      const auto& tail = src.names[static_cast<std::size_t>(u)];
      const auto& head = src.names[static_cast<std::size_t>(v)];
      const auto line = [&] { return src.text.edge_line(tail, head, k); };
      const std::string what = fmt::format("edge {} -> {}", quote_token(tail), quote_token(head));
      const std::string w = dot::attribute(e, kWeight);
      if (w.empty())
        throw InputError(src.file, line(), what + " has no Weight (its transfer cost)");
      const double c = cost(w, what + ": Weight", src.file, line);
      if (!fresh) {
        if (c != it->second.first)
          throw InputError(src.file, line(),
                           fmt::format("{} is given twice with different Weights ({} and {})", what,
                                       it->second.first, c));
        ++collapsed;
        continue;
      }
      it->second.first = c;
      b.add_edge(u, v, std::nullopt, c);
      records.push_back({u, v, k});
    }
  }
  return collapsed;
}

// A line of an edge on a cycle of the edges (the latest of the first few in the file).
std::int64_t cycle_line(const Source& src, const std::vector<EdgeRecord>& records) {
  const std::size_t n = src.names.size();
  std::vector<std::vector<std::size_t>> in(n);
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<std::size_t>> out(n);
  for (std::size_t i = 0; i < records.size(); ++i) {
    in[static_cast<std::size_t>(records[i].head)].push_back(i);
    out[static_cast<std::size_t>(records[i].tail)].push_back(i);
    ++indegree[static_cast<std::size_t>(records[i].head)];
  }
  std::vector<std::size_t> ready;
  for (std::size_t v = 0; v < n; ++v)
    if (indegree[v] == 0) ready.push_back(v);
  while (!ready.empty()) {
    const std::size_t v = ready.back();
    ready.pop_back();
    for (const std::size_t i : out[v])
      if (--indegree[static_cast<std::size_t>(records[i].head)] == 0)
        ready.push_back(static_cast<std::size_t>(records[i].head));
  }
  // Nodes left have a predecessor left: walk backwards until a node repeats.
  std::size_t v = 0;
  while (v < n && indegree[v] == 0) ++v;
  if (v == n) return src.text.header_line();
  std::vector<int> seen_at(n, -1);
  std::vector<std::size_t> walk;  // edge ids
  while (seen_at[v] < 0) {
    seen_at[v] = static_cast<int>(walk.size());
    for (const std::size_t i : in[v])
      if (indegree[static_cast<std::size_t>(records[i].tail)] > 0) {
        walk.push_back(i);
        v = static_cast<std::size_t>(records[i].tail);
        break;
      }
  }
  std::int64_t line = 0;
  const auto first = static_cast<std::size_t>(seen_at[v]);
  for (std::size_t j = first; j < walk.size() && j < first + kMaxCycleEdgesLocated; ++j) {
    const EdgeRecord& r = records[walk[j]];
    line = std::max(line, src.text.edge_line(src.names[static_cast<std::size_t>(r.tail)],
                                             src.names[static_cast<std::size_t>(r.head)], r.k));
  }
  return line;
}

GraphMeta read_meta(Agraph_t* g, const Source& src) {
  GraphMeta meta;
  meta.origin = "dot";
  const std::string name = agnameof(g);
  if (!name.empty() && name.front() != '%') meta.name = name;  // "%N": an anonymous graph
  if (!valid_utf8(meta.name))
    throw InputError(src.file, src.text.header_line(), "the graph name is not valid UTF-8");
  if (const auto [v, attr] = first_attribute(g, kDeviceAttrs); attr) {
    std::int64_t p = 0;
    std::string why;
    const auto line = [&, attr = attr] { return src.text.graph_attr_line(attr); };
    if (!parse_int64(v, p, why))
      throw InputError(src.file, line(), fmt::format("{}: {}", attr, why));
    if (p < 1 || p > kMaxDevices)
      throw InputError(src.file, line(),
                       fmt::format("{} = {} is out of range (1..{})", attr, p, kMaxDevices));
    meta.params["devices"] = std::to_string(p);
  }
  if (const auto [v, attr] = first_attribute(g, kOptimumAttrs); attr)
    meta.params["optimum"] = fmt::format(
        "{}", cost(v, attr, src.file, [&, attr = attr] { return src.text.graph_attr_line(attr); }));
  if (const std::string v = dot::attribute(g, kLengthAttr); !v.empty())
    meta.params["schedule_length"] = fmt::format("{}", cost(v, kLengthAttr, src.file, [&] {
                                                   return src.text.graph_attr_line(kLengthAttr);
                                                 }));
  return meta;
}

Graph build(GraphBuilder& b, const Source& src, const std::vector<EdgeRecord>& records) {
  try {
    return b.build();
  } catch (const GraphError& e) {
    std::int64_t line = 0;
    if (e.node() >= 0) {
      line = src.text.node_line(src.names[static_cast<std::size_t>(e.node())]);
    } else if (e.edge() >= 0) {
      const EdgeRecord& r = records[static_cast<std::size_t>(e.edge())];
      line = src.text.edge_line(src.names[static_cast<std::size_t>(r.tail)],
                                src.names[static_cast<std::size_t>(r.head)], r.k);
    } else {
      line = cycle_line(src, records);
    }
    throw InputError(src.file, line, e.problem());
  }
}

// The Processor of every node, numbered from 0 when some node has Processor 0, else from 1.
std::vector<DeviceId> read_devices(const Source& src) {
  std::vector<std::int64_t> raw;
  for (std::size_t v = 0; v < src.nodes.size(); ++v) {
    const std::string& name = src.names[v];
    const std::string p = dot::attribute(src.nodes[v], kProcessorAttr);
    if (p.empty())
      throw InputError(
          src.file, src.text.node_line(name),
          fmt::format("node {} has no Processor, but other nodes have one", quote_token(name)));
    std::int64_t d = 0;
    std::string why;
    const auto line = [&] { return src.text.node_line(name, kProcessorAttr); };
    if (!parse_int64(p, d, why))
      throw InputError(src.file, line(),
                       fmt::format("node {}: Processor: {}", quote_token(name), why));
    if (d < 0 || d > kMaxDevices)
      throw InputError(src.file, line(),
                       fmt::format("node {}: Processor {} is out of range (0..{})",
                                   quote_token(name), d, kMaxDevices));
    raw.push_back(d);
  }
  const std::int64_t base = std::find(raw.begin(), raw.end(), 0) != raw.end() ? 0 : 1;
  std::vector<DeviceId> out;
  for (const std::int64_t d : raw) out.push_back(static_cast<DeviceId>(d - base));
  return out;
}

// The order by (start time, topological rank); empty when no node has a start time.
std::vector<NodeId> read_order(const Source& src, const Graph& graph) {
  std::vector<std::pair<std::string, const char*>> raw;  // value, attribute name
  bool any = false;
  for (Agnode_t* n : src.nodes) {
    raw.push_back(first_attribute(n, kStartAttrs));
    any = any || raw.back().second;
  }
  if (!any) return {};
  std::vector<double> start;
  for (std::size_t v = 0; v < src.nodes.size(); ++v) {
    const std::string& name = src.names[v];
    const auto& [s, key] = raw[v];
    if (!key)
      throw InputError(src.file, src.text.node_line(name),
                       fmt::format("node {} has no start time (Start, \"Start time\", StartTime or "
                                   "start), but other nodes have one",
                                   quote_token(name)));
    start.push_back(cost(s, fmt::format("node {}: {}", quote_token(name), key), src.file,
                         [&, key = key] { return src.text.node_line(name, key); }));
  }
  std::vector<NodeId> order(src.nodes.size());
  for (std::size_t v = 0; v < order.size(); ++v) order[v] = static_cast<NodeId>(v);
  std::sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    if (start[ia] != start[ib]) return start[ia] < start[ib];
    return graph.topo_rank()[ia] < graph.topo_rank()[ib];
  });
  return order;
}

std::optional<Assignment> read_schedule(Agraph_t* g, const Source& src, const Graph& graph) {
  bool any = false;
  if (agattr(g, AGNODE, const_cast<char*>(kProcessorAttr), nullptr))
    for (Agnode_t* n : src.nodes) any = any || !dot::attribute(n, kProcessorAttr).empty();
  if (!any) return std::nullopt;
  Assignment a;
  a.method = "dot";
  a.device_of = read_devices(src);
  const DeviceId top = *std::max_element(a.device_of.begin(), a.device_of.end());
  const auto it = graph.meta().params.find("devices");
  a.devices = it != graph.meta().params.end() ? std::stoi(it->second) : top + 1;
  for (std::size_t v = 0; v < a.device_of.size(); ++v)
    if (a.device_of[v] >= a.devices)
      throw InputError(src.file, src.text.node_line(src.names[v], kProcessorAttr),
                       fmt::format("node {}: Processor {} is beyond the {} processors the graph "
                                   "declares",
                                   quote_token(src.names[v]),
                                   dot::attribute(src.nodes[v], kProcessorAttr), a.devices));
  if (a.devices > kMaxDevices)
    throw InputError(
        src.file, src.text.header_line(),
        fmt::format("the schedule uses {} processors, more than {}", a.devices, kMaxDevices));
  a.order = read_order(src, graph);
  a.validate(graph, 0, src.file);
  return a;
}

}  // namespace

DotTaskGraph parse_dot_task_graph(std::string_view text, const std::string& file,
                                  std::vector<std::string>* warnings, const ReadLimits& limits) {
  if (text.size() > limits.max_file_bytes)
    throw InputError(file, 0,
                     fmt::format("{} bytes, more than {}, the limit (raise it with "
                                 "DOPPLER_MAX_FILE_BYTES)",
                                 text.size(), limits.max_file_bytes));
  const dot::DotText dot_text(text, file);
  dot::CgraphReader reader;
  Agraph_t* g = reader.parse(dot_text, file);
  dot_text.check_single_graph();
  if (!agisdirected(g))
    throw InputError(file, dot_text.header_line(),
                     "an undirected graph: a task graph is a 'digraph' (edges a -> b)");
  Source src{dot_text, file, {}, {}};
  check_limits(g, src, limits);

  GraphBuilder b;
  std::unordered_map<Agnode_t*, NodeId> id_of;
  add_nodes(g, src, b, id_of);
  std::vector<EdgeRecord> records;
  const int collapsed = add_edges(g, src, b, id_of, records);
  b.set_meta(read_meta(g, src));
  DotTaskGraph out;
  out.graph = build(b, src, records);
  if (collapsed > 0 && warnings)
    warnings->push_back(
        fmt::format("{}: {} parallel edge(s) with equal Weights collapsed", file, collapsed));
  out.schedule = read_schedule(g, src, out.graph);
  return out;
}

Graph parse_dot_graph(std::string_view text, const std::string& file,
                      std::vector<std::string>* warnings, const ReadLimits& limits) {
  return parse_dot_task_graph(text, file, warnings, limits).graph;
}

std::optional<Assignment> read_dot_schedule(const std::filesystem::path& path) {
  return parse_dot_task_graph(read_file(path), path.string()).schedule;
}

}  // namespace doppler
