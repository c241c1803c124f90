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

/// `v` as a device stores it: T = float as it is, dev::Bf16 rounded to nearest even (cached
/// values and synthetic operands, on the host and when uploaded to a GPU).
template <class T>
std::vector<T> stored_as(const std::vector<float>& v);

/// A KernelExec on the host for one device (not thread-safe: one per worker), tensors stored as
/// T (float, or dev::Bf16: every result rounded to bf16 where the GPU rounds it).
template <class T>
class HostDeviceExec : public KernelExec<T> {
public:
  HostDeviceExec(const Plan& plan, GpuDevices::Math math);
  void copy(const dev::CopyArgs& a, const T* s, T* d) override;
  void unary(const dev::UnaryArgs& a, const T* x, T* o) override;
  void binary(const dev::BinaryArgs& a, const T* x, const T* y, T* o) override;
  void reduce(const dev::ReduceArgs& a, const T* x, T* o) override;
  void rotary(const dev::RotaryArgs& a, const T* x, const T* t, T* o) override;
  void gather(const dev::GatherArgs& a, const T* table, const T* idx, T* o) override;
  void loop(const dev::LoopArgs& a, const dev::Operands<T>& in, T* o) override;
  void aggregate(const dev::AggregateArgs& a, const dev::Operands<T>& in, T* o) override;
  void checksum(const dev::ChecksumArgs& a, const dev::Operands<T>& in, T* o) override;
  void bias(const dev::BiasArgs& a, const T* b, T* o) override;
  void im2col(const dev::Im2colArgs& a, const T* x, T* c) override;
  void direct_conv(const dev::DirectConvArgs& a, const T* x, const T* w, T* o) override;
  void pool(const dev::PoolArgs& a, const T* w, T* o) override;
  void resize(const dev::ResizeArgs& a, const T* w, T* o) override;
  void where(const dev::WhereArgs& a, const T* c, const T* x, const T* y, T* o) override;
  void cell(const dev::CellArgs& a, const T* p, const T* q, const T* r, const T* s, T* o) override;
  void scan(const dev::ScanArgs& a, const T* x, T* o) override;
  void col2im(const dev::Col2imArgs& a, const T* cols, T* o) override;
  /// cblas_sgemm per batch element on operands rounded by round_gemm_operand(), f32 sums; with
  /// Bf16 storage C is summed in f32 and then rounded.
  void gemm(const GemmCall<T>& g) override;
  T* scratch(std::int64_t elements) override;
  const T* values(NodeId v) override;
  const T* syn_a() override { return held(plan_.syn_a, syn_a_); }
  const T* syn_b() override { return held(plan_.syn_b, syn_b_); }

protected:
  const Plan& plan_;
  GpuDevices::Math math_;

private:
  // C += or = op(A) op(B) of one batch element, through dense f32 copies where needed.
  void gemm_one(const GemmCall<T>& g, const T* a, const T* b, T* c);
  // The plan's `planned` floats as this device holds them: themselves (f32), or `stored`.
  static const T* held(const std::vector<float>& planned, const std::vector<T>& stored);
  std::vector<T> scratch_;
  std::vector<std::vector<T>> values_;  // per node: its values as T (Bf16 storage)
  std::vector<T> syn_a_, syn_b_;        // Plan::syn_a, syn_b as T (Bf16 storage)
  std::vector<float> a_, b_, c_;        // one GEMM's rounded operands and f32 result
};

extern template class HostDeviceExec<float>;
extern template class HostDeviceExec<dev::Bf16>;

}  // namespace doppler::engine_detail
