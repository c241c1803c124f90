#pragma once
// A named cost model: how long each op computes on each device and how long each edge's data
// takes between two devices, when nothing else contends. Analyses (b-level, t-level, bounds),
// list-scheduling placers and policy features all read costs through this one type, so abstract
// reference units and physical seconds are never mixed silently.
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler {

/// Unit of every time a CostModel returns.
enum class CostUnit {
  reference,  ///< the reference implementation's abstract units (C and M of its files)
  seconds,    ///< physical seconds (hardware profiles)
};

/// Name of a unit: "ref" or "s".
const char* cost_unit_name(CostUnit u);

/// Per-device and per-link parameters of a cost model with physical devices.
struct DeviceCosts {
  std::vector<double>
      time_per_work;             ///< seconds per unit of node work (1 / (peak x eff)), per device
  std::vector<double> overhead;  ///< fixed seconds per op (launch overhead), per device
  std::vector<int> slots;        ///< ops a device runs at once (>= 1), per device
  std::vector<double> latency;   ///< P x P row-major: seconds per transfer (diagonal unused)
  /// P x P row-major: the part of latency that occupies no link (pipelined delay, <= latency);
  /// empty: none. Only the simulator's link contention tells it apart.
  std::vector<double> delay;
  std::vector<double> time_per_size;  ///< P x P row-major: seconds per byte (1 / bandwidth)
  /// Per device: share of an incoming transfer's link occupancy taken from the ops running on
  /// it (DeviceSpec::copy_share, in [0, 4]); empty: none. Only the simulator charges it.
  std::vector<double> copy_share;
  /// Per device: slowdown of its ops by the other devices' compute (DeviceSpec::contention, in
  /// [0, 0.9]; compute() is the time alone); empty: none. Only the simulator applies it.
  std::vector<double> contention;
};

/// Compute and transfer times of one graph. Times are in `unit()`.
///
/// compute(v, d) = overhead[d] + work(v) * time_per_work[d]
/// transfer(e, s, d) = 0 if s == d else latency[s][d] + size(e) * time_per_size[s][d]
///
/// A *uniform* model (no DeviceCosts) has overhead 0, time_per_work 1, latency 0 and
/// time_per_size 1 for any number of devices: the reference model. The *nominal* costs used by
/// device-agnostic analyses are the means over the modelled devices (compute) and over ordered
/// pairs of distinct modelled devices (transfer).
class CostModel {
public:
  CostModel() = default;
  /// A uniform model with explicit per-node work and per-edge transfer size.
  CostModel(std::string name, CostUnit unit, std::vector<double> work, std::vector<double> size);
  /// A model with physical devices (P = devices.time_per_work.size()).
  CostModel(std::string name, CostUnit unit, std::vector<double> work, std::vector<double> size,
            DeviceCosts devices);

  /// The reference model of `g`: compute = compute_cost, every edge costs the producer's
  /// transfer_cost. Throws InputError when some node lacks reference costs.
  static CostModel reference(const Graph& g);

  /// Model name, e.g. "reference" or "hardware:4xP100-PCIe".
  const std::string& name() const { return name_; }
  /// Unit of every time returned.
  CostUnit unit() const { return unit_; }
  /// True for a uniform model (any device count, identical devices and links).
  bool uniform() const { return devices_ == 0; }
  /// Number of modelled devices; 0 for a uniform model (any count allowed).
  int devices() const { return devices_; }
  /// Throws InputError unless `p` devices can be modelled (1 <= p <= devices() unless uniform).
  void check_devices(int p) const;

  /// Compute time of node v on device d.
  double compute(NodeId v, DeviceId d) const {
    if (devices_ == 0) return work_[static_cast<std::size_t>(v)];
    const auto du = static_cast<std::size_t>(d);
    return dev_.overhead[du] + work_[static_cast<std::size_t>(v)] * dev_.time_per_work[du];
  }
  /// Time for edge e's data to move from device s to device d (0 when s == d).
  double transfer(EdgeId e, DeviceId s, DeviceId d) const {
    if (s == d) return 0;
    if (devices_ == 0) return size_[static_cast<std::size_t>(e)];
    const auto k = static_cast<std::size_t>(s) * static_cast<std::size_t>(devices_) +
                   static_cast<std::size_t>(d);
    return dev_.latency[k] + size_[static_cast<std::size_t>(e)] * dev_.time_per_size[k];
  }
  /// Ops device d runs at once.
  int slots(DeviceId d) const {
    return devices_ == 0 ? 1 : dev_.slots[static_cast<std::size_t>(d)];
  }
  /// Nominal (device-averaged) compute time of v.
  double compute(NodeId v) const { return nominal_compute_[static_cast<std::size_t>(v)]; }
  /// Nominal cross-device transfer time of edge e.
  double transfer(EdgeId e) const { return nominal_transfer_[static_cast<std::size_t>(e)]; }
  /// Work of node v (FLOPs or reference compute units).
  double work(NodeId v) const { return work_[static_cast<std::size_t>(v)]; }
  /// Transfer size of edge e (bytes or reference transfer units).
  double size(EdgeId e) const { return size_[static_cast<std::size_t>(e)]; }
  /// Number of nodes the model covers.
  int num_nodes() const { return static_cast<int>(work_.size()); }
  /// Physical device parameters (empty for a uniform model).
  const DeviceCosts& device_costs() const { return dev_; }

private:
  void finish();
  std::string name_;
  CostUnit unit_ = CostUnit::reference;
  std::vector<double> work_, size_;
  int devices_ = 0;
  DeviceCosts dev_;
  std::vector<double> nominal_compute_, nominal_transfer_;
};

}  // namespace doppler
