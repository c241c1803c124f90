#include "doppler/heuristics/coarsen.hpp"

#include <algorithm>
#include <numeric>

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser: a seeded tie-break
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Heavy-edge matching over edges whose ends are one level apart: mate[v] = partner or -1.
std::vector<NodeId> match_heavy_edges(const Graph& g, const CoarsenCosts& c,
                                      const CoarsenSettings& s) {
  const std::vector<int> level = hop_levels(g);
  std::vector<EdgeId> cand;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& ed = g.edge(e);
    if (level[static_cast<std::size_t>(ed.dst)] == level[static_cast<std::size_t>(ed.src)] + 1)
      cand.push_back(e);
  }
  std::vector<std::uint64_t> tie(static_cast<std::size_t>(g.num_edges()));
  for (EdgeId e : cand) tie[static_cast<std::size_t>(e)] = mix(s.seed ^ mix(e));
  std::sort(cand.begin(), cand.end(), [&](EdgeId a, EdgeId b) {
    const double wa = c.transfer[static_cast<std::size_t>(a)];
    const double wb = c.transfer[static_cast<std::size_t>(b)];
    return wa != wb ? wa > wb : tie[static_cast<std::size_t>(a)] < tie[static_cast<std::size_t>(b)];
  });
  std::vector<NodeId> mate(static_cast<std::size_t>(g.num_nodes()), -1);
  for (EdgeId e : cand) {
    const auto u = static_cast<std::size_t>(g.edge(e).src);
    const auto v = static_cast<std::size_t>(g.edge(e).dst);
    if (mate[u] >= 0 || mate[v] >= 0) continue;
    if (s.max_cluster > 0 && c.compute[u] + c.compute[v] > s.max_cluster) continue;
    if (!s.part.empty() && s.part[u] != s.part[v]) continue;
    mate[u] = static_cast<NodeId>(v);
    mate[v] = static_cast<NodeId>(u);
  }
  return mate;
}

// Cluster ids from a matching, numbered by each cluster's lowest member.
std::vector<NodeId> clusters_from_mates(const std::vector<NodeId>& mate) {
  std::vector<NodeId> cl(mate.size(), -1);
  NodeId next = 0;
  for (std::size_t v = 0; v < mate.size(); ++v) {
    if (cl[v] >= 0) continue;
    cl[v] = next;
    if (mate[v] >= 0) cl[static_cast<std::size_t>(mate[v])] = next;
    ++next;
  }
  return cl;
}

// Strongly connected components of the quotient (iterative Tarjan): component id per cluster.
std::vector<int> quotient_sccs(const Graph& g, const std::vector<NodeId>& cl, int k) {
  std::vector<int> begin(static_cast<std::size_t>(k) + 1, 0), adj;
  for (const Edge& e : g.edges())
    if (cl[static_cast<std::size_t>(e.src)] != cl[static_cast<std::size_t>(e.dst)])
      ++begin[static_cast<std::size_t>(cl[static_cast<std::size_t>(e.src)]) + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  adj.resize(static_cast<std::size_t>(begin.back()));
  std::vector<int> fill(begin.begin(), begin.end() - 1);
  for (const Edge& e : g.edges()) {
    const int a = cl[static_cast<std::size_t>(e.src)], b = cl[static_cast<std::size_t>(e.dst)];
    if (a != b) adj[static_cast<std::size_t>(fill[static_cast<std::size_t>(a)]++)] = b;
  }
  const auto uk = static_cast<std::size_t>(k);
  std::vector<int> index(uk, -1), low(uk, 0), comp(uk, -1), stack, call, edge_pos(uk, 0);
  std::vector<char> on_stack(uk, 0);
  int counter = 0, comps = 0;
  for (int root = 0; root < k; ++root) {
    if (index[static_cast<std::size_t>(root)] >= 0) continue;
    call.push_back(root);
    while (!call.empty()) {
      const auto v = static_cast<std::size_t>(call.back());
      if (index[v] < 0) {
        index[v] = low[v] = counter++;
        edge_pos[v] = begin[v];
        stack.push_back(static_cast<int>(v));
        on_stack[v] = 1;
      }
      if (edge_pos[v] < begin[v + 1]) {
        const auto w = static_cast<std::size_t>(adj[static_cast<std::size_t>(edge_pos[v]++)]);
        if (index[w] < 0)
          call.push_back(static_cast<int>(w));
        else if (on_stack[w])
          low[v] = std::min(low[v], index[w]);
        continue;
      }
      call.pop_back();
      if (!call.empty()) {
        const auto parent = static_cast<std::size_t>(call.back());
        low[parent] = std::min(low[parent], low[v]);
      }
      if (low[v] != index[v]) continue;
      for (int w = -1; w != static_cast<int>(v);) {
        w = stack.back();
        stack.pop_back();
        on_stack[static_cast<std::size_t>(w)] = 0;
        comp[static_cast<std::size_t>(w)] = comps;
      }
      ++comps;
    }
  }
  return comp;
}

// Splits every pair whose cluster lies on a cycle of the quotient. One pass suffices: a cycle of
// the refined quotient maps to a closed walk inside one strongly connected component.
void split_cyclic_pairs(const Graph& g, std::vector<NodeId>& mate) {
  const std::vector<NodeId> cl = clusters_from_mates(mate);
  const int k = cl.empty() ? 0 : *std::max_element(cl.begin(), cl.end()) + 1;
  const std::vector<int> comp = quotient_sccs(g, cl, k);
  std::vector<int> comp_size(static_cast<std::size_t>(k), 0);
  for (int c : comp) ++comp_size[static_cast<std::size_t>(c)];
  for (std::size_t v = 0; v < mate.size(); ++v) {
    const int c = comp[static_cast<std::size_t>(cl[v])];
    if (comp_size[static_cast<std::size_t>(c)] > 1) mate[v] = -1;
  }
}

}  // namespace

