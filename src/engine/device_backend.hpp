#pragma once
// Internal: what one kind of device gives the Runtime (runtime.hpp): memory for node outputs,
// the kernels, and copies between two devices of this process. The Runtime keeps everything
// else, the same for every backend: the dataflow counts, the dispatch rule, copy scheduling
// (worker or producer copies, link emulation), transfers to other processes (Transport), timing
// and failures. A GPU backend is one more implementation of this class.
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "plan.hpp"

#include "doppler/engine/options.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler::engine_detail {

/// When a kernel or a copy ran, as the device measured it: seconds since the run's origin
/// (DeviceBackend::begin_run()), which a device clock must align with the host's: a kernel
/// starts after the host launched it and finishes before the host learns it did; start <= finish.
struct DeviceInterval {
  double start = 0;
  double finish = 0;
};

/// Memory, kernels and copies of the devices of one process. Buffers are device addresses of
/// elements of the backend's storage type (f32, or bf16 with GpuDevices::Storage::bf16): the
/// Runtime passes them along and counts sizes in elements; only a backend whose host_memory()
/// is true stores f32 the caller may read. Calls for device d come from its
/// own compute or copy worker (or, between runs, from the controller), so an implementation
/// may keep per-device state without locks. launch() and copy() return when the work has
/// finished; a backend whose devices run asynchronously (a GPU) enqueues the work and waits for
/// its completion there (an event), which is when the Runtime reacts and dispatches the next
/// ready op by the shared rule, and reports the device's own times.
class DeviceBackend {
public:
  virtual ~DeviceBackend() = default;
  /// Per-thread set-up (e.g. making the GPU's context current): called once by each of device
  /// d's workers, compute and incoming-copy, before anything else they do.
  virtual void attach(DeviceId d) { (void)d; }
  /// A run starts (controller thread, before the first launch): `origin` is the Runtime's time
  /// zero (host steady clock), the origin of the times launch() and copy() return.
  virtual void begin_run(std::chrono::steady_clock::time_point origin) { (void)origin; }
  /// Sizes device d's buffer of node v to `elements` elements, zeroed when its size changes
  /// (between runs only).
  virtual void ensure(DeviceId d, NodeId v, std::size_t elements) = 0;
  /// Device d's buffer of v (valid after ensure(); nullptr before).
  virtual void* buffer(DeviceId d, NodeId v) = 0;
  /// True when device d's buffer of v exists.
  virtual bool has_buffer(DeviceId d, NodeId v) const = 0;
  /// Runs v's kernel on device d (from d's compute worker): `inputs[i]` is device d's buffer of
  /// operand i's producer, `out` device d's buffer of v. Returns when it has finished, with the
  /// device's times, or nullopt when the device has no clock of its own (the Runtime then times
  /// the call on the host). Throws on failure.
  virtual std::optional<DeviceInterval> launch(DeviceId d, NodeId v,
                                               std::span<const void* const> inputs, void* out) = 0;
  /// Test hook (FaultInjection::Kind::trap): runs a kernel that faults on device d in place of
  /// v's and throws what the device reports. The default throws at once.
  virtual std::optional<DeviceInterval> launch_trap(DeviceId d, NodeId v) {
    (void)d, (void)v;
    throw std::runtime_error("injected device fault (test hook)");
  }
  /// Copies the first `elements` elements of v's output from device `from`'s buffer to device
  /// `to`'s; returns as launch(). Throws on failure.
  virtual std::optional<DeviceInterval> copy(NodeId v, DeviceId from, DeviceId to,
                                             std::size_t elements) = 0;
  /// Host read-back: the first out.size() elements of device d's buffer of v into `out` as f32
  /// (between runs). The default reads buffer(d, v), f32 host memory on the CPU backend.
  virtual void read(DeviceId d, NodeId v, std::span<float> out) {
    std::memcpy(out.data(), buffer(d, v), out.size() * sizeof(float));
  }
  /// True when buffer() is f32 host memory the caller may read directly (false: use read()).
  virtual bool host_memory() const { return true; }
  /// The devices in a few words for Engine::describe(), e.g. "cuda, 4 partitions of 32 SMs of
  /// NVIDIA H100"; empty for the CPU backend (the Engine words it).
  virtual std::string describe() const { return {}; }
};

/// Makes the devices of Backend::cuda for a compiled plan (`nodes` nodes) and the engine's
/// options. Registered by libdoppler_cuda (enable_cuda_backend()); null when it is not.
using BackendFactory = std::unique_ptr<DeviceBackend> (*)(const Plan& plan,
                                                          const EngineOptions& options, int nodes);

/// Registers the CUDA backend's factory (thread-safe; the last one wins).
void set_cuda_backend_factory(BackendFactory f);
/// The registered CUDA backend factory, or null.
BackendFactory cuda_backend_factory();

/// The CPU backend: host memory (one buffer per device and node), the plan's kernels (OpenBLAS
/// GEMMs and loops, one scratch area per device), memcpy for copies. With `gpu_split` each
/// kernel runs as the CUDA backend with those settings splits it instead (host_device_exec.hpp):
/// GEMM operands rounded as its math says, tensors stored as its storage says (bf16: read()
/// widens them; host_memory() is then false).
std::unique_ptr<DeviceBackend> make_cpu_backend(const Plan& plan, int devices, int nodes,
                                                std::optional<GpuDevices> gpu_split = std::nullopt);

}  // namespace doppler::engine_detail
