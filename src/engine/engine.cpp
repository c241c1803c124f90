#include "doppler/engine/engine.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include <cblas.h>
#include <fmt/format.h>

#include "kernel_driver.hpp"
#include "plan.hpp"
#include "runtime.hpp"

#include "doppler/util/components.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/retain_memory.hpp"

namespace doppler {

using engine_detail::Plan;
using engine_detail::RunRecord;
using engine_detail::Runtime;

struct Engine::Impl {
  const Graph* graph = nullptr;
  EngineOptions options;
  Plan plan;
  std::unique_ptr<Runtime> runtime;
  std::vector<DeviceId> last;  // assignment of the last successful run
  std::vector<std::string> warnings;
  std::mutex run_mu;
  RunRecord rec;
  // Outputs read back from device memory since the last run (backends without host buffers).
  mutable std::vector<std::vector<float>> read_back;
  mutable std::mutex read_mu;
};

namespace engine_detail {

EngineResult to_result(const Graph& g, std::span<const DeviceId> device_of, int devices,
                       const RunRecord& rec) {
  EngineResult r;
  Schedule& s = r.schedule;
  s.unit = CostUnit::seconds;
  s.devices = devices;
  s.makespan = rec.makespan;
  s.device.assign(device_of.begin(), device_of.end());
  s.ready = rec.ready;
  s.start = rec.start;
  s.finish = rec.finish;
  s.transfers = rec.transfers;
  s.busy.assign(static_cast<std::size_t>(devices), 0.0);
  s.slots.assign(static_cast<std::size_t>(devices), 1);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto i = static_cast<std::size_t>(v);
    if (s.start[i] >= 0 && s.device[i] >= 0)
      s.busy[static_cast<std::size_t>(s.device[i])] += s.finish[i] - s.start[i];
  }
  for (int d = 0; d < devices; ++d) s.link_names.push_back(fmt::format("copy worker dev {}", d));
  for (const TransferRecord& t : s.transfers) {
    s.cross_bytes += t.bytes;
    ++s.cross_transfers;
  }
  r.makespan_seconds = s.makespan;
  r.bytes_copied = s.cross_bytes;
  r.copies = s.cross_transfers;
  return r;
}

void configure_process() {
  static std::once_flag once;
  std::call_once(once, [] {
    openblas_set_num_threads(1);
    retain_freed_memory();
  });
}

}  // namespace engine_detail

Engine::Engine(const Graph& g, EngineOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.graph = &g;
  if (options.devices < 1 || options.devices > kMaxDevices)
    throw InputError(fmt::format("engine: device count must be in 1..{}", kMaxDevices));
  if (options.link.profile && options.link.profile->num_devices() < options.devices)
    throw InputError(fmt::format("link emulation profile '{}' has {} devices, fewer than {}",
                                 options.link.profile->name, options.link.profile->num_devices(),
                                 options.devices));
  if (options.timeout_seconds < 0 || !std::isfinite(options.timeout_seconds))
    throw InputError("engine: timeout must be >= 0 seconds");
  if (options.gpu_split && options.backend != Backend::cpu)
    throw InputError("engine: gpu_split is the CPU backend's emulation of a GPU's kernels");
  m.options = options;
  m.options.gpu.math = effective_gpu_math(options.gpu);
  engine_detail::configure_process();
  m.plan = engine_detail::compile_plan(g, options.kernels, options.synthetic_scale);
  engine_detail::RuntimeConfig cfg;
  cfg.devices = options.devices;
  cfg.pin = options.pin_threads;
  cfg.copies = options.copies;
  cfg.link = options.link;
  cfg.fault = options.fault;
  cfg.timeout = options.timeout_seconds;
  std::unique_ptr<engine_detail::DeviceBackend> backend;  // null: the CPU backend
  if (options.backend == Backend::cuda) {
    const engine_detail::BackendFactory make = engine_detail::cuda_backend_factory();
    if (!make && !component_built(Component::cuda))
      throw component_absent("--backend cuda", Component::cuda);
    if (!make)
      throw InputError(
          "--backend cuda: this program did not register the CUDA backend (link "
          "libdoppler_cuda and call doppler::enable_cuda_backend())");
    engine_detail::check_device_plan(m.plan);
    cfg.pin = false;  // a GPU's workers wait for it rather than compute
    backend = make(m.plan, m.options, g.num_nodes());
  } else if (options.gpu_split) {
    engine_detail::check_device_plan(m.plan);
    backend =
        engine_detail::make_cpu_backend(m.plan, options.devices, g.num_nodes(), m.options.gpu);
  }
  m.runtime = std::make_unique<Runtime>(g, m.plan, cfg, std::move(backend));
  if (options.backend == Backend::cpu && options.devices > m.runtime->cores())
    m.warnings.push_back(fmt::format(
        "{} devices on {} usable cores: compute workers share cores and are not pinned, so "
        "measured makespans include that contention",
        options.devices, m.runtime->cores()));
}

