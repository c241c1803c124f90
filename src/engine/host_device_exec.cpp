#include "host_device_exec.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

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

// The rows x cols matrix of T at p (leading dimension ld) as f32, rounded as `math` keeps GEMM
// operands (f32: as it is), densely into `to`.
template <class T>
const float* dense(GpuDevices::Math math, const T* p, std::int64_t rows, std::int64_t cols,
                   std::int64_t ld, std::vector<float>& to) {
  to.resize(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      to[static_cast<std::size_t>(r * cols + c)] =
          round_gemm_operand(math, dev::as_f32(p[r * ld + c]));
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

template <class T>
std::vector<T> stored_as(const std::vector<float>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) dev::put(&out[i], v[i]);
  return out;
}

template std::vector<float> stored_as(const std::vector<float>&);
template std::vector<dev::Bf16> stored_as(const std::vector<float>&);

template <class T>
HostDeviceExec<T>::HostDeviceExec(const Plan& plan, GpuDevices::Math math)
    : plan_(plan), math_(math) {
  if constexpr (!std::is_same_v<T, float>) {
    values_.resize(plan.kernels.size());
    syn_a_ = stored_as<T>(plan.syn_a);
    syn_b_ = stored_as<T>(plan.syn_b);
  }
}

template <class T>
void HostDeviceExec<T>::copy(const dev::CopyArgs& a, const T* s, T* d) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::copy_element(a, i, s, d);
}
template <class T>
void HostDeviceExec<T>::unary(const dev::UnaryArgs& a, const T* x, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::unary_element(a, i, x, o);
}
template <class T>
void HostDeviceExec<T>::binary(const dev::BinaryArgs& a, const T* x, const T* y, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::binary_element(a, i, x, y, o);
}
template <class T>
void HostDeviceExec<T>::reduce(const dev::ReduceArgs& a, const T* x, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::reduce_element(a, i, x, o);
}
template <class T>
void HostDeviceExec<T>::rotary(const dev::RotaryArgs& a, const T* x, const T* t, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::rotary_element(a, i, x, t, o);
}

template <class T>
void HostDeviceExec<T>::gather(const dev::GatherArgs& a, const T* table, const T* idx, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::gather_element(a, i, table, idx, o);
}
template <class T>
void HostDeviceExec<T>::loop(const dev::LoopArgs& a, const dev::Operands<T>& in, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::loop_element(a, i, in, o);
}
template <class T>
void HostDeviceExec<T>::aggregate(const dev::AggregateArgs& a, const dev::Operands<T>& in, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::aggregate_element(a, i, in, o);
}
template <class T>
void HostDeviceExec<T>::checksum(const dev::ChecksumArgs& a, const dev::Operands<T>& in, T* o) {
  dev::checksum_element(a, in, o);
}
template <class T>
void HostDeviceExec<T>::bias(const dev::BiasArgs& a, const T* b, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::bias_element(a, i, b, o);
}
template <class T>
void HostDeviceExec<T>::im2col(const dev::Im2colArgs& a, const T* x, T* c) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::im2col_element(a, i, x, c);
}
template <class T>
void HostDeviceExec<T>::direct_conv(const dev::DirectConvArgs& a, const T* x, const T* w, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::direct_conv_element(a, i, x, w, o);
}
template <class T>
void HostDeviceExec<T>::pool(const dev::PoolArgs& a, const T* w, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::pool_element(a, i, w, o);
}

template <class T>
void HostDeviceExec<T>::resize(const dev::ResizeArgs& a, const T* w, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::resize_element(a, i, w, o);
}

template <class T>
void HostDeviceExec<T>::where(const dev::WhereArgs& a, const T* c, const T* x, const T* y, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::where_element(a, i, c, x, y, o);
}

template <class T>
void HostDeviceExec<T>::cell(const dev::CellArgs& a, const T* p, const T* q, const T* r, const T* s,
                             T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::cell_element(a, i, p, q, r, s, o);
}

