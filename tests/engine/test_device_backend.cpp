// The Runtime with another DeviceBackend: it calls the backend for every kernel and every copy
// between local devices, and the dataflow it drives gives the same outputs as the Engine's
// CPU backend. A GPU backend would plug in the same way.
#include <atomic>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "engine/runtime.hpp"
#include "engine_support.hpp"

namespace doppler {
namespace {

using engine_detail::DeviceBackend;

// The CPU backend, counting the kernels launched per device and the copies made.
class CountingBackend : public DeviceBackend {
public:
  CountingBackend(const engine_detail::Plan& plan, int devices, int nodes)
      : cpu_(engine_detail::make_cpu_backend(plan, devices, nodes)), launches_(devices) {}
  void ensure(DeviceId d, NodeId v, std::size_t elements) override { cpu_->ensure(d, v, elements); }
  void* buffer(DeviceId d, NodeId v) override { return cpu_->buffer(d, v); }
  bool has_buffer(DeviceId d, NodeId v) const override { return cpu_->has_buffer(d, v); }
  std::optional<engine_detail::DeviceInterval> launch(DeviceId d, NodeId v,
                                                      std::span<const void* const> in,
                                                      void* out) override {
    ++launches_[static_cast<std::size_t>(d)];  // only d's compute worker touches this entry
    return cpu_->launch(d, v, in, out);
  }
  std::optional<engine_detail::DeviceInterval> copy(NodeId v, DeviceId from, DeviceId to,
                                                    std::size_t elements) override {
    copies_.fetch_add(1);
    return cpu_->copy(v, from, to, elements);
  }

private:
  std::unique_ptr<DeviceBackend> cpu_;

public:
  std::vector<int> launches_;   ///< kernels launched per device
  std::atomic<int> copies_{0};  ///< copies between local devices
};

TEST(DeviceBackend, RuntimeRunsEveryKernelAndCopyThroughTheBackend) {
  const Graph g = test::small_workloads(3)[3].graph;  // llama-layer
  std::mt19937_64 rng(7);
  const Assignment a = test::random_assignment(g, 3, rng);
  EngineOptions eo;
  eo.devices = 3;
  Engine reference(g, eo);
  reference.run(a);
  engine_detail::configure_process();
  const engine_detail::Plan plan = engine_detail::compile_plan(g, KernelMode::real, 1.0);
  engine_detail::RuntimeConfig cfg;
  cfg.devices = 3;
  auto owned = std::make_unique<CountingBackend>(plan, 3, g.num_nodes());
  CountingBackend& backend = *owned;
  engine_detail::Runtime rt(g, plan, cfg, std::move(owned));
  engine_detail::RunRecord rec;
  rt.run(a.device_of, DispatchRule::fifo, a.order, nullptr, rec);
  // Every op launched once, on its device; one copy per (output, other device that reads it).
  const auto per_device = a.ops_per_device();
  for (int d = 0; d < 3; ++d)
    EXPECT_EQ(backend.launches_[static_cast<std::size_t>(d)],
              per_device[static_cast<std::size_t>(d)]);
  std::set<std::pair<NodeId, DeviceId>> needed;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    for (NodeId u : g.predecessors(v)) {
      const DeviceId du = a.device_of[static_cast<std::size_t>(u)];
      const DeviceId dv = a.device_of[static_cast<std::size_t>(v)];
      if (du != dv) needed.insert({u, dv});
    }
  EXPECT_EQ(backend.copies_.load(), static_cast<int>(needed.size()));
  // The same values as the Engine's own run.
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto expect = reference.output(v);
    const float* got = rt.host_floats(a.device_of[static_cast<std::size_t>(v)], v);
    for (std::size_t i = 0; i < expect.size(); ++i) ASSERT_EQ(got[i], expect[i]) << "node " << v;
  }
}

}  // namespace
}  // namespace doppler
