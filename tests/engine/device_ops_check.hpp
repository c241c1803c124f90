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
/// and HostDeviceExec use; GEMM operands rounded as `math` says first; tensors stored as T (float
/// or dev::Bf16: GEMM results rounded once, to nearest even).
template <class T>
class HostExec : public engine_detail::HostDeviceExec<T> {
public:
  explicit HostExec(const engine_detail::Plan& plan, GpuDevices::Math math = GpuDevices::Math::f32)
      : engine_detail::HostDeviceExec<T>(plan, math),
        device_scratch_(engine_detail::device_scratch(plan)) {}
  void gemm(const engine_detail::GemmCall<T>& g) override;
  /// A fresh area each time, poisoned with NaN: a step that read scratch it did not write shows.
  /// A gtest failure when more is asked than a CUDA device allocates for the plan
  /// (engine_detail::device_scratch).
  T* scratch(engine_detail::dev::I64 elements) override;

  int gemms = 0;  ///< GEMM calls made

private:
  std::vector<T> scratch_;
  engine_detail::dev::I64 device_scratch_ = 0;
};

/// Every node's output of `plan` (compiled from `g`) run end to end in topological order, each
/// node on the outputs of the nodes before it: through run_with() with `exec`, or the CPU
/// kernels (run_kernel) when `exec` is null (T = float only; with `round_to_bf16` each output
/// rounded to bf16 before the next node reads it). Outputs widened to f32.
template <class T>
std::vector<std::vector<float>> run_end_to_end(const engine_detail::Plan& plan, const Graph& g,
                                               engine_detail::KernelExec<T>* exec,
                                               bool round_to_bf16 = false);

/// Every node's output by the CPU kernels (in topological order), then each node again through
/// run_with() with a HostExec on the same inputs: a gtest failure (one per node) where the node
/// differs by more than 1e-5 relative in L2 (an aggregate of at most dev::kAggregateOperands
/// blocks by anything: the same f32 additions in the same order), or an element is NaN or
/// infinite on one side only (equal infinities, such as masked attention scores, agree).
/// Returns the kernel kinds seen.
std::set<engine_detail::KernelOp> expect_device_path_agrees(const Graph& g, KernelMode mode,
                                                            const std::string& label,
                                                            double scale = 1.0);

/// The same check with tensors stored as bf16: each node's inputs are the CPU kernels' outputs
/// rounded to bf16, its reference the CPU kernel's output on those inputs rounded to bf16. The
/// two differ where sums in another order land on either side of a rounding boundary (one bf16
/// step, 2^-8 relative, in a few elements): a gtest failure where a node differs by more than
/// 2^-10 relative in L2 (about one element in 16 one step off) or an element is NaN or infinite
/// on one side only (2^-8 for a transposed convolution, whose GEMM columns are rounded to bf16
/// before col2im adds them). Aggregates must be exact (both add the blocks in order in f32 and
/// round once), but for 2^-8 per launch after the first where more than dev::kAggregateOperands
/// blocks take several (each rounds its partial sum).
std::set<engine_detail::KernelOp> expect_bf16_device_path_agrees(const Graph& g, KernelMode mode,
                                                                 const std::string& label,
                                                                 double scale = 1.0);

}  // namespace doppler::test
