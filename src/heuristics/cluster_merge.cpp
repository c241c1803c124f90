// Merging the clusters of an unbounded-device clustering onto P devices.
#include <algorithm>
#include <numeric>
#include <queue>
#include <span>

#include "doppler/heuristics/clustering.hpp"

namespace doppler {

namespace {

/// A device and the work merged onto it so far.
struct Load {
  double work;
  DeviceId device;
};

/// Min-heap order: least work first, then lowest device id.
struct MoreLoaded {
  bool operator()(const Load& a, const Load& b) const {
    return a.work != b.work ? a.work > b.work : a.device > b.device;
  }
};

/// Nominal compute of each cluster.
std::vector<double> cluster_work(const Clustering& c, const CostModel& cost) {
  std::vector<double> work(static_cast<std::size_t>(c.clusters), 0.0);
  for (NodeId v = 0; v < static_cast<NodeId>(c.cluster_of.size()); ++v)
    work[static_cast<std::size_t>(c.cluster_of[static_cast<std::size_t>(v)])] += cost.compute(v);
  return work;
}

/// Clusters in the order the rule visits them: by start (cluster ids are by first start) for
/// glb, by decreasing work (ties: earlier start) for lpt.
std::vector<int> visit_order(const std::vector<double>& work, ClusterMerge rule) {
  std::vector<int> order(work.size());
  std::iota(order.begin(), order.end(), 0);
  if (rule == ClusterMerge::lpt)
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return work[static_cast<std::size_t>(a)] > work[static_cast<std::size_t>(b)];
    });
  return order;
}

/// Device of each cluster: each visited cluster on the device with the least work so far.
std::vector<DeviceId> least_loaded(const std::vector<double>& work, const std::vector<int>& order,
                                   int devices) {
  std::priority_queue<Load, std::vector<Load>, MoreLoaded> heap;
  for (DeviceId d = 0; d < devices; ++d) heap.push({0.0, d});
  std::vector<DeviceId> device(work.size(), 0);
  for (int k : order) {
    Load l = heap.top();
    heap.pop();
    device[static_cast<std::size_t>(k)] = l.device;
    l.work += work[static_cast<std::size_t>(k)];
    heap.push(l);
  }
  return device;
}

/// Planned start and end of each cluster (its first op's start, its last op's finish).
void cluster_span(const Clustering& c, const CostModel& cost, std::vector<double>& first,
                  std::vector<double>& last) {
  first.assign(static_cast<std::size_t>(c.clusters), -1);
  last.assign(static_cast<std::size_t>(c.clusters), 0);
  for (NodeId v : c.order) {
    const auto k = static_cast<std::size_t>(c.cluster_of[static_cast<std::size_t>(v)]);
    const double s = c.start[static_cast<std::size_t>(v)];
    if (first[k] < 0) first[k] = s;
    last[k] = std::max(last[k], s + cost.compute(v));
  }
}

/// Device of each cluster, visited by start: the device where it would end earliest if its ops
/// ran after the device's estimated finish f (end = max(f + work, planned end) when f is past
/// its start, its planned end otherwise); ties: least work so far, then lowest id. O(K P).
std::vector<DeviceId> earliest_end(const Clustering& c, const CostModel& cost,
                                   const std::vector<double>& work, int devices) {
  std::vector<double> first, last;
  cluster_span(c, cost, first, last);
  const auto p = static_cast<std::size_t>(devices);
  std::vector<double> fin(p, 0), load(p, 0);
  std::vector<DeviceId> device(work.size(), 0);
  for (std::size_t k = 0; k < work.size(); ++k) {
    std::size_t best = 0;
    double best_end = 0;
    for (std::size_t d = 0; d < p; ++d) {
      const double end = fin[d] <= first[k] ? last[k] : std::max(fin[d] + work[k], last[k]);
      if (d == 0 || end < best_end || (end == best_end && load[d] < load[best])) {
        best = d;
        best_end = end;
      }
    }
    device[k] = static_cast<DeviceId>(best);
    fin[best] = best_end;
    load[best] += work[k];
  }
  return device;
}

