#pragma once
// Options of the real engine (docs/engine.md): device count, kernel mode, link emulation,
// thread pinning, a run timeout and a fault-injection hook for tests.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "doppler/graph/types.hpp"
#include "doppler/hardware/profile.hpp"

namespace doppler {

/// What the engine executes for each op.
enum class KernelMode {
  automatic,  ///< real kernels when every node has an exec description, else synthetic
  real,       ///< the exec description's kernel (InputError when a node has none)
  synthetic,  ///< a matmul of FLOPs proportional to the op's cost, an output of proportional size
  empty,      ///< nothing (one-element buffers): measures the engine's own overhead
};

/// "auto", "real", "synthetic" or "empty".
const char* kernel_mode_name(KernelMode m);
/// Parses the names of kernel_mode_name(); InputError otherwise.
KernelMode parse_kernel_mode(const std::string& name);

/// Optional slow-down of cross-device copies so that CPU runs mimic slower interconnects: a copy
/// from s to d takes at least `latency + bytes / bandwidth` seconds, or the profile's uncontended
/// route time when a profile is set. Off by default.
struct LinkEmulation {
  double bandwidth = 0;                            ///< bytes per second; 0 = unlimited
  double latency = 0;                              ///< seconds added to every copy (>= 0)
  std::shared_ptr<const HardwareProfile> profile;  ///< routes of this profile (overrides both)

  /// True when any copy is slowed down.
  bool enabled() const { return profile != nullptr || bandwidth > 0 || latency > 0; }
  /// Least duration in seconds of a copy of `bytes` bytes from device s to device d.
  double min_seconds(DeviceId s, DeviceId d, double bytes) const;
  /// One line for outputs: "off", "1e+09 B/s, 5e-06 s latency" or "profile 4xP100-PCIe".
  std::string label() const;
  /// Builds an emulation from CLI-style values (bandwidth in bytes/s, latency in s, a profile
  /// name or file; empty or 0 = unset). InputError on negative values.
  static LinkEmulation from(double bandwidth, double latency, const std::string& profile);
};

/// Fault injection (tests): what happens when the engine is about to run `node`.
struct FaultInjection {
  enum class Kind {
    none,  ///< no fault
    fail,  ///< the kernel throws
    hang,  ///< the kernel blocks until the run is aborted (needs a timeout to end)
    trap,  ///< the device runs a kernel that faults (CUDA: a trap, a sticky error that ends
           ///< the GPU's use by the process; the CPU backend throws as with `fail`)
  };
  Kind kind = Kind::none;  ///< what to inject
  NodeId node = -1;        ///< op that fails or hangs
};

/// Who performs a copy between two devices of the same process.
enum class CopyMode {
  worker,    ///< the receiving device's copy worker thread (copies overlap that device's compute)
  producer,  ///< the producing op's compute worker, right after the op: no hand-off to another
             ///< thread, but the copy holds the producer's core. With link emulation copies
             ///< still go to the copy worker (which waits out the emulated time).
};

/// "worker" or "producer".
const char* copy_mode_name(CopyMode m);
/// Parses the names of copy_mode_name(); InputError otherwise.
CopyMode parse_copy_mode(const std::string& name);

/// Which devices run an Engine's kernels.
enum class Backend {
  cpu,   ///< host threads, one per device, OpenBLAS kernels (the default)
  cuda,  ///< NVIDIA GPUs, or SM partitions of one (libdoppler_cuda; see enable_cuda_backend())
};

/// "cpu" or "cuda".
const char* backend_name(Backend b);

/// The devices of the CUDA backend: with `partitions` > 0, GPU gpus[0] split into that many
/// equal SM partitions (CUDA green contexts), the first EngineOptions::devices of them one
/// device each (partitions >= devices); with 0, each GPU of `gpus` (CUDA ordinals) one device
/// (as many as EngineOptions::devices).
struct GpuDevices {
  int partitions = 0;
  std::vector<int> gpus = {0};
  /// How the GEMMs compute: f32 (exact f32 FMA), tf32 or bf16 (Tensor Cores with operands
  /// rounded to that type, f32 accumulation). With bf16 storage only bf16 applies.
  enum class Math { f32, tf32, bf16 } math = Math::f32;
  /// How tensors are stored in device memory: f32 (4 bytes an element), or bf16 (2 bytes: half
  /// the memory and copy bytes; every kernel loads f32, computes in f32 or double and rounds its
  /// result to bf16, to nearest even; GEMMs on Tensor Cores from bf16 operands, f32 sums).
  enum class Storage { f32, bf16 } storage = Storage::f32;
  /// How a block moves between two devices: `peer`, the raw device-to-device copy (partitions
  /// of one GPU share its memory: far faster than any interconnect); `host`, staged through
  /// pinned host memory (a real PCIe round trip). To pace copies to an NVLink or PCIe link, the
  /// CLI's --gpu-link nvlink|pcie sets EngineOptions::link instead.
  enum class Link { peer, host } link = Link::peer;
};

/// "f32", "tf32" or "bf16".
const char* gpu_math_name(GpuDevices::Math m);
/// Parses the names of gpu_math_name(); InputError otherwise.
GpuDevices::Math parse_gpu_math(const std::string& name);
/// "f32" or "bf16".
const char* gpu_storage_name(GpuDevices::Storage s);
/// Parses the names of gpu_storage_name(); InputError otherwise.
GpuDevices::Storage parse_gpu_storage(const std::string& name);
/// Bytes of one stored element: 4 (f32) or 2 (bf16).
int gpu_storage_bytes(GpuDevices::Storage s);
/// The GEMM math a device runs with `gpu`'s settings: bf16 whenever tensors are stored as bf16.
/// InputError for bf16 storage with tf32 math (a bad request).
GpuDevices::Math effective_gpu_math(const GpuDevices& gpu);

/// Everything an Engine is built with. Buffers and threads are created once per Engine.
struct EngineOptions {
  int devices = 1;                             ///< logical devices P (1..kMaxDevices)
  KernelMode kernels = KernelMode::automatic;  ///< what each op executes
  /// Synthetic kernels: FLOPs per unit of compute cost and bytes per unit of transfer cost
  /// (reference costs when present, else flops / out_bytes); 0 = chosen so that the whole graph
  /// totals about 1e8 FLOPs.
  double synthetic_scale = 0;
  LinkEmulation link;                  ///< copy slow-down (off by default)
  bool pin_threads = true;             ///< pin compute workers to cores when P <= usable cores
  CopyMode copies = CopyMode::worker;  ///< who copies between this process's devices
  double timeout_seconds = 0;          ///< a run longer than this fails with an error; 0 = none
  FaultInjection fault;                ///< test hook
  Backend backend = Backend::cpu;      ///< what runs the kernels
  GpuDevices gpu;                      ///< Backend::cuda: which GPUs or partitions
  /// Backend::cpu: run each kernel as the CUDA backend splits it (elementwise steps and GEMM
  /// calls), GEMM operands rounded as gpu.math says (tf32, bf16), tensors stored as gpu.storage
  /// says: a host reference that rounds where the GPU does, for `execute --verify --backend
  /// cuda` (InputError with another backend).
  bool gpu_split = false;
};

}  // namespace doppler
