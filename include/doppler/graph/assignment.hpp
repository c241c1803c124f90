#pragma once
// A placement: which device runs each op, plus an optional priority order.
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler {

/// Device of every node of a graph, for a given device count.
struct Assignment {
  int devices = 0;                  ///< device count P (1..kMaxDevices)
  std::vector<DeviceId> device_of;  ///< device of node v, in 0..P-1; size N
  std::vector<NodeId> order;  ///< optional priority order (a permutation of 0..N-1); empty = none
  std::string method;         ///< who produced it (e.g. "critical-path"); may be empty

  /// Throws InputError (naming `what`, e.g. the file) unless this is a valid assignment of `g`:
  /// N entries, devices in 0..P-1, P in 1..kMaxDevices, and `order` empty or a permutation.
  /// When `expected_devices` > 0 the device count must equal it.
  void validate(const Graph& g, int expected_devices = 0, const std::string& what = "") const;

  /// Number of ops on each device (size P).
  std::vector<int> ops_per_device() const;
};

}  // namespace doppler
