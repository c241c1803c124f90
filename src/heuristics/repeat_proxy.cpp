#include "doppler/heuristics/repeat_proxy.hpp"

#include <algorithm>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/heuristics/groups.hpp"

namespace doppler {

namespace {

// Per op: its layer index when it is in a class, else -1.
std::vector<int> layer_of_ops(const Graph& g, const std::vector<std::vector<NodeId>>& classes) {
  std::vector<int> layer(static_cast<std::size_t>(g.num_nodes()), -1);
  for (const auto& c : classes)
    for (NodeId v : c) layer[static_cast<std::size_t>(v)] = repeat_layer(g.node(v).name);
  return layer;
}

// Per op: its copy's id in the stand-in when kept, else its class's member in the last kept
// layer (found after the kept ops are numbered), else -1.
std::vector<NodeId> stand_in_ops(const std::vector<int>& layer, int last_kept,
                                 const std::vector<std::vector<NodeId>>& classes,
                                 std::vector<NodeId>& op_of) {
  std::vector<NodeId> proxy_of(layer.size(), -1);
  for (std::size_t v = 0; v < layer.size(); ++v) {
    if (layer[v] > last_kept) continue;
    proxy_of[v] = static_cast<NodeId>(op_of.size());
    op_of.push_back(static_cast<NodeId>(v));
  }
  for (const auto& c : classes) {
    const auto last = std::find_if(c.begin(), c.end(), [&](NodeId v) {
      return layer[static_cast<std::size_t>(v)] == last_kept;
    });
    if (last == c.end()) continue;
    for (NodeId v : c)
      if (layer[static_cast<std::size_t>(v)] > last_kept)
        proxy_of[static_cast<std::size_t>(v)] = proxy_of[static_cast<std::size_t>(*last)];
  }
  return proxy_of;
}

// A copy of `n` without its exec description (whose inputs name the graph's ids).
Node without_exec(const Node& n) {
  return Node{n.name,  n.kind,         n.flops,         n.out_bytes,
              n.group, n.compute_cost, n.transfer_cost, std::nullopt};
}

}  // namespace

std::optional<RepeatProxy> repeat_proxy(const Graph& g,
                                        const std::vector<std::vector<NodeId>>& classes,
                                        int layers) {
  const std::vector<int> layer = layer_of_ops(g, classes);
  std::vector<int> indices;
  for (int l : layer)
    if (l >= 0) indices.push_back(l);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  if (layers < 1 || indices.size() < 2 * static_cast<std::size_t>(layers)) return std::nullopt;
  const int last_kept = indices[static_cast<std::size_t>(layers - 1)];

  RepeatProxy p;
  p.layers = layers;
  p.of_layers = static_cast<int>(indices.size());
  p.proxy_of = stand_in_ops(layer, last_kept, classes, p.op_of);
  GraphBuilder b;
  for (NodeId v : p.op_of) b.add_node(without_exec(g.node(v)));
  const auto kept = [&](NodeId v) { return layer[static_cast<std::size_t>(v)] <= last_kept; };
  const auto outside = [&](NodeId v) { return layer[static_cast<std::size_t>(v)] < 0; };
  for (const Edge& e : g.edges()) {
    // Kept both ends, or one end outside the layers and the other's class member in its stead.
    if (!(kept(e.src) && kept(e.dst)) && !outside(e.src) && !outside(e.dst)) continue;
    const NodeId s = p.proxy_of[static_cast<std::size_t>(e.src)];
    const NodeId d = p.proxy_of[static_cast<std::size_t>(e.dst)];
    if (s >= 0 && d >= 0 && s != d) b.add_edge(s, d, e.bytes, e.transfer_cost);
  }
  b.set_meta(g.meta());
  try {
    p.graph = b.build();
  } catch (const GraphError&) {
    return std::nullopt;  // a redirected edge closed a cycle
  }
  return p;
}

std::vector<DeviceId> expand_proxy(const RepeatProxy& proxy,
                                   std::span<const DeviceId> proxy_device_of,
                                   std::vector<DeviceId> device_of) {
  for (std::size_t v = 0; v < device_of.size(); ++v)
    if (proxy.proxy_of[v] >= 0)
      device_of[v] = proxy_device_of[static_cast<std::size_t>(proxy.proxy_of[v])];
  return device_of;
}

std::vector<DeviceId> restrict_to_proxy(const RepeatProxy& proxy,
                                        std::span<const DeviceId> device_of) {
  std::vector<DeviceId> out;
  out.reserve(proxy.op_of.size());
  for (NodeId v : proxy.op_of) out.push_back(device_of[static_cast<std::size_t>(v)]);
  return out;
}

}  // namespace doppler
