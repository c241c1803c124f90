#include "doppler/engine/options.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "doppler/engine/result.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/util/enum_names.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace {

constexpr std::array<EnumName<KernelMode>, 4> kKernelModes{{{KernelMode::automatic, "auto"},
                                                            {KernelMode::real, "real"},
                                                            {KernelMode::synthetic, "synthetic"},
                                                            {KernelMode::empty, "empty"}}};
constexpr std::array<EnumName<CopyMode>, 2> kCopyModes{
    {{CopyMode::worker, "worker"}, {CopyMode::producer, "producer"}}};
constexpr std::array<EnumName<Backend>, 2> kBackends{
    {{Backend::cpu, "cpu"}, {Backend::cuda, "cuda"}}};
constexpr std::array<EnumName<GpuDevices::Math>, 3> kGpuMaths{{{GpuDevices::Math::f32, "f32"},
                                                               {GpuDevices::Math::tf32, "tf32"},
                                                               {GpuDevices::Math::bf16, "bf16"}}};
constexpr std::array<EnumName<GpuDevices::Storage>, 2> kGpuStorages{
    {{GpuDevices::Storage::f32, "f32"}, {GpuDevices::Storage::bf16, "bf16"}}};

}  // namespace

const char* kernel_mode_name(KernelMode m) {
  return enum_name(kKernelModes, m).data();
}

KernelMode parse_kernel_mode(const std::string& name) {
  return parse_enum(kKernelModes, name, "kernel mode");
}

const char* backend_name(Backend b) {
  return enum_name(kBackends, b).data();
}

const char* gpu_math_name(GpuDevices::Math m) {
  return enum_name(kGpuMaths, m).data();
}

GpuDevices::Math parse_gpu_math(const std::string& name) {
  return parse_enum(kGpuMaths, name, "GEMM math");
}

const char* gpu_storage_name(GpuDevices::Storage s) {
  return enum_name(kGpuStorages, s).data();
}

GpuDevices::Storage parse_gpu_storage(const std::string& name) {
  return parse_enum(kGpuStorages, name, "tensor storage type");
}

int gpu_storage_bytes(GpuDevices::Storage s) {
  return s == GpuDevices::Storage::bf16 ? 2 : 4;
}

GpuDevices::Math effective_gpu_math(const GpuDevices& gpu) {
  if (gpu.storage == GpuDevices::Storage::f32) return gpu.math;
  if (gpu.math == GpuDevices::Math::tf32)
    throw InputError(
        "bf16 tensors (--gpu-dtype bf16) take bf16 GEMMs: tf32 math (--gpu-math tf32) does not "
        "apply");
  return GpuDevices::Math::bf16;
}

const char* copy_mode_name(CopyMode m) {
  return enum_name(kCopyModes, m).data();
}

CopyMode parse_copy_mode(const std::string& name) {
  return parse_enum(kCopyModes, name, "copy mode");
}

double LinkEmulation::min_seconds(DeviceId s, DeviceId d, double bytes) const {
  if (s == d) return 0;
  if (profile) return profile->transfer_time(s, d, bytes);
  return latency + (bandwidth > 0 ? bytes / bandwidth : 0.0);
}

std::string LinkEmulation::label() const {
  if (profile) return "profile " + profile->name + " (uncontended route times)";
  if (!enabled()) return "off";
  return fmt::format("{} s latency + bytes / {}", latency,
                     bandwidth > 0 ? fmt::format("{:.4g} B/s", bandwidth) : "unlimited");
}

LinkEmulation LinkEmulation::from(double bandwidth, double latency, const std::string& profile) {
  if (!(bandwidth >= 0) || !std::isfinite(bandwidth))
    throw InputError("--link-bandwidth must be a finite number of bytes/s >= 0");
  if (!(latency >= 0) || !std::isfinite(latency))
    throw InputError("--link-latency must be a finite number of seconds >= 0");
  LinkEmulation e;
  e.bandwidth = bandwidth;
  e.latency = latency;
  if (!profile.empty()) {
    if (bandwidth > 0 || latency > 0)
      throw InputError("--link-profile excludes --link-bandwidth and --link-latency");
    e.profile = std::make_shared<const HardwareProfile>(load_hardware_profile(profile));
  }
  return e;
}

Measurement summarize_makespans(std::vector<double> makespans) {
  if (makespans.empty()) throw InputError("no makespans to summarize");
  Measurement m;
  m.makespans = makespans;
  std::sort(makespans.begin(), makespans.end());
  const std::size_t n = makespans.size();
  m.median = n % 2 ? makespans[n / 2] : 0.5 * (makespans[n / 2 - 1] + makespans[n / 2]);
  m.min = makespans.front();
  m.max = makespans.back();
  m.interval = median_interval(makespans);
  return m;
}

Measurement measure_runs(const std::function<EngineResult()>& run, int repeat, int warmup) {
  if (repeat < 1) throw InputError("measure: repeat must be >= 1");
  return measure_runs(run, RepeatPolicy::fixed(repeat), warmup);
}

Measurement measure_runs(const std::function<EngineResult()>& run, const RepeatPolicy& policy,
                         int warmup) {
  if (policy.min_repeat < 1 || policy.max_repeat < policy.min_repeat)
    throw InputError(fmt::format("measure: need 1 <= min repeat ({}) <= max repeat ({})",
                                 policy.min_repeat, policy.max_repeat));
  for (int i = 0; i < warmup; ++i) run();
  std::vector<EngineResult> runs;
  std::vector<double> ms;
  double spent = 0;
  const auto more = [&] {
    const int n = static_cast<int>(ms.size());
    if (n < policy.min_repeat) return true;
    if (n >= policy.max_repeat || (policy.max_seconds > 0 && spent >= policy.max_seconds))
      return false;
    return policy.target > 0 && median_interval(ms).relative_halfwidth() > policy.target;
  };
  while (more()) {
    runs.push_back(run());
    ms.push_back(runs.back().makespan_seconds);
    spent += ms.back();
  }
  Measurement out = summarize_makespans(ms);
  std::size_t best = 0;
  for (std::size_t i = 1; i < runs.size(); ++i)
    if (std::abs(ms[i] - out.median) < std::abs(ms[best] - out.median)) best = i;
  out.median_run = std::move(runs[best]);
  return out;
}

}  // namespace doppler
