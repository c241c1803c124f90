#pragma once
// Hardware profiles: devices (compute speed) and the links between them (bandwidth, latency,
// and which links each device-to-device transfer crosses). Read from doppler-hardware JSON
// (docs/hardware.md); shipped profiles live in hardware/*.json.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace doppler {

/// One compute device.
struct DeviceSpec {
  std::string name;                          ///< e.g. "V100-SXM2-16GB"
  std::map<std::string, double> peak_flops;  ///< FLOP/s per dtype ("f32" required, "f16", ...)
  double efficiency = 1.0;                   ///< achieved fraction of peak, in (0, 1]
  double launch_overhead = 0.0;              ///< seconds added to every op
  int slots = 1;                             ///< ops that run at once (>= 1)
  /// Share of an incoming copy's link occupancy (latency + bytes / bandwidth) taken from the ops
  /// running on this device while it is sent, in [0, kMaxCopyShare]: 0 for copy engines beside
  /// the compute (GPUs), about 1 where the copy is a memcpy on the device's own core (the CPU
  /// engine), above 1 where that memcpy runs slower than an idle copy (memory bandwidth shared
  /// with the busy sender: 0.6-1.9 measured on 2 MPI ranks).
  double copy_share = 0.0;
  /// Time lost to the other devices' compute, in [0, kMaxContention]: an op runs on for
  /// contention x the time it ran while other devices computed (weighted by the share of them
  /// computing), so it takes its price alone and price / (1 - contention) beside devices that
  /// always compute. 0 where devices share nothing (GPUs); on the CPU engine the devices' cores
  /// share caches and memory bandwidth.
  double contention = 0.0;
};

/// Upper bound of DeviceSpec::copy_share.
inline constexpr double kMaxCopyShare = 4.0;
/// Upper bound of DeviceSpec::contention.
inline constexpr double kMaxContention = 0.9;

/// One measured size of a kernel: its op time beyond launch_overhead at `units` (the op's FLOPs,
/// or its output bytes for a kernel costed by bytes).
struct KernelPoint {
  double units = 0.0;    ///< FLOPs or output bytes (> 0)
  double seconds = 0.0;  ///< seconds beyond launch_overhead (>= 0)
};

/// Measured time of one engine kernel (ExecDesc::op), for profiles calibrated on an engine: an
/// op running it takes launch_overhead + seconds(flops, out_bytes) on device 0, scaled by the
/// other devices' speed relative to device 0 (seconds_per_flop). Ops of kernels without an entry
/// cost launch_overhead + flops / (peak x efficiency).
struct KernelCost {
  double seconds_per_op = 0.0;    ///< fixed seconds per op beyond launch_overhead (>= 0)
  double seconds_per_flop = 0.0;  ///< seconds per FLOP of the op (>= 0)
  double seconds_per_byte = 0.0;  ///< seconds per byte of the op's output (>= 0)
  /// Measured sizes, by increasing units and non-decreasing seconds; when given they replace the
  /// line: linear between two points, from (0, seconds_per_op) to the first, and at the last
  /// point's seconds per unit beyond it (a kernel whose efficiency grows with its size, as a
  /// GEMM's, is no line through every size).
  std::vector<KernelPoint> points;
  bool points_by_bytes = false;  ///< points' units are output bytes, not FLOPs
  /// Floor in seconds per byte the op reads (its operand regions, >= 0): an op takes at least
  /// its input bytes times this, whatever its FLOPs (memory-bound shapes: a GEMV reads a whole
  /// weight block for 2 FLOPs per element). 0: no floor.
  double seconds_per_input_byte = 0.0;

  /// Seconds beyond launch_overhead of an op with `flops` FLOPs, `out_bytes` output bytes and
  /// `in_bytes` bytes read: the size cost (points or line), at least in_bytes x
  /// seconds_per_input_byte.
  double seconds(double flops, double out_bytes, double in_bytes = 0) const;
};

/// One link. A transfer occupies every link of its route for latency + bytes / bandwidth; the
/// delays of its links are added to its arrival after that, without occupying any link.
struct LinkSpec {
  std::string name;        ///< e.g. "nvlink 0->3" or "host bridge"
  double bandwidth = 0.0;  ///< bytes per second (> 0)
  double latency = 0.0;    ///< seconds per transfer crossing this link, occupying it (>= 0)
  double delay = 0.0;      ///< seconds between leaving the link and arrival, pipelined: transfers
                           ///< behind it do not wait for it (propagation, receiver wake-up) (>= 0)
};

/// What a route's links add up to (s != d).
struct RouteCost {
  double latency = 0.0;    ///< sum of the links' latencies (seconds, occupying them)
  double delay = 0.0;      ///< sum of the links' delays (seconds, pipelined)
  double bandwidth = 0.0;  ///< the slowest link's bytes per second
};

/// A parsed, validated profile with every route resolved.
struct HardwareProfile {
  std::string name;         ///< e.g. "8xV100-NVLink"
  std::string description;  ///< one line for listings
  std::string topology;     ///< topology kind it was built from
  std::vector<DeviceSpec> devices;
  std::vector<LinkSpec> links;
  /// Per-kernel costs by kernel name (empty: every op costs by FLOPs).
  std::map<std::string, KernelCost> kernels;
  /// Kernels its calibration left out (`calibrate --kernels`; calibration_source's
  /// kernels_left_out): priced by FLOPs, which a calibration of every kernel would have measured.
  std::set<std::string> left_out;
  /// routes[s * P + d]: ids of the links a transfer from s to d crosses (empty when s == d).
  std::vector<std::vector<int>> routes;

  /// Number of devices P.
  int num_devices() const { return static_cast<int>(devices.size()); }
  /// Links of the route from s to d.
  const std::vector<int>& route(int s, int d) const {
    return routes[static_cast<std::size_t>(s) * devices.size() + static_cast<std::size_t>(d)];
  }
  /// Latency, delay and bandwidth of the route from s to d (s != d).
  RouteCost route_cost(int s, int d) const;
  /// Uncontended time of a `bytes` transfer from s to d: sum of latencies and delays + bytes /
  /// slowest link.
  double transfer_time(int s, int d, double bytes) const;
  /// Seconds per FLOP of device d for `dtype` (falls back to "f32").
  double seconds_per_flop(int d, std::string_view dtype) const;
};

/// Parses a doppler-hardware JSON document; throws InputError "FILE:LINE: problem".
HardwareProfile parse_hardware_profile(std::string_view text, const std::string& file);

}  // namespace doppler
