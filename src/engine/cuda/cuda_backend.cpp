#include "cuda_backend.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "context_scope.hpp"
#include "cublas_api.hpp"
#include "cuda_exec.hpp"
#include "cuda_kernels.hpp"
#include "driver_api.hpp"
#include "engine/host_device_exec.hpp"
#include "green_partitions.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/gpus.hpp"
#include "doppler/util/error.hpp"

namespace doppler::cuda_detail {

namespace {

using engine_detail::device_scratch;
using engine_detail::DeviceBackend;
using engine_detail::DeviceInterval;
using engine_detail::Plan;
namespace dev = engine_detail::dev;

// One device: its streams, cuBLAS handle, memory and clock.
struct Device {
  int gpu = 0;
  int sms = 0;
  cudaStream_t compute = nullptr, copy_in = nullptr;
  bool own_streams = false;  // whole-GPU mode; green partitions own theirs
  CUcontext ctx = nullptr;   // the partition's context, which owns its streams (null: primary)
  cudaEvent_t origin = nullptr;  // recorded on `compute` when a run starts, made in ctx
  double lag = 0;                // seconds from the Runtime's origin to that recording
  cublasHandle_t blas = nullptr;
  void* scratch = nullptr;  // scratch_elements elements
  std::int64_t scratch_elements = 0;
  void *syn_a = nullptr, *syn_b = nullptr;
  std::vector<void*> bufs;         // per node
  std::vector<std::size_t> sizes;  // per node, elements
  std::vector<void*> values;       // per node: cached values (constant, rotary), or null
  ExecResources exec;
  void* staging = nullptr;  // --gpu-link host: pinned host memory for incoming copies
  std::size_t staging_bytes = 0;
  std::vector<const float*> ins_f32;  // one launch's inputs, typed (f32 or bf16 storage)
  std::vector<const dev::Bf16*> ins_bf16;
};

// A worker thread's events (attach()): start and end of its launches or copies, made in its
// device's context (every stream the worker records on is one of that device's).
struct Slot {
  const void* owner = nullptr;
  DeviceId device = -1;
  cudaEvent_t start = nullptr, end = nullptr;
};
thread_local Slot tl_slot;

cublasComputeType_t compute_type(GpuDevices::Math m) {
  switch (m) {
    case GpuDevices::Math::tf32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GpuDevices::Math::bf16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    default:
      return CUBLAS_COMPUTE_32F;
  }
}

const char* link_name(GpuDevices::Link l) {
  return l == GpuDevices::Link::host ? "host-staged" : "peer";
}

void* device_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)), what);
  return p;
}

// `host` in new device memory, stored as `storage` says (bf16: rounded to nearest even).
void* upload(const std::vector<float>& host, GpuDevices::Storage storage, const char* what) {
  std::vector<dev::Bf16> narrow;
  const void* from = host.data();
  if (storage == GpuDevices::Storage::bf16) {
    narrow = engine_detail::stored_as<dev::Bf16>(host);
    from = narrow.data();
  }
  const std::size_t bytes = host.size() * static_cast<std::size_t>(gpu_storage_bytes(storage));
  void* p = device_alloc(bytes, what);
  check(cudaMemcpy(p, from, bytes, cudaMemcpyHostToDevice), what);
  return p;
}

// The largest whole number up to which every whole number is a bf16 (8 significant bits).
constexpr std::int64_t kBf16WholeNumbers = 256;

// The element pointers of one launch as T (the storage type), in `to`.
template <class T>
std::span<const T* const> typed(std::span<const void* const> in, std::vector<const T*>& to) {
  to.clear();
  for (const void* p : in) to.push_back(static_cast<const T*>(p));
  return to;
}

