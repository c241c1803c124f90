#pragma once
// Lower bounds of partial assignments for the optimal placer (internal to libdoppler).
#include <limits>
#include <span>
#include <vector>

#include "doppler/heuristics/problem.hpp"

namespace doppler::detail {

/// Evaluates optimal_lower_bound() many times on one problem without allocating.
class PartialBound {
public:
  /// Precomputes adjacency, compute times and the static tails of `problem`. `order` (a
  /// topological order; empty: the graph's) is the order of the forward pass: calls that only
  /// change the devices of its later ops are cheaper (see operator()). Without `all_devices`
  /// bound 4 (optimal_bounds.cpp) is left out: costly per call, and it hardly ever prunes in
  /// the search, which starts from problem.lower_bound() (total work over devices) anyway.
  explicit PartialBound(const Problem& problem, std::span<const NodeId> order = {},
                        bool all_devices = true);
  /// Lower bound on every completion of `dev` (-1 = unassigned; assigned ops closed under
  /// predecessors, not checked). Incremental: the heads of the ops before the first position
  /// of `order` whose device differs from the previous call's are kept (they depend only on
  /// the devices of earlier positions), so the result equals a computation from scratch. Once
  /// the bound reaches `cutoff` the remaining bounds are skipped (the result is then some valid
  /// bound >= cutoff).
  double operator()(std::span<const DeviceId> dev,
                    double cutoff = std::numeric_limits<double>::infinity());

private:
  struct Item {
    double head, work, tail;
  };
  double compute(NodeId v, DeviceId d) const {
    return comp_[static_cast<std::size_t>(v) * static_cast<std::size_t>(p_) +
                 static_cast<std::size_t>(d)];
  }
  // An input of an op: earliest start (head) and finish, work on the device considered, and
  // arrival when it comes from another device.
  struct Input {
    double head, work, finish, arrive;
  };
  double start_on(NodeId v, DeviceId d, std::span<const DeviceId> dev);
  double remote_transfer(EdgeId e, DeviceId d) const;
  static double serial(std::vector<Item>& ops, int slots);
  double finish_unassigned(NodeId v, std::span<const DeviceId> dev);
  double tail_assigned(NodeId v, DeviceId d, std::span<const DeviceId> dev);
  double remote_via(EdgeId e, DeviceId from, NodeId w) const;
  static double serial_tail(const std::vector<Item>& ops, int slots);
  void forward(std::span<const DeviceId> dev, std::size_t from);
  void backward(std::span<const DeviceId> dev);
  double critical_path() const;
  double device_bound(std::vector<Item>& items, int slots);
  double device_bounds(std::span<const DeviceId> dev);
  double all_devices(std::span<const DeviceId> dev);

  const CostModel* cost_;
  bool all_devices_ = true;
  int n_ = 0, p_ = 0, total_slots_ = 0;
  bool uniform_ = true;
  std::vector<NodeId> topo_;
  std::vector<int> pred_begin_, succ_begin_;
  std::vector<NodeId> pred_src_, succ_dst_;
  std::vector<EdgeId> pred_edge_, succ_edge_;
  std::vector<double> comp_, cmin_, static_tail_;
  std::vector<int> slots_;
  // Scratch. seen_[i]: the device of topo_[i] when its head was last computed (-2: never).
  std::vector<double> eft_, head_, tail_;
  std::vector<DeviceId> seen_;
  std::vector<std::vector<Item>> per_device_;
  std::vector<Item> by_tail_, local_;
  std::vector<Input> optional_;
};

}  // namespace doppler::detail
