// Dominant Sequence Clustering (Yang & Gerasoulis, 1994) for an unbounded number of devices.
#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>

#include "doppler/heuristics/clustering.hpp"

namespace doppler {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A heap entry: an op and its priority when pushed (stale once the op's priority changed).
struct Prio {
  double prio;
  NodeId v;
};

/// Max-heap order: larger priority first, then lower id.
struct PrioLess {
  bool operator()(const Prio& a, const Prio& b) const {
    return a.prio != b.prio ? a.prio < b.prio : a.v > b.v;
  }
};

using PrioHeap = std::priority_queue<Prio, std::vector<Prio>, PrioLess>;

/// An input of the op being examined: when its data arrives, from which predecessor.
struct Input {
  double arrival;
  NodeId pred;
};

/// The DSC state: clusters grown one examined op at a time.
class Dsc {
public:
  Dsc(const Graph& g, const CostModel& cost, const std::vector<double>& b_level);
  /// Examines every op and returns the clustering.
  Clustering run();

private:
  std::size_t at(NodeId v) const { return static_cast<std::size_t>(v); }
  double compute(NodeId v) const { return cost_.compute(v); }
  double finish(NodeId v) const { return start_[at(v)] + compute(v); }
  /// The partially free op of largest priority (-1 when none); drops stale heap entries.
  NodeId top_partial();
  /// Places op nx (free): in its own cluster or appended to a predecessor's cluster.
  void examine(NodeId nx);
  /// Inputs of nx sorted by decreasing arrival (ties: lower predecessor id).
  std::vector<Input> sorted_inputs(NodeId nx) const;
  /// True when predecessor q may be pulled into nx's cluster: alone in its cluster and nx is
  /// its only successor.
  bool absorbable(NodeId q) const;
  /// Best start of nx appended to cluster c after pulling in the first absorbable inputs; sets
  /// `take` to their count. Inputs in c arrive before c is free, so only others count.
  double best_merge(const std::vector<Input>& in, int c, int& take) const;
  /// Appends nx to cluster c at `start`, after the first `take` absorbable inputs.
  void merge(NodeId nx, const std::vector<Input>& in, int c, int take, double start);
  /// Appends v to cluster c at time `start`.
  void append(NodeId v, int c, double start);
  /// Updates the successors of the examined op v: arrivals, free and partially free lists.
  void release(NodeId v);
  /// Renumbers clusters by first start and fills the result.
  Clustering result() const;

  const Graph& g_;
  const CostModel& cost_;
  const std::vector<double>& bl_;
  std::vector<int> cluster_;   // cluster of each examined op (internal ids)
  std::vector<int> size_;      // ops per internal cluster
  std::vector<double> ready_;  // finish of each internal cluster's last op
  std::vector<double> start_;  // start of each examined op
  std::vector<int> pending_;   // unexamined predecessors of each op
  std::vector<double> tl_;     // latest arrival over the examined predecessors (t-level)
  std::vector<NodeId> dom_;    // the examined predecessor giving tl_ (-1: none)
  std::vector<NodeId> exam_;   // examination order
  PrioHeap free_, partial_;
};

Dsc::Dsc(const Graph& g, const CostModel& cost, const std::vector<double>& b_level)
    : g_(g), cost_(cost), bl_(b_level) {
  const auto n = static_cast<std::size_t>(g.num_nodes());
  cluster_.assign(n, -1);
  start_.assign(n, 0);
  pending_.resize(n);
  tl_.assign(n, 0);
  dom_.assign(n, -1);
  exam_.reserve(n);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    pending_[at(v)] = static_cast<int>(g.predecessors(v).size());
    if (pending_[at(v)] == 0) free_.push({bl_[at(v)], v});
  }
}

Clustering Dsc::run() {
  while (!free_.empty()) {
    const NodeId nx = free_.top().v;
    free_.pop();
    examine(nx);
    release(nx);
  }
  return result();
}

NodeId Dsc::top_partial() {
  while (!partial_.empty()) {
    const Prio top = partial_.top();
    const std::size_t v = at(top.v);
    if (pending_[v] > 0 && top.prio == tl_[v] + bl_[v]) return top.v;
    partial_.pop();  // free, examined or superseded by a later arrival
  }
  return -1;
}

std::vector<Input> Dsc::sorted_inputs(NodeId nx) const {
  std::vector<Input> in;
  in.reserve(g_.predecessors(nx).size());
  for (EdgeId e : g_.in_edges(nx)) {
    const NodeId u = g_.edge(e).src;
    in.push_back({finish(u) + cost_.transfer(e), u});
  }
  std::sort(in.begin(), in.end(), [](const Input& a, const Input& b) {
    return a.arrival != b.arrival ? a.arrival > b.arrival : a.pred < b.pred;
  });
  return in;
}

bool Dsc::absorbable(NodeId q) const {
  return size_[static_cast<std::size_t>(cluster_[at(q)])] == 1 && g_.successors(q).size() == 1;
}

double Dsc::best_merge(const std::vector<Input>& in, int c, int& take) const {
  double ready = ready_[static_cast<std::size_t>(c)];
  std::size_t rest = 0;  // first input neither in c nor pulled in: the latest other arrival
  std::vector<char> pulled(in.size(), 0);
  const auto skip = [&] {
    while (rest < in.size() && (pulled[rest] || cluster_[at(in[rest].pred)] == c)) ++rest;
  };
  skip();
  double best = std::max(ready, rest < in.size() ? in[rest].arrival : 0.0);
  take = 0;
  int pulled_count = 0;
  for (std::size_t i = rest; i < in.size() && ready < best; ++i) {
    const NodeId q = in[i].pred;
    if (cluster_[at(q)] == c || !absorbable(q)) continue;
    pulled[i] = 1;
    ++pulled_count;
    ready = std::max(ready, start_[at(q)]) + compute(q);
    skip();
    const double t = std::max(ready, rest < in.size() ? in[rest].arrival : 0.0);
    if (t < best) {
      best = t;
      take = pulled_count;
    }
  }
  return best;
}

void Dsc::merge(NodeId nx, const std::vector<Input>& in, int c, int take, double start) {
  for (std::size_t i = 0; i < in.size() && take > 0; ++i) {
    const NodeId q = in[i].pred;
    if (cluster_[at(q)] == c || !absorbable(q)) continue;
    --size_[static_cast<std::size_t>(cluster_[at(q)])];
    append(q, c, std::max(ready_[static_cast<std::size_t>(c)], start_[at(q)]));
    --take;
  }
  append(nx, c, start);
}

void Dsc::append(NodeId v, int c, double start) {
  cluster_[at(v)] = c;
  start_[at(v)] = start;
  ++size_[static_cast<std::size_t>(c)];
  ready_[static_cast<std::size_t>(c)] = start + compute(v);
}

void Dsc::examine(NodeId nx) {
  exam_.push_back(nx);
  const std::vector<Input> in = sorted_inputs(nx);
  const double alone = in.empty() ? 0.0 : in.front().arrival;
  if (!in.empty()) {
    const int c = cluster_[at(in.front().pred)];
    // Dominant sequence reduction warranty: keep the cluster the larger partially free op
    // waits on free for it.
    const NodeId ny = top_partial();
    const bool reserved = ny >= 0 && tl_[at(ny)] + bl_[at(ny)] > tl_[at(nx)] + bl_[at(nx)] &&
                          cluster_[at(dom_[at(ny)])] == c;
    int take = 0;
    const double merged = reserved ? kInf : best_merge(in, c, take);
    if (merged <= alone) {
      merge(nx, in, c, take, merged);
      return;
    }
  }
  size_.push_back(0);
  ready_.push_back(0);
  append(nx, static_cast<int>(size_.size()) - 1, alone);
}

void Dsc::release(NodeId v) {
  const EdgeId first = g_.out_edge_begin(v);
  const auto succ = g_.successors(v);
  for (std::size_t i = 0; i < succ.size(); ++i) {
    const std::size_t s = at(succ[i]);
    const double arrival = finish(v) + cost_.transfer(first + static_cast<EdgeId>(i));
    const bool later = dom_[s] < 0 || arrival > tl_[s];
    if (later) {
      tl_[s] = arrival;
      dom_[s] = v;
    }
    if (--pending_[s] == 0)
      free_.push({tl_[s] + bl_[s], succ[i]});
    else if (later)
      partial_.push({tl_[s] + bl_[s], succ[i]});
  }
}

Clustering Dsc::result() const {
  const auto n = static_cast<std::size_t>(g_.num_nodes());
  std::vector<int> exam_rank(n);
  for (std::size_t i = 0; i < exam_.size(); ++i) exam_rank[at(exam_[i])] = static_cast<int>(i);
  Clustering out;
  out.order = exam_;
  std::stable_sort(out.order.begin(), out.order.end(), [&](NodeId a, NodeId b) {
    return start_[at(a)] != start_[at(b)] ? start_[at(a)] < start_[at(b)]
                                          : exam_rank[at(a)] < exam_rank[at(b)];
  });
  std::vector<int> dense(size_.size(), -1);
  out.cluster_of.assign(n, -1);
  for (NodeId v : out.order) {
    int& d = dense[static_cast<std::size_t>(cluster_[at(v)])];
    if (d < 0) d = out.clusters++;
    out.cluster_of[at(v)] = d;
    out.parallel_time = std::max(out.parallel_time, finish(v));
  }
  out.start = start_;
  return out;
}

}  // namespace

Clustering dominant_sequence_clustering(const Graph& g, const CostModel& cost,
                                        const std::vector<double>& b_level) {
  return Dsc(g, cost, b_level).run();
}

}  // namespace doppler
