// The CPU device backend: host buffers, the plan's kernels (or the GPU's split of them), memcpy.
#include <cstring>
#include <memory>
#include <vector>

#include "device_backend.hpp"
#include "host_device_exec.hpp"

namespace doppler::engine_detail {

namespace {

class CpuBackend : public DeviceBackend {
public:
  CpuBackend(const Plan& plan, int devices, int nodes, std::optional<GpuDevices::Math> gpu_split)
      : plan_(&plan),
        n_(static_cast<std::size_t>(nodes)),
        bufs_(static_cast<std::size_t>(devices) * n_),
        scratch_(static_cast<std::size_t>(devices)) {
    if (gpu_split)
      for (int d = 0; d < devices; ++d)
        split_.push_back(std::make_unique<HostDeviceExec>(plan, *gpu_split));
  }

  void ensure(DeviceId d, NodeId v, std::size_t floats) override {
    auto& b = bufs_[index(d, v)];
    if (b.size() != floats) b.assign(floats, 0.0f);
  }
  float* buffer(DeviceId d, NodeId v) override {
    auto& b = bufs_[index(d, v)];
    return b.empty() ? nullptr : b.data();
  }
  bool has_buffer(DeviceId d, NodeId v) const override { return !bufs_[index(d, v)].empty(); }
  std::optional<DeviceInterval> launch(DeviceId d, NodeId v, std::span<const float* const> inputs,
                                       float* out) override {
    const auto i = static_cast<std::size_t>(d);
    if (split_.empty())
      run_kernel(*plan_, v, inputs.data(), out, scratch_[i]);
    else
      run_with(*plan_, v, inputs, out, *split_[i]);
    return std::nullopt;  // the host's clock is the device's
  }
  std::optional<DeviceInterval> copy(NodeId v, DeviceId from, DeviceId to,
                                     std::size_t floats) override {
    std::memcpy(buffer(to, v), buffer(from, v), floats * sizeof(float));
    return std::nullopt;
  }

private:
  std::size_t index(DeviceId d, NodeId v) const {
    return static_cast<std::size_t>(d) * n_ + static_cast<std::size_t>(v);
  }
  const Plan* plan_;
  std::size_t n_;
  std::vector<std::vector<float>> bufs_;     // devices x nodes
  std::vector<std::vector<float>> scratch_;  // per device
  std::vector<std::unique_ptr<HostDeviceExec>> split_;  // per device, with gpu_split
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cpu_backend(const Plan& plan, int devices, int nodes,
                                                std::optional<GpuDevices::Math> gpu_split) {
  return std::make_unique<CpuBackend>(plan, devices, nodes, gpu_split);
}

}  // namespace doppler::engine_detail
