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

/// Device memory and handles one kernel's launches use (owned by the backend's device); the
/// pointers hold elements of the storage type.
struct ExecResources {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;  ///< bound to `stream`
  void* scratch = nullptr;        ///< at least scratch_elements elements
  std::int64_t scratch_elements = 0;
  std::span<void* const> values;  ///< per node: its cached values, or nullptr
  const void* syn_a = nullptr;    ///< Plan::syn_a on the device (synthetic kernels)
  const void* syn_b = nullptr;
  /// How f32 GEMMs compute (f32, tf32 or bf16); GEMMs on bf16 tensors always take their bf16
  /// operands to Tensor Cores with f32 sums (CUBLAS_COMPUTE_32F).
  cublasComputeType_t math = CUBLAS_COMPUTE_32F;
};

/// Enqueues a kernel's steps on one device, tensors stored as T (float or dev::Bf16). Throws
/// EngineError when a launch or a cuBLAS call fails, or when the plan asks for more scratch than
/// the device holds.
template <class T>
class CudaExec final : public engine_detail::KernelExec<T> {
public:
  explicit CudaExec(const ExecResources& r) : r_(r) {}
  void copy(const engine_detail::dev::CopyArgs& a, const T* src, T* dst) override;
  void unary(const engine_detail::dev::UnaryArgs& a, const T* x, T* out) override;
  void binary(const engine_detail::dev::BinaryArgs& a, const T* x, const T* y, T* out) override;
  void reduce(const engine_detail::dev::ReduceArgs& a, const T* x, T* out) override;
  void rotary(const engine_detail::dev::RotaryArgs& a, const T* x, const T* table, T* out) override;
  void gather(const engine_detail::dev::GatherArgs& a, const T* table, const T* idx,
              T* out) override;
  void loop(const engine_detail::dev::LoopArgs& a, const engine_detail::dev::Operands<T>& in,
            T* out) override;
  void aggregate(const engine_detail::dev::AggregateArgs& a,
                 const engine_detail::dev::Operands<T>& in, T* out) override;
  void checksum(const engine_detail::dev::ChecksumArgs& a,
                const engine_detail::dev::Operands<T>& in, T* out) override;
  void bias(const engine_detail::dev::BiasArgs& a, const T* bias, T* out) override;
  void im2col(const engine_detail::dev::Im2colArgs& a, const T* x, T* cols) override;
  void direct_conv(const engine_detail::dev::DirectConvArgs& a, const T* x, const T* wt,
                   T* out) override;
  void pool(const engine_detail::dev::PoolArgs& a, const T* win, T* out) override;
  void resize(const engine_detail::dev::ResizeArgs& a, const T* win, T* out) override;
  void where(const engine_detail::dev::WhereArgs& a, const T* c, const T* x, const T* y,
             T* out) override;
  void scan(const engine_detail::dev::ScanArgs& a, const T* x, T* out) override;
  void cell(const engine_detail::dev::CellArgs& a, const T* p, const T* q, const T* r, const T* t,
            T* out) override;
  void col2im(const engine_detail::dev::Col2imArgs& a, const T* cols, T* out) override;
  void gemm(const engine_detail::GemmCall<T>& g) override;
  T* scratch(std::int64_t elements) override;
  const T* values(NodeId v) override;
  const T* syn_a() override { return static_cast<const T*>(r_.syn_a); }
  const T* syn_b() override { return static_cast<const T*>(r_.syn_b); }

private:
  const ExecResources& r_;
};

extern template class CudaExec<float>;
extern template class CudaExec<engine_detail::dev::Bf16>;

/// Throws EngineError "WHAT: cuBLAS status NAME" unless s is CUBLAS_STATUS_SUCCESS.
void check_blas(cublasStatus_t s, const char* what);

}  // namespace doppler::cuda_detail
