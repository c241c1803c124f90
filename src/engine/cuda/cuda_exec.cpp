#include "cuda_exec.hpp"

#include <string>

#include "cuda_kernels.hpp"

#include "doppler/engine/engine.hpp"

namespace doppler::cuda_detail {

namespace dev = engine_detail::dev;

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw EngineError(std::string(what) + ": cuBLAS status " + cublasGetStatusName(s));
}

void CudaExec::copy(const dev::CopyArgs& a, const float* src, float* dst) {
  launch_copy(a, src, dst, r_.stream);
}
void CudaExec::unary(const dev::UnaryArgs& a, const float* x, float* out) {
  launch_unary(a, x, out, r_.stream);
}
void CudaExec::binary(const dev::BinaryArgs& a, const float* x, const float* y, float* out) {
  launch_binary(a, x, y, out, r_.stream);
}
void CudaExec::reduce(const dev::ReduceArgs& a, const float* x, float* out) {
  launch_reduce(a, x, out, r_.stream);
}
void CudaExec::rotary(const dev::RotaryArgs& a, const float* x, const float* table, float* out) {
  launch_rotary(a, x, table, out, r_.stream);
}
void CudaExec::loop(const dev::LoopArgs& a, const dev::Operands& in, float* out) {
  launch_loop(a, in, out, r_.stream);
}
void CudaExec::checksum(const dev::ChecksumArgs& a, const dev::Operands& in, float* out) {
  launch_checksum(a, in, out, r_.stream);
}
void CudaExec::bias(const dev::BiasArgs& a, const float* bias, float* out) {
  launch_bias(a, bias, out, r_.stream);
}
void CudaExec::im2col(const dev::Im2colArgs& a, const float* x, float* cols) {
  launch_im2col(a, x, cols, r_.stream);
}
void CudaExec::direct_conv(const dev::DirectConvArgs& a, const float* x, const float* wt,
                           float* out) {
  launch_direct_conv(a, x, wt, out, r_.stream);
}
void CudaExec::pool(const dev::PoolArgs& a, const float* win, float* out) {
  launch_pool(a, win, out, r_.stream);
}

// A row-major GEMM is the column-major one of the transposes: C^T = op(B)^T op(A)^T, so B and
// A swap places (and m and n) and keep their transpose flags.
void CudaExec::gemm(const engine_detail::GemmCall& g) {
  const float one = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
  const auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  const auto i32 = [](std::int64_t x) { return static_cast<int>(x); };
  if (r_.math != CUBLAS_COMPUTE_32F) {  // Tensor Cores: operands rounded, f32 accumulation
    check_blas(cublasGemmStridedBatchedEx(r_.blas, op(g.tb), op(g.ta), i32(g.n), i32(g.m), i32(g.k),
                                          &one, g.b, CUDA_R_32F, i32(g.ldb), g.sb, g.a, CUDA_R_32F,
                                          i32(g.lda), g.sa, &beta, g.c, CUDA_R_32F, i32(g.ldc),
                                          g.sc, i32(g.batch), r_.math, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
    return;
  }
  if (g.batch == 1) {
    check_blas(cublasSgemm(r_.blas, op(g.tb), op(g.ta), i32(g.n), i32(g.m), i32(g.k), &one, g.b,
                           i32(g.ldb), g.a, i32(g.lda), &beta, g.c, i32(g.ldc)),
               "cublasSgemm");
    return;
  }
  check_blas(cublasSgemmStridedBatched(r_.blas, op(g.tb), op(g.ta), i32(g.n), i32(g.m), i32(g.k),
                                       &one, g.b, i32(g.ldb), g.sb, g.a, i32(g.lda), g.sa, &beta,
                                       g.c, i32(g.ldc), g.sc, i32(g.batch)),
             "cublasSgemmStridedBatched");
}

float* CudaExec::scratch(std::int64_t floats) {
  if (floats > r_.scratch_floats)
    throw EngineError("a kernel needs " + std::to_string(floats) +
                      " floats of scratch, the device has " + std::to_string(r_.scratch_floats));
  return r_.scratch;
}

const float* CudaExec::values(NodeId v) {
  const float* p = r_.values[static_cast<std::size_t>(v)];
  if (!p) throw EngineError("node " + std::to_string(v) + "'s values are not on the device");
  return p;
}

}  // namespace doppler::cuda_detail