CoarsenCosts nominal_costs(const Graph& g, const CostModel& cost) {
  CoarsenCosts c;
  c.compute.resize(static_cast<std::size_t>(g.num_nodes()));
  c.transfer.resize(static_cast<std::size_t>(g.num_edges()));
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    c.compute[static_cast<std::size_t>(v)] = cost.compute(v);
  for (EdgeId e = 0; e < g.num_edges(); ++e)
    c.transfer[static_cast<std::size_t>(e)] = cost.transfer(e);
  return c;
}

Coarsening coarsen_once(const Graph& g, const CoarsenCosts& costs,
                        const CoarsenSettings& settings) {
  if (costs.compute.size() != static_cast<std::size_t>(g.num_nodes()) ||
      costs.transfer.size() != static_cast<std::size_t>(g.num_edges()))
    throw InputError("coarsen: costs do not match the graph");
  if (!settings.part.empty() && settings.part.size() != static_cast<std::size_t>(g.num_nodes()))
    throw InputError("coarsen: parts do not match the graph");
  std::vector<NodeId> mate = match_heavy_edges(g, costs, settings);
  split_cyclic_pairs(g, mate);
  return quotient_graph(g, costs, clusters_from_mates(mate));
}

Coarsening quotient_graph(const Graph& g, const CoarsenCosts& costs,
                          std::vector<NodeId> cluster_of) {
  const int k =
      cluster_of.empty() ? 0 : *std::max_element(cluster_of.begin(), cluster_of.end()) + 1;
  Coarsening out;
  out.costs.compute.assign(static_cast<std::size_t>(k), 0.0);
  std::vector<double> flops(static_cast<std::size_t>(k), 0.0);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto c = static_cast<std::size_t>(cluster_of[static_cast<std::size_t>(v)]);
    out.costs.compute[c] += costs.compute[static_cast<std::size_t>(v)];
    flops[c] += g.node(v).flops;
  }
  GraphBuilder b;
  for (int c = 0; c < k; ++c) {
    Node n;
    n.flops = flops[static_cast<std::size_t>(c)];
    n.compute_cost = out.costs.compute[static_cast<std::size_t>(c)];
    n.transfer_cost = 0.0;
    b.add_node(std::move(n));
  }
  for (EdgeId e = 0; e < g.num_edges(); ++e) {  // duplicates collapse keeping the largest cost
    const Edge& ed = g.edge(e);
    const NodeId a = cluster_of[static_cast<std::size_t>(ed.src)];
    const NodeId d = cluster_of[static_cast<std::size_t>(ed.dst)];
    if (a != d) b.add_edge(a, d, g.edge_bytes(e), costs.transfer[static_cast<std::size_t>(e)]);
  }
  GraphMeta meta = g.meta();
  meta.name += "-coarse";
  b.set_meta(std::move(meta));
  try {
    out.graph = b.build();
  } catch (const GraphError& err) {
    throw InputError(std::string("coarsen: the clustering makes a cycle: ") + err.what());
  }
  out.costs.transfer.resize(static_cast<std::size_t>(out.graph.num_edges()));
  for (EdgeId e = 0; e < out.graph.num_edges(); ++e)
    out.costs.transfer[static_cast<std::size_t>(e)] = out.graph.edge_transfer_cost(e);
  out.cluster_of = std::move(cluster_of);
  return out;
}

}  // namespace doppler
