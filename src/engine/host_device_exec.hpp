#pragma once
// Internal: the GPU backend's split of kernel plans (kernel_driver.hpp) run on the host: the
// element functions of device_ops.hpp in loops, and GEMM calls through OpenBLAS with their
// operands first rounded as Tensor Cores round them (`--gpu-math tf32|bf16`). The CPU backend
// runs kernels this way with EngineOptions::gpu_split, a reference that rounds where the GPU
// does (`execute --verify --backend cuda`).
#include <vector>

#include "kernel_driver.hpp"

#include "doppler/engine/options.hpp"

namespace doppler::engine_detail {

/// `x` rounded to nearest even as `math` keeps GEMM operands: f32 leaves it, tf32 keeps 10
/// mantissa bits, bf16 7 (cuBLAS's FAST_TF32 and FAST_16BF conversions); infinities and NaN
/// pass unchanged.
float round_gemm_operand(GpuDevices::Math math, float x);

/// A KernelExec on the host for one device (not thread-safe: one per worker).
class HostDeviceExec : public KernelExec {
public:
  HostDeviceExec(const Plan& plan, GpuDevices::Math math) : plan_(plan), math_(math) {}
  void copy(const dev::CopyArgs& a, const float* s, float* d) override;
  void unary(const dev::UnaryArgs& a, const float* x, float* o) override;
  void binary(const dev::BinaryArgs& a, const float* x, const float* y, float* o) override;
  void reduce(const dev::ReduceArgs& a, const float* x, float* o) override;
  void rotary(const dev::RotaryArgs& a, const float* x, const float* t, float* o) override;
  void loop(const dev::LoopArgs& a, const dev::Operands& in, float* o) override;
  void checksum(const dev::ChecksumArgs& a, const dev::Operands& in, float* o) override;
  void bias(const dev::BiasArgs& a, const float* b, float* o) override;
  void im2col(const dev::Im2colArgs& a, const float* x, float* c) override;
  void direct_conv(const dev::DirectConvArgs& a, const float* x, const float* w,
                   float* o) override;
  void pool(const dev::PoolArgs& a, const float* w, float* o) override;
  /// cblas_sgemm per batch element on operands rounded by round_gemm_operand().
  void gemm(const GemmCall& g) override;
  float* scratch(std::int64_t floats) override;
  const float* values(NodeId v) override;
  const float* syn_a() override { return plan_.syn_a.data(); }
  const float* syn_b() override { return plan_.syn_b.data(); }

protected:
  const Plan& plan_;
  GpuDevices::Math math_;

private:
  std::vector<float> scratch_, a_, b_;  // scratch, the rounded operands of one GEMM
};

}  // namespace doppler::engine_detail
