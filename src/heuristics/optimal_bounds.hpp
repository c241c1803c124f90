#pragma once
// Lower bounds of partial assignments for the optimal placer (internal to libdoppler).
#include <span>
#include <vector>

#include "doppler/heuristics/problem.hpp"

namespace doppler::detail {

/// Evaluates optimal_lower_bound() many times on one problem without allocating.
class PartialBound {
public:
  /// Precomputes adjacency, compute times and the static tails of `problem`.
  explicit PartialBound(const Problem& problem);
  /// Lower bound on every completion of `dev` (-1 = unassigned; assigned ops closed under
  /// predecessors, not checked).
  double operator()(std::span<const DeviceId> dev);

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
  double tail_via_unassigned(EdgeId e, DeviceId from, NodeId w) const;
  void forward(std::span<const DeviceId> dev);
  void backward(std::span<const DeviceId> dev);
  double critical_path() const;
  double device_bound(std::vector<Item>& items, int slots);
  double device_bounds(std::span<const DeviceId> dev);
  double all_devices(std::span<const DeviceId> dev);

  const CostModel* cost_;
  int n_ = 0, p_ = 0, total_slots_ = 0;
  bool uniform_ = true;
  std::vector<NodeId> topo_;
  std::vector<int> pred_begin_, succ_begin_;
  std::vector<NodeId> pred_src_, succ_dst_;
  std::vector<EdgeId> pred_edge_, succ_edge_;
  std::vector<double> comp_, cmin_, static_tail_;
  std::vector<int> slots_;
  // Scratch.
  std::vector<double> eft_, head_, tail_;
  std::vector<std::vector<Item>> per_device_;
  std::vector<Item> by_tail_, local_;
  std::vector<Input> optional_;
};

}  // namespace doppler::detail
