#pragma once
// Clustering placers for graphs where transfers dominate: Dominant Sequence Clustering (Yang &
// Gerasoulis, 1994) groups ops into clusters for an unbounded number of devices, zeroing the
// edges of the dominant sequence; the clusters are then merged onto the P devices with a load
// balancing rule.
#include <string>
#include <vector>

#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// A clustering of a graph's ops for an unbounded number of devices (one per cluster), with the
/// schedule that produced it. Times are in the cost model's unit.
///
/// Invariants: cluster_of[v] in 0..clusters-1 and every cluster is non-empty; clusters are
/// numbered by the start time of their first op (ties: the order below); `order` lists every op
/// by increasing start (ties: examination order), so it is a topological order and each
/// cluster's ops appear in it in their execution sequence; within a cluster ops never overlap;
/// an op starts no earlier than each predecessor's finish, plus the predecessor's nominal
/// transfer time when they are in different clusters.
struct Clustering {
  std::vector<int> cluster_of;  ///< cluster of each op (size N)
  std::vector<NodeId> order;    ///< every op by planned start time (a permutation of 0..N-1)
  std::vector<double> start;    ///< planned start time of each op (size N)
  double parallel_time = 0;     ///< latest planned finish: the makespan on `clusters` devices
  int clusters = 0;             ///< cluster count K (0 only for an empty graph)
};

/// Dominant Sequence Clustering (DSC, Yang & Gerasoulis 1994) under the nominal costs of
/// `cost`: each op's compute time is cost.compute(v) (the mean over the modelled devices) and
/// each edge's transfer time is cost.transfer(e) (the reference model's edge transfer cost, or
/// the hardware model's mean over pairs of distinct devices). `b_level` must be the b-levels
/// under the same costs (GraphAnalysis::b_level()).
///
/// Ops are examined once each, the free op (all predecessors examined) of largest priority
/// t-level + b-level first (ties: lower id). An examined op joins the cluster of its predecessor
/// whose data arrives last, appended after that cluster's last op, when that does not delay it;
/// predecessors alone in their cluster whose only successor is the op may be pulled into that
/// cluster too, in decreasing arrival order, as long as this lowers its start (the minimisation
/// procedure, optimal for join graphs). The dominant sequence reduction warranty: while a
/// partially free op (some, not all, predecessors examined) has a larger priority than the op
/// examined, the latter does not join the cluster the former's latest-arriving examined
/// predecessor is in. Deterministic; O((V + E) log V) time.
Clustering dominant_sequence_clustering(const Graph& g, const CostModel& cost,
                                        const std::vector<double>& b_level);

/// How clusters are merged onto P devices when there are more clusters than devices. A
/// cluster's work is the sum of its ops' nominal compute times; its planned span runs from its
/// first op's start to its last op's finish; f(d) is device d's estimated finish so far.
enum class ClusterMerge {
  /// Guided load balancing (Radulescu & van Gemund): by start, on the device with least work.
  glb,
  /// Longest processing time first: by decreasing work, on the device with least work.
  lpt,
  /// By start, on the device where it would end earliest: its planned end when f(d) <= its
  /// start, else max(f(d) + work, planned end).
  eft,
  /// By start, on the device minimising max(f(d), start) + work + the nominal transfer time of
  /// its edges to already merged clusters on other devices (keeps transfers on one device when
  /// they dominate).
  comm,
};

/// Device of every op of `g` when the clusters of `c` (a clustering of `g`) are merged onto
/// `devices` devices (>= 1) by `rule`, a cluster's work being the sum of its ops' nominal
/// compute times (cost.compute(v)). With at most `devices` clusters, cluster k goes to device k.
/// Every op gets a device in 0..devices-1; ties go to the lowest device id. Time
/// O(N + K log K + K log P) for glb and lpt, O(N + K P) for eft, O(N + E + K P) for comm.
std::vector<DeviceId> merge_clusters(const Graph& g, const Clustering& c, const CostModel& cost,
                                     int devices, ClusterMerge rule);

/// The DSC placer: dominant_sequence_clustering() under the problem's cost model, then
/// merge_clusters() with one rule, or with each rule keeping the assignment of least simulated
/// makespan (merge "best": one simulator call per rule, counted in evaluations(); ties go to the
/// first of glb, lpt, eft, comm; no call when there are at most P clusters). The order is the
/// clustering's start order. Input ops follow their first consumer when
/// PlaceOptions::colocate_inputs is set. Deterministic.
class DscPlacer : public Placer {
public:
  /// `merge`: "glb", "lpt", "eft", "comm" or "best" (InputError otherwise).
  explicit DscPlacer(const std::string& merge = "best");
  std::string name() const override { return "dsc"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  std::vector<ClusterMerge> rules_;  // the rules tried (one unless merge=best)
};

}  // namespace doppler
