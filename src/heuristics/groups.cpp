#include "doppler/heuristics/groups.hpp"

#include <algorithm>
#include <map>

namespace doppler {

std::vector<std::vector<NodeId>> tensor_groups(const Graph& g, bool infer) {
  std::vector<std::vector<NodeId>> groups;
  bool has_groups = false;
  for (const Node& n : g.nodes()) has_groups = has_groups || n.group >= 0;
  if (has_groups) {
    std::map<int, std::size_t> index;
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const int grp = g.node(v).group;
      if (grp < 0) {
        groups.push_back({v});
        continue;
      }
      auto [it, fresh] = index.try_emplace(grp, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(v);
    }
  } else if (infer && !g.has_edge_transfer_costs()) {  // per-edge costs: no identical ops
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      bool joins = false;
      if (!groups.empty()) {
        const auto& cur = groups.back();
        const Node& a = g.node(cur.front());
        const Node& b = g.node(v);
        joins = a.kind == b.kind && a.compute_cost == b.compute_cost &&
                a.transfer_cost == b.transfer_cost;
        for (NodeId u : g.predecessors(v))
          if (joins && u >= cur.front()) joins = std::find(cur.begin(), cur.end(), u) == cur.end();
      }
      if (joins)
        groups.back().push_back(v);
      else
        groups.push_back({v});
    }
  } else {
    for (NodeId v = 0; v < g.num_nodes(); ++v) groups.push_back({v});
  }
  const auto& rank = g.topo_rank();
  const auto first = [&](const std::vector<NodeId>& grp) {
    int r = rank[static_cast<std::size_t>(grp.front())];
    for (NodeId v : grp) r = std::min(r, rank[static_cast<std::size_t>(v)]);
    return r;
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const auto& a, const auto& b) { return first(a) < first(b); });
  return groups;
}

}  // namespace doppler
