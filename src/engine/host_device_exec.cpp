#include "host_device_exec.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

#include <cblas.h>

namespace doppler::engine_detail {

namespace {

// x with its lowest `drop` mantissa bits rounded off, to nearest even.
float round_mantissa(float x, int drop) {
  if (!std::isfinite(x)) return x;
  auto u = std::bit_cast<std::uint32_t>(x);
  u += (std::uint32_t{1} << (drop - 1)) - 1 + ((u >> drop) & 1u);
  return std::bit_cast<float>(u & ~((std::uint32_t{1} << drop) - 1));
}

// The rows x cols matrix at p (leading dimension ld), rounded, densely into `to`.
const float* rounded(GpuDevices::Math math, const float* p, std::int64_t rows, std::int64_t cols,
                     std::int64_t ld, std::vector<float>& to) {
  to.resize(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      to[static_cast<std::size_t>(r * cols + c)] = round_gemm_operand(math, p[r * ld + c]);
  return to.data();
}

}  // namespace

float round_gemm_operand(GpuDevices::Math math, float x) {
  switch (math) {
    case GpuDevices::Math::tf32:
      return round_mantissa(x, 13);
    case GpuDevices::Math::bf16:
      return round_mantissa(x, 16);
    default:
      return x;
  }
}

void HostDeviceExec::copy(const dev::CopyArgs& a, const float* s, float* d) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::copy_element(a, i, s, d);
}
void HostDeviceExec::unary(const dev::UnaryArgs& a, const float* x, float* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::unary_element(a, i, x, o);
}
void HostDeviceExec::binary(const dev::BinaryArgs& a, const float* x, const float* y, float* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::binary_element(a, i, x, y, o);
}
void HostDeviceExec::reduce(const dev::ReduceArgs& a, const float* x, float* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::reduce_element(a, i, x, o);
}
void HostDeviceExec::rotary(const dev::RotaryArgs& a, const float* x, const float* t, float* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::rotary_element(a, i, x, t, o);
}
void HostDeviceExec::loop(const dev::LoopArgs& a, const dev::Operands& in, float* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::loop_element(a, i, in, o);
}
void HostDeviceExec::checksum(const dev::ChecksumArgs& a, const dev::Operands& in, float* o) {
  dev::checksum_element(a, in, o);
}
void HostDeviceExec::bias(const dev::BiasArgs& a, const float* b, float* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::bias_element(a, i, b, o);
}
void HostDeviceExec::im2col(const dev::Im2colArgs& a, const float* x, float* c) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::im2col_element(a, i, x, c);
}
void HostDeviceExec::direct_conv(const dev::DirectConvArgs& a, const float* x, const float* w,
                                 float* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::direct_conv_element(a, i, x, w, o);
}
void HostDeviceExec::pool(const dev::PoolArgs& a, const float* w, float* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::pool_element(a, i, w, o);
}

void HostDeviceExec::gemm(const GemmCall& g) {
  const auto i32 = [](std::int64_t x) { return static_cast<int>(x); };
  const bool round = math_ != GpuDevices::Math::f32;
  for (std::int64_t t = 0; t < g.batch; ++t) {
    const float* a = g.a + t * g.sa;
    const float* b = g.b + t * g.sb;
    std::int64_t lda = g.lda, ldb = g.ldb;
    if (round) {  // dense rounded copies: op(A) is m x k, op(B) k x n
      a = rounded(math_, a, g.ta ? g.k : g.m, lda = g.ta ? g.m : g.k, g.lda, a_);
      b = rounded(math_, b, g.tb ? g.n : g.k, ldb = g.tb ? g.k : g.n, g.ldb, b_);
    }
    cblas_sgemm(CblasRowMajor, g.ta ? CblasTrans : CblasNoTrans, g.tb ? CblasTrans : CblasNoTrans,
                i32(g.m), i32(g.n), i32(g.k), 1.0f, a, i32(lda), b, i32(ldb),
                g.accumulate ? 1.0f : 0.0f, g.c + t * g.sc, i32(g.ldc));
  }
}

float* HostDeviceExec::scratch(std::int64_t floats) {
  if (scratch_.size() < static_cast<std::size_t>(floats))
    scratch_.resize(static_cast<std::size_t>(floats));
  return scratch_.data();
}

const float* HostDeviceExec::values(NodeId v) {
  return plan_.kernels[static_cast<std::size_t>(v)].values.data();
}

}  // namespace doppler::engine_detail
