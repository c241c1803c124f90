// The CPU backend: host buffers, the plan's kernels (or the GPU's split of them), memcpy.
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "device_backend.hpp"
#include "host_device_exec.hpp"

namespace doppler::engine_detail {

namespace {

// Buffers of T (float; dev::Bf16 only with the GPU's split).
template <class T>
class CpuBackend : public DeviceBackend {
public:
  CpuBackend(const Plan& plan, int devices, int nodes, std::optional<GpuDevices> gpu_split)
      : plan_(&plan),
        n_(static_cast<std::size_t>(nodes)),
        bufs_(static_cast<std::size_t>(devices) * n_),
        scratch_(static_cast<std::size_t>(devices)),
        ins_(static_cast<std::size_t>(devices)) {
    if (gpu_split)
      for (int d = 0; d < devices; ++d)
        split_.push_back(std::make_unique<HostDeviceExec<T>>(plan, gpu_split->math));
  }

  void ensure(DeviceId d, NodeId v, std::size_t elements) override {
    auto& b = bufs_[index(d, v)];
    if (b.size() != elements) b.assign(elements, T{});
  }
  void* buffer(DeviceId d, NodeId v) override { return typed(d, v); }
  bool has_buffer(DeviceId d, NodeId v) const override { return !bufs_[index(d, v)].empty(); }
  std::optional<DeviceInterval> launch(DeviceId d, NodeId v, std::span<const void* const> inputs,
                                       void* out) override {
    const auto i = static_cast<std::size_t>(d);
    std::vector<const T*>& in = ins_[i];
    in.clear();
    for (const void* p : inputs) in.push_back(static_cast<const T*>(p));
    if (!split_.empty())
      run_with<T>(*plan_, v, in, static_cast<T*>(out), *split_[i]);
    else if constexpr (std::is_same_v<T, float>)
      run_kernel(*plan_, v, in.data(), static_cast<float*>(out), scratch_[i]);
    return std::nullopt;  // the host's clock is the device's
  }
  std::optional<DeviceInterval> copy(NodeId v, DeviceId from, DeviceId to,
                                     std::size_t elements) override {
    std::memcpy(typed(to, v), typed(from, v), elements * sizeof(T));
    return std::nullopt;
  }
  void read(DeviceId d, NodeId v, std::span<float> out) override {
    const T* p = typed(d, v);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = dev::as_f32(p[i]);
  }
  bool host_memory() const override { return std::is_same_v<T, float>; }

private:
  std::size_t index(DeviceId d, NodeId v) const {
    return static_cast<std::size_t>(d) * n_ + static_cast<std::size_t>(v);
  }
  T* typed(DeviceId d, NodeId v) {
    auto& b = bufs_[index(d, v)];
    return b.empty() ? nullptr : b.data();
  }
  const Plan* plan_;
  std::size_t n_;
  std::vector<std::vector<T>> bufs_;                       // devices x nodes
  std::vector<std::vector<float>> scratch_;                // per device (the plan's kernels)
  std::vector<std::vector<const T*>> ins_;                 // per device: one launch's inputs
  std::vector<std::unique_ptr<HostDeviceExec<T>>> split_;  // per device, with gpu_split
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cpu_backend(const Plan& plan, int devices, int nodes,
                                                std::optional<GpuDevices> gpu_split) {
  if (gpu_split && gpu_split->storage == GpuDevices::Storage::bf16)
    return std::make_unique<CpuBackend<dev::Bf16>>(plan, devices, nodes, gpu_split);
  return std::make_unique<CpuBackend<float>>(plan, devices, nodes, gpu_split);
}

}  // namespace doppler::engine_detail