template <class T>
void HostDeviceExec<T>::scan(const dev::ScanArgs& a, const T* x, T* o) {
  for (dev::I64 r = 0; r < a.n; ++r) dev::scan_row(a, r, x, o);
}

template <class T>
void HostDeviceExec<T>::col2im(const dev::Col2imArgs& a, const T* cols, T* o) {
  for (dev::I64 i = 0; i < a.n; ++i) dev::col2im_element(a, i, cols, o);
}

template <class T>
void HostDeviceExec<T>::gemm(const GemmCall<T>& g) {
  for (std::int64_t t = 0; t < g.batch; ++t)
    gemm_one(g, g.a + t * g.sa, g.b + t * g.sb, g.c + t * g.sc);
}

template <class T>
void HostDeviceExec<T>::gemm_one(const GemmCall<T>& g, const T* a, const T* b, T* c) {
  const auto i32 = [](std::int64_t x) { return static_cast<int>(x); };
  const auto trans = [](bool t) { return t ? CblasTrans : CblasNoTrans; };
  const float beta = g.accumulate ? 1.0f : 0.0f;
  if constexpr (std::is_same_v<T, float>) {
    std::int64_t lda = g.lda, ldb = g.ldb;
    if (math_ != GpuDevices::Math::f32) {  // dense rounded copies: op(A) is m x k, op(B) k x n
      a = dense(math_, a, g.ta ? g.k : g.m, lda = g.ta ? g.m : g.k, g.lda, a_);
      b = dense(math_, b, g.tb ? g.n : g.k, ldb = g.tb ? g.k : g.n, g.ldb, b_);
    }
    cblas_sgemm(CblasRowMajor, trans(g.ta), trans(g.tb), i32(g.m), i32(g.n), i32(g.k), 1.0f, a,
                i32(lda), b, i32(ldb), beta, c, i32(g.ldc));
  } else {  // bf16 operands are exact in f32; C summed in f32, then rounded once
    const std::int64_t lda = g.ta ? g.m : g.k, ldb = g.tb ? g.k : g.n;
    const float* pa = dense(GpuDevices::Math::f32, a, g.ta ? g.k : g.m, lda, g.lda, a_);
    const float* pb = dense(GpuDevices::Math::f32, b, g.tb ? g.n : g.k, ldb, g.ldb, b_);
    if (g.accumulate)
      dense(GpuDevices::Math::f32, c, g.m, g.n, g.ldc, c_);
    else
      c_.resize(static_cast<std::size_t>(g.m * g.n));
    cblas_sgemm(CblasRowMajor, trans(g.ta), trans(g.tb), i32(g.m), i32(g.n), i32(g.k), 1.0f, pa,
                i32(lda), pb, i32(ldb), beta, c_.data(), i32(g.n));
    for (std::int64_t r = 0; r < g.m; ++r)
      for (std::int64_t j = 0; j < g.n; ++j)
        dev::put(c + r * g.ldc + j, c_[static_cast<std::size_t>(r * g.n + j)]);
  }
}

template <class T>
T* HostDeviceExec<T>::scratch(std::int64_t elements) {
  if (scratch_.size() < static_cast<std::size_t>(elements))
    scratch_.resize(static_cast<std::size_t>(elements));
  return scratch_.data();
}

template <class T>
const T* HostDeviceExec<T>::values(NodeId v) {
  const std::vector<float>& vals = plan_.kernels[static_cast<std::size_t>(v)].values;
  if constexpr (std::is_same_v<T, float>) {
    return vals.data();
  } else {
    std::vector<T>& stored = values_[static_cast<std::size_t>(v)];
    if (stored.size() != vals.size()) stored = stored_as<T>(vals);
    return stored.data();
  }
}

template <class T>
const T* HostDeviceExec<T>::held(const std::vector<float>& planned, const std::vector<T>& stored) {
  if constexpr (std::is_same_v<T, float>)
    return planned.data();
  else
    return stored.data();
}

template class HostDeviceExec<float>;
template class HostDeviceExec<dev::Bf16>;

}  // namespace doppler::engine_detail
