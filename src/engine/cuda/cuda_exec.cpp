#include "cuda_exec.hpp"

#include <string>
#include <type_traits>

#include "cublas_api.hpp"
#include "cuda_kernels.hpp"

#include "doppler/engine/engine.hpp"

namespace doppler::cuda_detail {

namespace dev = engine_detail::dev;

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw EngineError(std::string(what) + ": cuBLAS status " + cublas_api().cublasGetStatusName(s));
}

template <class T>
void CudaExec<T>::copy(const dev::CopyArgs& a, const T* src, T* dst) {
  launch_copy(a, src, dst, r_.stream);
}
template <class T>
void CudaExec<T>::unary(const dev::UnaryArgs& a, const T* x, T* out) {
  launch_unary(a, x, out, r_.stream);
}
template <class T>
void CudaExec<T>::binary(const dev::BinaryArgs& a, const T* x, const T* y, T* out) {
  launch_binary(a, x, y, out, r_.stream);
}
template <class T>
void CudaExec<T>::reduce(const dev::ReduceArgs& a, const T* x, T* out) {
  launch_reduce(a, x, out, r_.stream);
}
template <class T>
void CudaExec<T>::rotary(const dev::RotaryArgs& a, const T* x, const T* table, T* out) {
  launch_rotary(a, x, table, out, r_.stream);
}
template <class T>
void CudaExec<T>::gather(const dev::GatherArgs& a, const T* table, const T* idx, T* out) {
  launch_gather(a, table, idx, out, r_.stream);
}
template <class T>
void CudaExec<T>::loop(const dev::LoopArgs& a, const dev::Operands<T>& in, T* out) {
  launch_loop(a, in, out, r_.stream);
}
template <class T>
void CudaExec<T>::aggregate(const dev::AggregateArgs& a, const dev::Operands<T>& in, T* out) {
  launch_aggregate(a, in, out, r_.stream);
}
template <class T>
void CudaExec<T>::checksum(const dev::ChecksumArgs& a, const dev::Operands<T>& in, T* out) {
  launch_checksum(a, in, out, r_.stream);
}
template <class T>
void CudaExec<T>::bias(const dev::BiasArgs& a, const T* bias, T* out) {
  launch_bias(a, bias, out, r_.stream);
}
template <class T>
void CudaExec<T>::im2col(const dev::Im2colArgs& a, const T* x, T* cols) {
  launch_im2col(a, x, cols, r_.stream);
}
template <class T>
void CudaExec<T>::direct_conv(const dev::DirectConvArgs& a, const T* x, const T* wt, T* out) {
  launch_direct_conv(a, x, wt, out, r_.stream);
}
template <class T>
void CudaExec<T>::pool(const dev::PoolArgs& a, const T* win, T* out) {
  launch_pool(a, win, out, r_.stream);
}

template <class T>
void CudaExec<T>::resize(const dev::ResizeArgs& a, const T* win, T* out) {
  launch_resize(a, win, out, r_.stream);
}

template <class T>
void CudaExec<T>::where(const dev::WhereArgs& a, const T* c, const T* x, const T* y, T* out) {
  launch_where(a, c, x, y, out, r_.stream);
}

template <class T>
void CudaExec<T>::cell(const dev::CellArgs& a, const T* p, const T* q, const T* r, const T* t,
                       T* out) {
  launch_cell(a, p, q, r, t, out, r_.stream);
}

template <class T>
void CudaExec<T>::scan(const dev::ScanArgs& a, const T* x, T* out) {
  launch_scan(a, x, out, r_.stream);
}

template <class T>
void CudaExec<T>::col2im(const dev::Col2imArgs& a, const T* cols, T* out) {
  launch_col2im(a, cols, out, r_.stream);
}

namespace {

cublasOperation_t op(bool t) {
  return t ? CUBLAS_OP_T : CUBLAS_OP_N;
}

int i32(std::int64_t x) {
  return static_cast<int>(x);
}

// cublasGemmStridedBatchedEx of row-major g with A, B and C of cuBLAS type `type`.
template <class T>
void gemm_ex(cublasHandle_t h, const engine_detail::GemmCall<T>& g, cudaDataType_t type,
             cublasComputeType_t math) {
  const float one = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
  check_blas(cublas_api().cublasGemmStridedBatchedEx(
                 h, op(g.tb), op(g.ta), i32(g.n), i32(g.m), i32(g.k), &one, g.b, type, i32(g.ldb),
                 g.sb, g.a, type, i32(g.lda), g.sa, &beta, g.c, type, i32(g.ldc), g.sc,
                 i32(g.batch), math, CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx");
}

}  // namespace

// A row-major GEMM is the column-major one of the transposes: C^T = op(B)^T op(A)^T, so B and
// A swap places (and m and n) and keep their transpose flags. bf16 tensors: bf16 operands and
// result, f32 sums on Tensor Cores.
template <class T>
void CudaExec<T>::gemm(const engine_detail::GemmCall<T>& g) {
  if constexpr (std::is_same_v<T, dev::Bf16>) {
    gemm_ex(r_.blas, g, CUDA_R_16BF, CUBLAS_COMPUTE_32F);
  } else if (r_.math != CUBLAS_COMPUTE_32F) {  // Tensor Cores on f32 tensors: TF32 or BF16
    gemm_ex(r_.blas, g, CUDA_R_32F, r_.math);
  } else {
    const float one = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
    if (g.batch == 1)
      check_blas(cublas_api().cublasSgemm_v2(r_.blas, op(g.tb), op(g.ta), i32(g.n), i32(g.m),
                                             i32(g.k), &one, g.b, i32(g.ldb), g.a, i32(g.lda),
                                             &beta, g.c, i32(g.ldc)),
                 "cublasSgemm");
    else
      check_blas(cublas_api().cublasSgemmStridedBatched(r_.blas, op(g.tb), op(g.ta), i32(g.n),
                                                        i32(g.m), i32(g.k), &one, g.b, i32(g.ldb),
                                                        g.sb, g.a, i32(g.lda), g.sa, &beta, g.c,
                                                        i32(g.ldc), g.sc, i32(g.batch)),
                 "cublasSgemmStridedBatched");
  }
}

template <class T>
T* CudaExec<T>::scratch(std::int64_t elements) {
  if (elements > r_.scratch_elements)
    throw EngineError("a kernel needs " + std::to_string(elements) +
                      " elements of scratch, the device has " +
                      std::to_string(r_.scratch_elements));
  return static_cast<T*>(r_.scratch);
}

template <class T>
const T* CudaExec<T>::values(NodeId v) {
  const void* p = r_.values[static_cast<std::size_t>(v)];
  if (!p) throw EngineError("node " + std::to_string(v) + "'s values are not on the device");
  return static_cast<const T*>(p);
}

template class CudaExec<float>;
template class CudaExec<dev::Bf16>;

}  // namespace doppler::cuda_detail
