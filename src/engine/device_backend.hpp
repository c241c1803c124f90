#pragma once
// Internal: what one kind of device gives the Runtime (runtime.hpp): memory for node outputs,
// the kernels, and copies between two devices of this process. The Runtime keeps everything
// else, the same for every backend: the dataflow counts, the dispatch rule, copy scheduling
// (worker or producer copies, link emulation), transfers to other processes (Transport), timing
// and failures. A GPU backend is one more implementation of this class.
#include <cstddef>
#include <memory>
#include <span>

#include "plan.hpp"

#include "doppler/graph/graph.hpp"

namespace doppler::engine_detail {

/// Memory, kernels and copies of the devices of one process. Calls for device d come from its
/// own compute or copy worker (or, between runs, from the controller), so an implementation
/// may keep per-device state without locks.
class DeviceBackend {
public:
  virtual ~DeviceBackend() = default;
  /// Sizes device d's buffer of node v to `floats` floats, zeroed when its size changes
  /// (between runs only).
  virtual void ensure(DeviceId d, NodeId v, std::size_t floats) = 0;
  /// Device d's buffer of v (valid after ensure(); nullptr before).
  virtual float* buffer(DeviceId d, NodeId v) = 0;
  /// True when device d's buffer of v exists.
  virtual bool has_buffer(DeviceId d, NodeId v) const = 0;
  /// Runs v's kernel on device d (from d's compute worker): `inputs[i]` is device d's buffer of
  /// operand i's producer, `out` device d's buffer of v. Throws on failure.
  virtual void launch(DeviceId d, NodeId v, std::span<const float* const> inputs, float* out) = 0;
  /// Copies the first `floats` floats of v's output from device `from`'s buffer to device
  /// `to`'s.
  virtual void copy(NodeId v, DeviceId from, DeviceId to, std::size_t floats) = 0;
};

/// The CPU backend: host memory (one buffer per device and node), the plan's kernels (OpenBLAS
/// GEMMs and loops, one scratch area per device), memcpy for copies.
std::unique_ptr<DeviceBackend> make_cpu_backend(const Plan& plan, int devices, int nodes);

}  // namespace doppler::engine_detail
