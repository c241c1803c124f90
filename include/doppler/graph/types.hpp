#pragma once
// Basic index types of the graph core.
#include <cstdint>

namespace doppler {

/// Index of a node (block operation) in a Graph: 0..N-1.
using NodeId = std::int32_t;
/// Index of an edge in a Graph: 0..E-1, edges sorted by (src, dst).
using EdgeId = std::int32_t;
/// Index of a device: 0..P-1.
using DeviceId = std::int32_t;

/// The largest number of devices any placer, simulator or engine accepts.
inline constexpr int kMaxDevices = 1024;

}  // namespace doppler