/// Ops of each cluster, as CSR offsets into one list.
void cluster_members(const Clustering& c, std::vector<int>& offset, std::vector<NodeId>& ops) {
  offset.assign(static_cast<std::size_t>(c.clusters) + 1, 0);
  for (int k : c.cluster_of) ++offset[static_cast<std::size_t>(k) + 1];
  for (std::size_t k = 0; k < static_cast<std::size_t>(c.clusters); ++k) offset[k + 1] += offset[k];
  ops.resize(c.cluster_of.size());
  std::vector<int> at(offset.begin(), offset.end() - 1);
  for (NodeId v : c.order)
    ops[static_cast<std::size_t>(
        at[static_cast<std::size_t>(c.cluster_of[static_cast<std::size_t>(v)])]++)] = v;
}

/// Nominal transfer time of the edges between the ops `ops` (one cluster) and ops of clusters
/// already on a device (`device` per cluster, -1 when not yet merged), added up per device into
/// `near` (size P, zeroed first); returns their total.
double transfers_by_device(const Graph& g, const Clustering& c, const CostModel& cost,
                           std::span<const NodeId> ops, const std::vector<DeviceId>& device,
                           std::vector<double>& near) {
  std::fill(near.begin(), near.end(), 0.0);
  double total = 0;
  const auto add = [&](NodeId u, EdgeId e) {
    const DeviceId d = device[static_cast<std::size_t>(c.cluster_of[static_cast<std::size_t>(u)])];
    if (d < 0) return;
    near[static_cast<std::size_t>(d)] += cost.transfer(e);
    total += cost.transfer(e);
  };
  for (NodeId v : ops) {
    for (EdgeId e : g.in_edges(v)) add(g.edge(e).src, e);
    const auto succ = g.successors(v);
    for (std::size_t j = 0; j < succ.size(); ++j)
      add(succ[j], g.out_edge_begin(v) + static_cast<EdgeId>(j));
  }
  return total;
}

/// Device of each cluster, visited by start: the device minimising its estimated end
/// max(f, start) + work (f: the device's estimated finish) plus the nominal transfer time of
/// its edges to clusters already on other devices; ties: least work so far, then lowest id.
/// O(N + E + K P).
std::vector<DeviceId> communication_aware(const Graph& g, const Clustering& c,
                                          const CostModel& cost, const std::vector<double>& work,
                                          int devices) {
  std::vector<double> first, last;
  cluster_span(c, cost, first, last);
  std::vector<int> offset;
  std::vector<NodeId> ops;
  cluster_members(c, offset, ops);
  const auto p = static_cast<std::size_t>(devices);
  std::vector<double> fin(p, 0), load(p, 0), near(p, 0);
  std::vector<DeviceId> device(work.size(), -1);
  for (std::size_t k = 0; k < work.size(); ++k) {
    const std::span<const NodeId> members(ops.data() + offset[k],
                                          static_cast<std::size_t>(offset[k + 1] - offset[k]));
    const double total = transfers_by_device(g, c, cost, members, device, near);
    std::size_t best = 0;
    double best_score = 0;
    for (std::size_t d = 0; d < p; ++d) {
      const double score = std::max(fin[d], first[k]) + work[k] + (total - near[d]);
      if (d == 0 || score < best_score || (score == best_score && load[d] < load[best])) {
        best = d;
        best_score = score;
      }
    }
    device[k] = static_cast<DeviceId>(best);
    fin[best] = std::max(fin[best], first[k]) + work[k];
    load[best] += work[k];
  }
  return device;
}

}  // namespace

std::vector<DeviceId> merge_clusters(const Graph& g, const Clustering& c, const CostModel& cost,
                                     int devices, ClusterMerge rule) {
  std::vector<DeviceId> of_cluster(static_cast<std::size_t>(c.clusters));
  if (c.clusters <= devices) {
    std::iota(of_cluster.begin(), of_cluster.end(), 0);
  } else {
    const std::vector<double> work = cluster_work(c, cost);
    if (rule == ClusterMerge::eft)
      of_cluster = earliest_end(c, cost, work, devices);
    else if (rule == ClusterMerge::comm)
      of_cluster = communication_aware(g, c, cost, work, devices);
    else
      of_cluster = least_loaded(work, visit_order(work, rule), devices);
  }
  std::vector<DeviceId> device(c.cluster_of.size());
  for (std::size_t v = 0; v < device.size(); ++v)
    device[v] = of_cluster[static_cast<std::size_t>(c.cluster_of[v])];
  return device;
}

}  // namespace doppler
