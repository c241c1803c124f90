#include <limits>

#include "doppler/heuristics/placer.hpp"

namespace doppler {

void colocate_inputs(const Graph& g, Assignment& a) {
  std::vector<int> rank(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v = 0; v < g.num_nodes(); ++v) rank[static_cast<std::size_t>(v)] = v;
  for (std::size_t i = 0; i < a.order.size(); ++i)
    rank[static_cast<std::size_t>(a.order[i])] = static_cast<int>(i);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    if (g.node(v).kind != OpKind::input) continue;
    NodeId first = -1;
    for (NodeId w : g.successors(v))
      if (first < 0 || rank[static_cast<std::size_t>(w)] < rank[static_cast<std::size_t>(first)])
        first = w;
    if (first >= 0)
      a.device_of[static_cast<std::size_t>(v)] = a.device_of[static_cast<std::size_t>(first)];
  }
}

}  // namespace doppler
