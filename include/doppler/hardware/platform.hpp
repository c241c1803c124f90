#pragma once
// The machine a graph is placed on: P devices under either the reference model (abstract units,
// unlimited links) or a hardware profile (seconds, contended links).
#include <memory>
#include <string>

#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/hardware/profile.hpp"

namespace doppler {

/// P devices and how their costs are modelled. Cheap to copy (the profile is shared).
class Platform {
public:
  /// The reference model on `devices` devices (1..kMaxDevices).
  static Platform reference(int devices);
  /// The first `devices` devices of `profile` (1..profile.num_devices()).
  static Platform hardware(HardwareProfile profile, int devices);

  /// Device count P.
  int devices() const { return devices_; }
  /// True for the reference model.
  bool is_reference() const { return profile_ == nullptr; }
  /// The hardware profile (only when !is_reference()).
  const HardwareProfile& profile() const { return *profile_; }
  /// "reference" or the profile's name.
  std::string name() const;
  /// Unit of every time on this platform.
  CostUnit unit() const { return is_reference() ? CostUnit::reference : CostUnit::seconds; }

  /// The uncontended cost model of `g` on this platform. Reference: the graph's compute_cost and
  /// transfer_cost (InputError when absent). Hardware: compute = launch overhead + flops /
  /// (peak(dtype) x efficiency), or the profile's measured kernel cost (KernelCost) for ops whose
  /// kernel it lists, transfer = route latency + bytes / slowest route link, where
  /// dtype is the graph's "dtype" parameter (default f32).
  CostModel cost_model(const Graph& g) const;

private:
  int devices_ = 1;
  std::shared_ptr<const HardwareProfile> profile_;
};

/// The dtype a graph declares in its parameters ("f32" when none).
std::string graph_dtype(const Graph& g);

}  // namespace doppler