Engine::~Engine() = default;

EngineResult Engine::run(const Assignment& a, DispatchRule rule) {
  Impl& m = *impl_;
  a.validate(*m.graph, 0, "assignment");
  if (a.devices > m.options.devices)
    throw InputError(fmt::format("assignment uses {} devices but the engine has {}", a.devices,
                                 m.options.devices));
  if (rule == DispatchRule::priority && a.order.empty())
    throw InputError("dispatch rule 'priority' needs an order in the assignment");
  std::lock_guard lk(m.run_mu);
  m.last.clear();
  {
    std::lock_guard rk(m.read_mu);
    m.read_back.clear();
  }
  m.runtime->run(a.device_of, rule, a.order, nullptr, m.rec);
  m.last = a.device_of;
  return engine_detail::to_result(*m.graph, a.device_of, a.devices, m.rec);
}

void Engine::inject_fault(const FaultInjection& fault) {
  std::lock_guard lk(impl_->run_mu);
  impl_->runtime->set_fault(fault);
}

Measurement Engine::measure(const Assignment& a, DispatchRule rule, int repeat, int warmup) {
  return measure_runs([&] { return run(a, rule); }, repeat, warmup);
}

Measurement Engine::measure(const Assignment& a, DispatchRule rule, const RepeatPolicy& policy,
                            int warmup) {
  return measure_runs([&] { return run(a, rule); }, policy, warmup);
}

std::span<const float> Engine::output(NodeId v) const {
  const Impl& m = *impl_;
  if (v < 0 || v >= m.graph->num_nodes()) throw InputError(fmt::format("no node {}", v));
  if (m.last.empty()) return {};
  const DeviceId d = m.last[static_cast<std::size_t>(v)];
  const auto n = static_cast<std::size_t>(m.plan.kernels[static_cast<std::size_t>(v)].numel);
  if (m.runtime->host_buffers()) return {m.runtime->host_floats(d, v), n};
  std::lock_guard lk(m.read_mu);  // device memory: read back once per run and node
  if (m.read_back.empty()) m.read_back.resize(static_cast<std::size_t>(m.graph->num_nodes()));
  auto& out = m.read_back[static_cast<std::size_t>(v)];
  if (out.size() != n) {
    out.resize(n);
    m.runtime->read(d, v, out);
  }
  return out;
}

const std::vector<std::int64_t>& Engine::output_shape(NodeId v) const {
  if (v < 0 || v >= impl_->graph->num_nodes()) throw InputError(fmt::format("no node {}", v));
  return impl_->plan.kernels[static_cast<std::size_t>(v)].shape;
}

const Graph& Engine::graph() const {
  return *impl_->graph;
}
int Engine::devices() const {
  return impl_->options.devices;
}
KernelMode Engine::kernel_mode() const {
  return impl_->plan.mode;
}
double Engine::synthetic_scale() const {
  return impl_->plan.mode == KernelMode::synthetic ? impl_->plan.scale : 0.0;
}
double Engine::total_flops() const {
  return impl_->plan.total_flops;
}
bool Engine::pinned() const {
  return impl_->runtime->pinned();
}
const std::vector<std::string>& Engine::warnings() const {
  return impl_->warnings;
}

std::string Engine::describe() const {
  const Impl& m = *impl_;
  std::string kernels = kernel_mode_name(m.plan.mode);
  if (m.options.backend == Backend::cuda) {
    if (m.plan.mode == KernelMode::synthetic)
      kernels += fmt::format(" (scale {:.3g} FLOP and byte per cost unit)", m.plan.scale);
    return fmt::format(
        "{}, {} kernels (cuBLAS and elementwise kernels, {} in memory), link emulation {}",
        m.runtime->backend_label(), kernels, gpu_storage_name(m.options.gpu.storage),
        m.options.link.label());
  }
  if (m.plan.mode == KernelMode::real)
    kernels += m.options.gpu_split
                   ? fmt::format(" (the GPU's split, {} GEMM operands, {} in memory, OpenBLAS)",
                                 gpu_math_name(m.options.gpu.math),
                                 gpu_storage_name(m.options.gpu.storage))
                   : std::string(" (OpenBLAS, 1 thread per worker)");
  if (m.plan.mode == KernelMode::synthetic)
    kernels += fmt::format(" (scale {:.3g} FLOP and byte per cost unit)", m.plan.scale);
  return fmt::format("cpu engine, {} devices, {} kernels, workers {} ({} cores), link emulation {}",
                     m.options.devices, kernels, pinned() ? "pinned" : "not pinned",
                     m.runtime->cores(), m.options.link.label());
}

double median_makespan(Engine& engine, const Assignment& a, DispatchRule rule, int repeat,
                       int warmup) {
  return engine.measure(a, rule, repeat, warmup).median;
}

}  // namespace doppler
