#pragma once
// The device path of kernel plans checked on the host (src/engine/kernel_driver.hpp,
// device_ops.hpp): a KernelExec that runs the element functions in loops and GEMM calls as plain
// double-sum loops, and a check that every node of a graph, run through run_with() on the CPU
// kernels' inputs, gives run_kernel's output. Shared by tests/engine (workloads, CNNs, einsums)
// and tests/onnx (imported models).
#include <set>
#include <string>
#include <vector>

#include "engine/kernel_driver.hpp"

#include "doppler/graph/graph.hpp"

namespace doppler::test {

/// Runs every KernelExec call at once on the host: element functions in loops, GEMMs as plain
/// loops (double sums), independent of the BLAS the CPU kernels use.
class HostExec : public engine_detail::KernelExec {
public:
  explicit HostExec(const engine_detail::Plan& plan) : plan_(plan) {}
  void copy(const engine_detail::dev::CopyArgs& a, const float* s, float* d) override;
  void unary(const engine_detail::dev::UnaryArgs& a, const float* x, float* o) override;
  void binary(const engine_detail::dev::BinaryArgs& a, const float* x, const float* y,
              float* o) override;
  void reduce(const engine_detail::dev::ReduceArgs& a, const float* x, float* o) override;
  void rotary(const engine_detail::dev::RotaryArgs& a, const float* x, const float* t,
              float* o) override;
  void loop(const engine_detail::dev::LoopArgs& a, const engine_detail::dev::Operands& in,
            float* o) override;
  void checksum(const engine_detail::dev::ChecksumArgs& a, const engine_detail::dev::Operands& in,
                float* o) override;
  void bias(const engine_detail::dev::BiasArgs& a, const float* b, float* o) override;
  void im2col(const engine_detail::dev::Im2colArgs& a, const float* x, float* c) override;
  void direct_conv(const engine_detail::dev::DirectConvArgs& a, const float* x, const float* w,
                   float* o) override;
  void pool(const engine_detail::dev::PoolArgs& a, const float* w, float* o) override;
  void gemm(const engine_detail::GemmCall& g) override;
  /// A fresh area each time, poisoned with NaN: a step that read scratch it did not write shows.
  float* scratch(engine_detail::dev::I64 floats) override;
  const float* values(NodeId v) override;
  const float* syn_a() override { return plan_.syn_a.data(); }
  const float* syn_b() override { return plan_.syn_b.data(); }

  int gemms = 0;  ///< GEMM calls made

private:
  const engine_detail::Plan& plan_;
  std::vector<float> scratch_;
};

/// Every node's output by the CPU kernels (in topological order), then each node again through
/// run_with() with a HostExec on the same inputs: a gtest failure (one per node) where the node
/// differs by more than 1e-5 relative in L2, or an element is NaN or infinite on one side only
/// (equal infinities, such as masked attention scores, agree). Returns the kernel kinds seen.
std::set<engine_detail::KernelOp> expect_device_path_agrees(const Graph& g, KernelMode mode,
                                                            const std::string& label,
                                                            double scale = 1.0);

}  // namespace doppler::test
