#include "doppler/heuristics/groups.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

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

namespace {

bool is_separator(char c) {
  return c == '.' || c == '/' || c == '_';
}

// Where a name's layer index lies: [first, last) of its first digit run between separators,
// before any '['; {0, 0} when it has none.
std::pair<std::size_t, std::size_t> layer_digits(const std::string& name) {
  const std::size_t end = std::min(name.find('['), name.size());
  for (std::size_t i = 1; i < end; ++i) {
    if (!is_separator(name[i - 1])) continue;
    std::size_t j = i;
    while (j < end && name[j] >= '0' && name[j] <= '9') ++j;
    if (j > i && j < end && is_separator(name[j])) return {i, j};
  }
  return {0, 0};
}

// The name with its layer index as '#'; the name itself when it has none.
std::string repeat_key(const std::string& name) {
  const auto [i, j] = layer_digits(name);
  if (j == 0) return name;
  return name.substr(0, i) + '#' + name.substr(j);
}

}  // namespace

int repeat_layer(const std::string& name) {
  const auto [i, j] = layer_digits(name);
  if (j == 0 || j - i > 9) return -1;
  return std::stoi(name.substr(i, j - i));
}

std::vector<std::vector<NodeId>> repeat_classes(const Graph& g) {
  using Key = std::tuple<std::string, int, double, double, double>;
  std::map<Key, std::size_t> index;
  std::vector<std::vector<NodeId>> classes;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.node(v);
    std::string key = repeat_key(n.name);
    if (key == n.name) continue;  // no layer index: no class
    Key k{std::move(key), static_cast<int>(n.kind), n.flops, n.out_bytes,
          n.compute_cost.value_or(-1)};
    auto [it, fresh] = index.try_emplace(std::move(k), classes.size());
    if (fresh) classes.emplace_back();
    classes[it->second].push_back(v);
  }
  std::erase_if(classes, [](const auto& c) { return c.size() < 2; });
  return classes;
}

std::vector<std::vector<NodeId>> repeat_units(int num_nodes,
                                              const std::vector<std::vector<NodeId>>& classes) {
  std::vector<char> in(static_cast<std::size_t>(num_nodes), 0);
  std::vector<std::vector<NodeId>> units = classes;
  for (const auto& c : classes)
    for (NodeId v : c) in[static_cast<std::size_t>(v)] = 1;
  for (NodeId v = 0; v < num_nodes; ++v)
    if (!in[static_cast<std::size_t>(v)]) units.push_back({v});
  return units;
}

std::vector<DeviceId> tie_repeats(std::vector<DeviceId> device_of,
                                  const std::vector<std::vector<NodeId>>& classes, int devices) {
  std::vector<int> count(static_cast<std::size_t>(devices));
  for (const auto& c : classes) {
    std::fill(count.begin(), count.end(), 0);
    for (NodeId v : c) ++count[static_cast<std::size_t>(device_of[static_cast<std::size_t>(v)])];
    const auto d =
        static_cast<DeviceId>(std::max_element(count.begin(), count.end()) - count.begin());
    for (NodeId v : c) device_of[static_cast<std::size_t>(v)] = d;
  }
  return device_of;
}

}  // namespace doppler
