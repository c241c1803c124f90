#pragma once
// The device path of kernel plans checked on the host (src/engine/kernel_driver.hpp,
// device_ops.hpp): a KernelExec that runs the element functions in loops and GEMM calls as plain
// double-sum loops, and a check that every node of a graph, run through run_with() on the CPU
// kernels' inputs, gives run_kernel's output. Shared by tests/engine (workloads, CNNs, einsums)
// and tests/onnx (imported models).
#include <set>
#include <string>
#include <vector>

#include "engine/host_device_exec.hpp"
#include "engine/kernel_driver.hpp"

#include "doppler/graph/graph.hpp"

namespace doppler::test {

/// The host's KernelExec of the engine (engine/host_device_exec.hpp: the element functions in
/// loops) with GEMMs as plain loops summed in double, independent of the BLAS the CPU kernels
/// and HostDeviceExec use; GEMM operands rounded as `math` says first.
class HostExec : public engine_detail::HostDeviceExec {
public:
  explicit HostExec(const engine_detail::Plan& plan, GpuDevices::Math math = GpuDevices::Math::f32)
      : HostDeviceExec(plan, math) {}
  void gemm(const engine_detail::GemmCall& g) override;
  /// A fresh area each time, poisoned with NaN: a step that read scratch it did not write shows.
  float* scratch(engine_detail::dev::I64 floats) override;

  int gemms = 0;  ///< GEMM calls made

private:
  std::vector<float> scratch_;
};

/// Every node's output of `plan` (compiled from `g`) run end to end in topological order, each
/// node on the outputs of the nodes before it: through run_with() with `exec`, or the CPU
/// kernels (run_kernel) when `exec` is null.
std::vector<std::vector<float>> run_end_to_end(const engine_detail::Plan& plan, const Graph& g,
                                               engine_detail::KernelExec* exec);

/// Every node's output by the CPU kernels (in topological order), then each node again through
/// run_with() with a HostExec on the same inputs: a gtest failure (one per node) where the node
/// differs by more than 1e-5 relative in L2, or an element is NaN or infinite on one side only
/// (equal infinities, such as masked attention scores, agree). Returns the kernel kinds seen.
std::set<engine_detail::KernelOp> expect_device_path_agrees(const Graph& g, KernelMode mode,
                                                            const std::string& label,
                                                            double scale = 1.0);

}  // namespace doppler::test