class CudaBackend final : public DeviceBackend {
public:
  CudaBackend(const Plan& plan, const EngineOptions& o, int nodes)
      : plan_(plan),
        n_(static_cast<std::size_t>(nodes)),
        storage_(o.gpu.storage),
        esize_(static_cast<std::size_t>(gpu_storage_bytes(o.gpu.storage))) {
    driver_api();  // "no CUDA driver or GPU: ..." before anything else
    try {
      make_devices(o);
      for (Device& d : devs_) set_up(d, o.gpu.math);
      staged_ = o.gpu.link == GpuDevices::Link::host;
      staging_mu_ = std::make_unique<std::mutex[]>(devs_.size());
      make_origins();
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaBackend() override { release(); }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  // On a worker thread, where an exception would end the process: a failure is kept and
  // thrown by the thread's first launch or copy (slot()), which fails the run with it.
  void attach(DeviceId d) override {
    tl_slot = Slot{};
    try {
      check(cudaSetDevice(dev(d).gpu), "cudaSetDevice");
      Slot s{this, d, nullptr, nullptr};
      std::lock_guard lk(events_mu_);  // also serialises the context's scopes
      const ContextScope in(dev(d).ctx);
      check(cudaEventCreate(&s.start), "cudaEventCreate");
      events_.push_back({dev(d).gpu, s.start});
      check(cudaEventCreate(&s.end), "cudaEventCreate");
      events_.push_back({dev(d).gpu, s.end});
      tl_slot = s;
    } catch (const std::exception& e) {
      std::lock_guard lk(events_mu_);
      if (attach_error_.empty()) attach_error_ = e.what();
    }
  }

  // Each device's origin on its idle compute stream: times of different devices are compared
  // on the host's clock through the lags (a few microseconds apart), never across contexts.
  void begin_run(std::chrono::steady_clock::time_point origin) override {
    for (Device& d : devs_) {
      check(cudaSetDevice(d.gpu), "cudaSetDevice");
      check(cudaEventRecord(d.origin, d.compute), "cudaEventRecord (run origin)");
      d.lag = std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
    }
  }

  void ensure(DeviceId d, NodeId v, std::size_t elements) override {
    Device& x = dev(d);
    const auto i = static_cast<std::size_t>(v);
    const std::size_t bytes = elements * esize_;
    check(cudaSetDevice(x.gpu), "cudaSetDevice");
    if (x.sizes[i] != elements || !x.bufs[i]) {
      if (x.bufs[i]) cudaFree(x.bufs[i]);
      x.bufs[i] = nullptr;
      x.bufs[i] = device_alloc(bytes, "allocating a node's buffer in device memory");
      check(cudaMemset(x.bufs[i], 0, std::max<std::size_t>(bytes, 1)), "cudaMemset");
      x.sizes[i] = elements;
    }
    const std::vector<float>& vals = plan_.kernels[i].values;
    if (!vals.empty() && !x.values[i])
      x.values[i] = upload(vals, storage_, "uploading a node's values");
    if (staged_ && bytes > x.staging_bytes) {  // room for the largest block it receives
      if (x.staging) cudaFreeHost(x.staging);
      x.staging = nullptr;
      check(cudaMallocHost(&x.staging, bytes), "allocating pinned host memory for staged copies");
      x.staging_bytes = bytes;
    }
  }

  void* buffer(DeviceId d, NodeId v) override { return dev(d).bufs[static_cast<std::size_t>(v)]; }
  bool has_buffer(DeviceId d, NodeId v) const override {
    return devs_[static_cast<std::size_t>(d)].bufs[static_cast<std::size_t>(v)] != nullptr;
  }

  std::optional<DeviceInterval> launch(DeviceId d, NodeId v, std::span<const void* const> inputs,
                                       void* out) override {
    const Slot& s = slot();
    Device& x = dev(d);
    check(cudaEventRecord(s.start, x.compute), "cudaEventRecord");
    if (storage_ == GpuDevices::Storage::bf16) {
      CudaExec<dev::Bf16> exec(x.exec);
      engine_detail::run_with(plan_, v, typed(inputs, x.ins_bf16), static_cast<dev::Bf16*>(out),
                              exec);
    } else {
      CudaExec<float> exec(x.exec);
      engine_detail::run_with(plan_, v, typed(inputs, x.ins_f32), static_cast<float*>(out), exec);
    }
    check(cudaEventRecord(s.end, x.compute), "cudaEventRecord");
    check(cudaEventSynchronize(s.end), "running the kernel");
    return interval(x, s);
  }

  // A trapping kernel between the slot's events: the synchronisation reports the fault.
  std::optional<DeviceInterval> launch_trap(DeviceId d, NodeId v) override {
    (void)v;
    const Slot& s = slot();
    Device& x = dev(d);
    check(cudaEventRecord(s.start, x.compute), "cudaEventRecord");
    cuda_detail::launch_trap(x.compute);
    check(cudaEventRecord(s.end, x.compute), "cudaEventRecord");
    check(cudaEventSynchronize(s.end), "running the kernel");
    return interval(x, s);
  }

  std::optional<DeviceInterval> copy(NodeId v, DeviceId from, DeviceId to,
                                     std::size_t elements) override {
    const Slot& s = slot();
    Device& src = dev(from);
    Device& dst = dev(to);
    // The receiving device's copy worker uses its incoming-copy stream; a producer copying
    // right after its op (CopyMode::producer) its own compute stream.
    cudaStream_t stream = s.device == to ? dst.copy_in : dev(s.device).compute;
    const auto i = static_cast<std::size_t>(v);
    const std::size_t bytes = elements * esize_;
    if (staged_) {  // through the receiver's pinned buffer, one copy at a time
      std::lock_guard lk(staging_mu_[static_cast<std::size_t>(to)]);
      check(cudaEventRecord(s.start, stream), "cudaEventRecord");
      check(cudaMemcpyAsync(dst.staging, src.bufs[i], bytes, cudaMemcpyDefault, stream),
            "cudaMemcpyAsync (device to pinned host)");
      check(cudaMemcpyAsync(dst.bufs[i], dst.staging, bytes, cudaMemcpyDefault, stream),
            "cudaMemcpyAsync (pinned host to device)");
      return finish_copy(s, stream);
    }
    check(cudaEventRecord(s.start, stream), "cudaEventRecord");
    if (src.gpu == dst.gpu)
      check(cudaMemcpyAsync(dst.bufs[i], src.bufs[i], bytes, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync");
    else
      check(cudaMemcpyPeerAsync(dst.bufs[i], dst.gpu, src.bufs[i], src.gpu, bytes, stream),
            "cudaMemcpyPeerAsync");
    return finish_copy(s, stream);
  }

  void read(DeviceId d, NodeId v, std::span<float> out) override {
    const char* what = "reading a node's output back to the host";
    check(cudaSetDevice(dev(d).gpu), "cudaSetDevice");
    if (storage_ == GpuDevices::Storage::f32) {
      check(
          cudaMemcpy(out.data(), buffer(d, v), out.size() * sizeof(float), cudaMemcpyDeviceToHost),
          what);
      return;
    }
    std::vector<dev::Bf16> stored(out.size());
    check(cudaMemcpy(stored.data(), buffer(d, v), out.size() * sizeof(dev::Bf16),
                     cudaMemcpyDeviceToHost),
          what);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = dev::as_f32(stored[i]);
  }

  bool host_memory() const override { return false; }
  std::string describe() const override { return label_; }

private:
  Device& dev(DeviceId d) { return devs_[static_cast<std::size_t>(d)]; }

  const Slot& slot() {
    if (tl_slot.owner != this) {
      std::lock_guard lk(events_mu_);
      throw EngineError(attach_error_.empty()
                            ? "CUDA backend: a worker thread used it before attach()"
                            : "setting up a worker thread: " + attach_error_);
    }
    return tl_slot;
  }

  // The devices: partitions of one GPU, or whole GPUs, with their streams.
  void make_devices(const EngineOptions& o) {
    const GpuDevices& spec = o.gpu;
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (spec.gpus.empty()) throw InputError("--gpus: name at least one GPU");
    for (int g : spec.gpus)
      if (g < 0 || g >= count)
        throw InputError(fmt::format("--gpus: there is no GPU {} (this machine has {})", g, count));
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, spec.gpus[0]), "cudaGetDeviceProperties");
    if (spec.partitions > 0) {
      if (spec.partitions < o.devices)
        throw InputError(fmt::format("--gpu-partitions {} is fewer than the {} devices",
                                     spec.partitions, o.devices));
      parts_ = std::make_unique<GreenPartitions>(spec.gpus[0], spec.partitions);
      for (int i = 0; i < o.devices; ++i) {  // the first ones (calibrate: fewer, the same size)
        Device& d = devs_.emplace_back();
        d.gpu = spec.gpus[0], d.sms = (*parts_)[i].sms;
        d.compute = (*parts_)[i].compute, d.copy_in = (*parts_)[i].copy_in;
        d.ctx = (*parts_)[i].ctx;
      }
      label_ = fmt::format(
          "cuda engine, {} devices: partitions of {} SMs of GPU {} ({}, {} SMs), {} GEMMs, {} "
          "tensors, {} copies",
          o.devices, devs_[0].sms, spec.gpus[0], prop.name, parts_->gpu_sms(),
          gpu_math_name(spec.math), gpu_storage_name(spec.storage), link_name(spec.link));
      return;
    }
    if (static_cast<int>(spec.gpus.size()) != o.devices)
      throw InputError(
          fmt::format("--gpus names {} GPUs for {} devices", spec.gpus.size(), o.devices));
    for (int g : spec.gpus) {
      Device& d = devs_.emplace_back();
      d.gpu = g, d.own_streams = true;
      check(cudaSetDevice(g), "cudaSetDevice");
      cudaDeviceProp p{};
      check(cudaGetDeviceProperties(&p, g), "cudaGetDeviceProperties");
      d.sms = p.multiProcessorCount;
      check(cudaStreamCreateWithFlags(&d.compute, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaStreamCreateWithFlags(&d.copy_in, cudaStreamNonBlocking), "cudaStreamCreate");
      for (int h : spec.gpus) {
        int can = 0;
        if (h != g && cudaDeviceCanAccessPeer(&can, g, h) == cudaSuccess && can)
          cudaDeviceEnablePeerAccess(h, 0);  // already enabled is fine
      }
      cudaGetLastError();  // clear a peer-access error: copies then go through the host
    }
    label_ = fmt::format(
        "cuda engine, {} devices: whole GPUs ({}), {} GEMMs, {} tensors, {} copies", o.devices,
        prop.name, gpu_math_name(spec.math), gpu_storage_name(spec.storage), link_name(spec.link));
  }

  // cuBLAS, scratch and the synthetic operands of one device.
  void set_up(Device& d, GpuDevices::Math math) {
    check(cudaSetDevice(d.gpu), "cudaSetDevice");
    const CublasApi& blas = cublas_api();
    check_blas(blas.cublasCreate_v2(&d.blas), "cublasCreate");
    check_blas(blas.cublasSetStream_v2(d.blas, d.compute), "cublasSetStream");
    check_blas(blas.cublasSetSmCountTarget(d.blas, d.sms), "cublasSetSmCountTarget");
    d.scratch_elements = device_scratch(plan_);
    d.scratch =
        device_alloc(static_cast<std::size_t>(d.scratch_elements) * esize_, "allocating scratch");
    if (!plan_.syn_a.empty()) {
      d.syn_a = upload(plan_.syn_a, storage_, "uploading the synthetic operands");
      d.syn_b = upload(plan_.syn_b, storage_, "uploading the synthetic operands");
    }
    d.bufs.assign(n_, nullptr);
    d.sizes.assign(n_, 0);
    d.values.assign(n_, nullptr);
    d.exec = {d.compute, d.blas,  d.scratch, d.scratch_elements,
              d.values,  d.syn_a, d.syn_b,   compute_type(math)};
  }

  // One origin event per device, in its context.
  void make_origins() {
    for (Device& d : devs_) {
      check(cudaSetDevice(d.gpu), "cudaSetDevice");
      const ContextScope in(d.ctx);
      check(cudaEventCreate(&d.origin), "cudaEventCreate");
    }
  }

  // Records the slot's end event after a copy, waits for it, and returns the copy's times.
  DeviceInterval finish_copy(const Slot& s, cudaStream_t stream) {
    check(cudaEventRecord(s.end, stream), "cudaEventRecord");
    check(cudaEventSynchronize(s.end), "copying between devices");
    return interval(dev(s.device), s);
  }

  // A slot's two events as seconds since the Runtime's origin, from device x's origin (the same
  // context as the slot's events: x is the slot's device).
  static DeviceInterval interval(const Device& x, const Slot& s) {
    float t0 = 0, t1 = 0;
    check(cudaEventElapsedTime(&t0, x.origin, s.start), "cudaEventElapsedTime");
    check(cudaEventElapsedTime(&t1, x.origin, s.end), "cudaEventElapsedTime");
    return {x.lag + 1e-3 * t0, x.lag + 1e-3 * std::max(t0, t1)};
  }

  // Frees everything (no throw): handles and memory, then streams, then the green contexts.
  void release() noexcept {
    for (Device& d : devs_) {
      cudaSetDevice(d.gpu);
      if (d.blas) cublas_api().cublasDestroy_v2(d.blas);  // loaded: it made the handle
      for (void* p : d.bufs) cudaFree(p);
      for (void* p : d.values) cudaFree(p);
      for (void* p : {d.scratch, d.syn_a, d.syn_b}) cudaFree(p);
      if (d.staging) cudaFreeHost(d.staging);
      if (d.origin) cudaEventDestroy(d.origin);
      if (d.own_streams) {
        cudaStreamDestroy(d.compute);
        cudaStreamDestroy(d.copy_in);
      }
    }
    for (const auto& [gpu, e] : events_) {
      cudaSetDevice(gpu);
      cudaEventDestroy(e);
    }
    devs_.clear();
    events_.clear();
    parts_.reset();
  }

  const Plan& plan_;
  std::size_t n_;
  GpuDevices::Storage storage_;  // of every tensor
  std::size_t esize_;            // bytes of one element
  std::unique_ptr<GreenPartitions> parts_;
  std::vector<Device> devs_;
  std::mutex events_mu_;
  std::vector<std::pair<int, cudaEvent_t>> events_;  // every worker's, with its GPU
  std::string attach_error_;                         // the first failure of attach()
  std::string label_;
  bool staged_ = false;                       // --gpu-link host
  std::unique_ptr<std::mutex[]> staging_mu_;  // per receiving device
};

// bf16 holds whole numbers exactly only up to 256: indices of longer tables would name other
// rows, and the argmax (or top-k indices) of a longer axis would be rounded. A bad request, said
// before any GPU is looked for.
void check_bf16_indices(const Plan& plan, GpuDevices::Storage storage) {
  if (storage != GpuDevices::Storage::bf16) return;
  for (std::size_t v = 0; v < plan.kernels.size(); ++v) {
    const auto& k = plan.kernels[v];
    const bool gather = k.op == engine_detail::KernelOp::gather;
    const std::int64_t rows = !gather ? 0 : k.p1 != 0 ? k.in[0].shape.back() : k.in[0].shape[0];
    if (rows > kBf16WholeNumbers)
      throw InputError(fmt::format(
          "node {} gathers {}, and --gpu-dtype bf16 holds indices exactly only up to {}: use "
          "--gpu-dtype f32",
          v,
          k.p1 != 0 ? fmt::format("elements of {}-element rows", rows)
                    : fmt::format("rows of a {}-row table", rows),
          kBf16WholeNumbers));
    if (k.op == engine_detail::KernelOp::reduce && k.fn == engine_detail::Fn::argmax &&
        k.in[0].shape.back() > kBf16WholeNumbers)
      throw InputError(fmt::format(
          "node {} takes the index of the largest of {} elements, and --gpu-dtype bf16 holds "
          "indices exactly only up to {}: use --gpu-dtype f32",
          v, k.in[0].shape.back(), kBf16WholeNumbers));
    if (k.op == engine_detail::KernelOp::topk && k.p1 != 0 &&
        k.in[0].shape.back() > kBf16WholeNumbers)
      throw InputError(fmt::format(
          "node {} takes the indices of the top {} of {} elements, and --gpu-dtype bf16 holds "
          "indices exactly only up to {}: use --gpu-dtype f32",
          v, k.shape.back(), k.in[0].shape.back(), kBf16WholeNumbers));
  }
}

}  // namespace

std::unique_ptr<DeviceBackend> make_cuda_backend(const Plan& plan, const EngineOptions& options,
                                                 int nodes) {
  check_bf16_indices(plan, options.gpu.storage);
  return std::make_unique<CudaBackend>(plan, options, nodes);
}

}  // namespace doppler::cuda_detail

namespace doppler {

void enable_cuda_backend() {
  engine_detail::set_cuda_backend_factory(&cuda_detail::make_cuda_backend);
}

}  // namespace doppler
