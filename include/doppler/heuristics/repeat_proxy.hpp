#pragma once
// A stand-in for a graph of repeated layers: its first few layers only, for a tied search that
// prices a placement of every layer alike in a fraction of the simulator's time.
#include <optional>
#include <span>
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler {

/// A graph cut down to its first `layers` repeated layers, with the ops outside every layer.
struct RepeatProxy {
  Graph graph;                   ///< the stand-in (no exec descriptions)
  std::vector<NodeId> op_of;     ///< per stand-in op: the graph's op it copies (ascending)
  std::vector<NodeId> proxy_of;  ///< per graph op: the stand-in op that places it (its copy, or
                                 ///< its class's member in the last kept layer); -1: none
  int layers = 0;                ///< layers kept
  int of_layers = 0;             ///< layers of the graph
};

/// The stand-in of `g` for its repeat classes (repeat_classes): the ops of the `layers` lowest
/// layer indices (repeat_layer of the classes' ops) and every op in no class. An edge between a
/// kept op outside the layers and an op of a later layer is redirected to that op's class member
/// in the last kept layer (so the final norm reads the last kept layer, and the backward pass of
/// a training step starts there); other edges into or out of later layers are dropped. With
/// every class on one device, the stand-in's makespan follows the graph's: on the Llama-7B
/// forward pass and training step with 4 of 32 layers, 6-10x cheaper to simulate, the changes
/// one to three class moves make rank alike (Spearman 0.95-0.97). Nullopt when `g` has fewer
/// than 2 x `layers` layers or the redirected edges would close a cycle. O(N + E log E).
std::optional<RepeatProxy> repeat_proxy(const Graph& g,
                                        const std::vector<std::vector<NodeId>>& classes,
                                        int layers);

/// The stand-in's placement `proxy_device_of` carried to the graph: every op with a stand-in op
/// takes its device, the others keep theirs in `device_of`.
std::vector<DeviceId> expand_proxy(const RepeatProxy& proxy,
                                   std::span<const DeviceId> proxy_device_of,
                                   std::vector<DeviceId> device_of);

/// The graph's placement `device_of` restricted to the stand-in's ops.
std::vector<DeviceId> restrict_to_proxy(const RepeatProxy& proxy,
                                        std::span<const DeviceId> device_of);

}  // namespace doppler
