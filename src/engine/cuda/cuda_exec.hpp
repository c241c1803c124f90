#pragma once
// Internal: the KernelExec of one CUDA device (engine/kernel_driver.hpp): elementwise kernels
// launched on the device's compute stream, GEMMs through its cuBLAS handle (bound to that stream),
// scratch, cached values and synthetic operands in its device memory. Everything is enqueued;
// the caller waits for the stream (an event) to learn when the kernel finished.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <span>

#include "engine/kernel_driver.hpp"

namespace doppler::cuda_detail {

/// Device memory and handles one kernel's launches use (owned by the backend's device).
struct ExecResources {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;  ///< bound to `stream`
  float* scratch = nullptr;       ///< at least scratch_floats floats
  std::int64_t scratch_floats = 0;
  std::span<float* const> values;  ///< per node: its cached values, or nullptr
  const float* syn_a = nullptr;    ///< Plan::syn_a on the device (synthetic kernels)
  const float* syn_b = nullptr;
  cublasComputeType_t math = CUBLAS_COMPUTE_32F;  ///< how GEMMs compute (f32, tf32 or bf16)
};

/// Enqueues a kernel's steps on one device. Throws EngineError when a launch or a cuBLAS call
/// fails, or when the plan asks for more scratch than the device holds.
class CudaExec final : public engine_detail::KernelExec {
public:
  explicit CudaExec(const ExecResources& r) : r_(r) {}
  void copy(const engine_detail::dev::CopyArgs& a, const float* src, float* dst) override;
  void unary(const engine_detail::dev::UnaryArgs& a, const float* x, float* out) override;
  void binary(const engine_detail::dev::BinaryArgs& a, const float* x, const float* y,
              float* out) override;
  void reduce(const engine_detail::dev::ReduceArgs& a, const float* x, float* out) override;
  void rotary(const engine_detail::dev::RotaryArgs& a, const float* x, const float* table,
              float* out) override;
  void loop(const engine_detail::dev::LoopArgs& a, const engine_detail::dev::Operands& in,
            float* out) override;
  void checksum(const engine_detail::dev::ChecksumArgs& a, const engine_detail::dev::Operands& in,
                float* out) override;
  void bias(const engine_detail::dev::BiasArgs& a, const float* bias, float* out) override;
  void im2col(const engine_detail::dev::Im2colArgs& a, const float* x, float* cols) override;
  void direct_conv(const engine_detail::dev::DirectConvArgs& a, const float* x, const float* wt,
                   float* out) override;
  void pool(const engine_detail::dev::PoolArgs& a, const float* win, float* out) override;
  void gemm(const engine_detail::GemmCall& g) override;
  float* scratch(std::int64_t floats) override;
  const float* values(NodeId v) override;
  const float* syn_a() override { return r_.syn_a; }
  const float* syn_b() override { return r_.syn_b; }

private:
  const ExecResources& r_;
};

/// Throws EngineError "WHAT: cuBLAS status NAME" unless s is CUBLAS_STATUS_SUCCESS.
void check_blas(cublasStatus_t s, const char* what);

}  // namespace doppler::cuda_detail
