// Running compiled kernels (the math of docs/exec.md in f32; reductions accumulate in double).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <cblas.h>

#include "plan.hpp"

// The elementwise loops must vectorise: let GCC if-convert float comparisons (min, max, relu)
// without preserving floating-point exception flags, which the engine never reads.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

namespace doppler::engine_detail {

namespace {

// min / max defined under the pragma (std::min and std::max, compiled without it, would not be
// inlined here).
inline float lo(float a, float b) {
  return b < a ? b : a;
}
inline float hi(float a, float b) {
  return a < b ? b : a;
}

// exp(x) in f32 without a libm call, so that elementwise loops vectorise: Cody-Waite range
// reduction x = n ln2 + r and Cephes' degree-6 polynomial for exp(r) (about 2 ulp). Below -87.3
// the result is 0 (never a denormal: masked attention scores must not slow the GEMMs that read
// them); above 88.7 it saturates at about 1.7e38.
inline float exp_f32(float in) {
  const float x = lo(hi(in, -87.3f), 88.7f);
  const float t = x * 1.44269504088896341f;
  const float n = (t + 12582912.0f) - 12582912.0f;  // round to nearest (1.5 x 2^23 trick)
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return in < -87.3f ? 0.0f : p * scale;
}

float sigmoid(float x) {
  return 1.0f / (1.0f + exp_f32(-x));
}

template <class F>
void map1(const KernelPlan& k, const float* x, float* out, F f) {
  const View& v = k.in[0];
  const Dims os = contiguous_strides(k.shape);
  for_each_row<2>(k.shape, {&v.strides, &os}, [&](auto off, std::int64_t len, auto in) {
    const float* s = x + v.offset + off[0];
    float* d = out + off[1];
    if (in[0] == 1) {
      for (std::int64_t i = 0; i < len; ++i) d[i] = f(s[i]);
    } else {
      for (std::int64_t i = 0; i < len; ++i) d[i] = f(s[i * in[0]]);
    }
  });
}

// out = f(a, b) over the output shape with per-operand strides (0 on broadcast dimensions).
template <class F>
void map2(const Dims& shape, const float* a, const Dims& sa, const float* b, const Dims& sb,
          float* out, F f) {
  const Dims os = contiguous_strides(shape);
  for_each_row<3>(shape, {&sa, &sb, &os}, [&](auto off, std::int64_t len, auto in) {
    const float* pa = a + off[0];
    const float* pb = b + off[1];
    float* d = out + off[2];
    if (in[0] == 1 && in[1] == 1) {
      for (std::int64_t i = 0; i < len; ++i) d[i] = f(pa[i], pb[i]);
    } else {
      for (std::int64_t i = 0; i < len; ++i) d[i] = f(pa[i * in[0]], pb[i * in[1]]);
    }
  });
}

void run_unary(const KernelPlan& k, const float* x, float* out) {
  const float sc = k.p0, eps = k.p1;
  switch (k.fn) {
    case Fn::relu:
      return map1(k, x, out, [](float v) { return v > 0 ? v : 0.0f; });
    case Fn::exp:
      return map1(k, x, out, [](float v) { return exp_f32(v); });
    case Fn::silu:
      return map1(k, x, out, [](float v) { return v * sigmoid(v); });
    case Fn::scale:
      return map1(k, x, out, [sc](float v) { return sc * v; });
    case Fn::rsqrt:
      return map1(k, x, out, [sc, eps](float v) { return 1.0f / std::sqrt(sc * v + eps); });
    case Fn::sqrt:
      return map1(k, x, out, [](float v) { return std::sqrt(v); });
    case Fn::sigmoid:
      return map1(k, x, out, [](float v) { return sigmoid(v); });
    case Fn::tanh:
      return map1(k, x, out, [](float v) { return static_cast<float>(std::tanh(double{v})); });
    case Fn::erf:
      return map1(k, x, out, [](float v) { return static_cast<float>(std::erf(double{v})); });
    case Fn::gelu:
      return map1(k, x, out, [](float v) {
        const double d = v;
        return static_cast<float>(0.5 * d * (1 + std::erf(d * 0.70710678118654752440)));
      });
    case Fn::neg:
      return map1(k, x, out, [](float v) { return -v; });
    case Fn::pow:  // p0 = exponent
      return map1(k, x, out,
                  [sc](float v) { return static_cast<float>(std::pow(double{v}, double{sc})); });
    case Fn::identity:
      return map1(k, x, out, [](float v) { return v; });
    case Fn::clip:
      return map1(k, x, out, [mn = k.p0, mx = k.p1](float v) { return lo(hi(v, mn), mx); });
    case Fn::hardsigmoid:
      return map1(k, x, out,
                  [a = k.p0, b = k.p1](float v) { return hi(0.0f, lo(1.0f, a * v + b)); });
    case Fn::hardswish:
      return map1(k, x, out, [](float v) { return v * hi(0.0f, lo(1.0f, v / 6.0f + 0.5f)); });
    case Fn::leaky_relu:
      return map1(k, x, out, [a = k.p0](float v) { return v > 0 ? v : a * v; });
    case Fn::elu:
      return map1(k, x, out, [a = k.p0](float v) {
        return v > 0 ? v : static_cast<float>(a * std::expm1(double{v}));
      });
    case Fn::softplus:
      return map1(k, x, out,
                  [](float v) { return static_cast<float>(std::log1p(std::exp(double{v}))); });
    case Fn::abs:
      return map1(k, x, out, [](float v) { return v < 0 ? -v : v; });
    case Fn::log:
      return map1(k, x, out, [](float v) { return static_cast<float>(std::log(double{v})); });
    case Fn::logical_not:
      return map1(k, x, out, [](float v) { return v == 0 ? 1.0f : 0.0f; });
    default:  // the others (reciprocal .. cos) as the device computes them
      return map1(k, x, out,
                  [f = k.fn, a = k.p0, b = k.p1](float v) { return dev::unary(f, a, b, v); });
  }
}

template <class F>
void bin(const KernelPlan& k, const float* a, const float* b, float* out, F f) {
  map2(k.shape, a + k.in[0].offset, k.bcast[0], b + k.in[1].offset, k.bcast[1], out, f);
}

void run_binary(const KernelPlan& k, const float* a, const float* b, float* out) {
  const float sc = k.p0, eps = k.p1;
  switch (k.fn) {
    case Fn::add:
      return bin(k, a, b, out, [](float x, float y) { return x + y; });
    case Fn::sub:
      return bin(k, a, b, out, [](float x, float y) { return x - y; });
    case Fn::mul:
      return bin(k, a, b, out, [](float x, float y) { return x * y; });
    case Fn::div:
      return bin(k, a, b, out, [](float x, float y) { return x / y; });
    case Fn::relu_grad:
      return bin(k, a, b, out, [](float dy, float x) { return x > 0 ? dy : 0; });
    case Fn::silu_grad:
      return bin(k, a, b, out, [](float dy, float x) {
        const float s = sigmoid(x);
        return dy * s * (1 + x * (1 - s));
      });
    case Fn::rsqrt_grad:
      return bin(k, a, b, out, [sc, eps](float dy, float x) {
        const double u = static_cast<double>(sc) * x + eps;
        return static_cast<float>(dy * (-0.5 * sc) * std::pow(u, -1.5));
      });
    case Fn::sumsq_grad:
      return bin(k, a, b, out, [](float dy, float x) { return 2 * x * dy; });
    default:  // comparisons, connectives (0 or 1) and the others, as the device computes them
      return bin(k, a, b, out, [f = k.fn](float x, float y) { return dev::binary(f, 0, 0, x, y); });
  }
}

// Running sums (in double) or top-k elements of each row along the last axis, as the device
// computes them (dev::scan_row).
void run_scan(const KernelPlan& k, const float* x, float* out) {
  const View& v = k.in[0];
  const std::size_t last = v.shape.size() - 1;
  dev::ScanArgs a;
  a.len = v.shape[last], a.step = v.strides[last];
  set_row_mode(k, a);
  const std::int64_t out_row = a.k > 0 ? a.k : a.len;
  Dims rows = v.shape;
  rows[last] = 1;
  const Dims os = contiguous_strides(rows);
  Dims vs = v.strides;
  a.rows = device_shape({1});  // each row located below, one at a time
  for_each_row<2>(rows, {&vs, &os}, [&](auto off, std::int64_t len, auto in) {
    for (std::int64_t r = 0; r < len; ++r)
      dev::scan_row(a, 0, x + v.offset + off[0] + r * in[0], out + (off[1] + r * in[1]) * out_row);
  });
}

// A fused recurrent step (dev::cell_element, shared with the device path).
void run_cell(const KernelPlan& k, const float* const* in, float* out) {
  const float* op[4] = {};
  for (std::size_t i = 0; i < k.in.size(); ++i) op[i] = in[i] + k.in[i].offset;
  for (std::int64_t i = 0; i < k.numel; ++i)
    dev::cell_element(k.cell, i, op[0], op[1], op[2], op[3], out);
}

// out = cond != 0 ? a : b, each operand broadcast over the output.
void run_where(const KernelPlan& k, const float* const* in, float* out) {
  const Dims os = contiguous_strides(k.shape);
  const float* c = in[0] + k.in[0].offset;
  const float* a = in[1] + k.in[1].offset;
  const float* b = in[2] + k.in[2].offset;
  for_each_row<4>(k.shape, {&k.bcast[0], &k.bcast[1], &k.bcast[2], &os},
                  [&](auto off, std::int64_t len, auto step) {
                    float* d = out + off[3];
                    for (std::int64_t i = 0; i < len; ++i)
                      d[i] = c[off[0] + i * step[0]] != 0 ? a[off[1] + i * step[1]]
                                                          : b[off[2] + i * step[2]];
                  });
}

void run_aggregate(const KernelPlan& k, const float* const* inputs, float* out) {
  const Dims os = contiguous_strides(k.shape);
  const View& v0 = k.in[0];
  copy_strided(inputs[0] + v0.offset, v0.strides, out, os, k.shape);
  for (std::size_t j = 1; j < k.in.size(); ++j) {
    const View& v = k.in[j];
    if (k.fn == Fn::sum) {
      map2(k.shape, out, os, inputs[j] + v.offset, v.strides, out,
           [](float x, float y) { return x + y; });
    } else {
      map2(k.shape, out, os, inputs[j] + v.offset, v.strides, out,
           [](float x, float y) { return hi(x, y); });
    }
  }
}

void run_reduce(const KernelPlan& k, const float* x, float* out) {
  const View& v = k.in[0];
  const std::size_t rank = v.shape.size();
  const std::int64_t n = v.shape[rank - 1], step = v.strides[rank - 1];
  Dims rows = v.shape;
  rows[rank - 1] = 1;
  const Dims os = contiguous_strides(rows);
  Dims vs = v.strides;
  // Iterate the output elements: rows of length 1 over `rows`.
  for_each_row<2>(rows, {&vs, &os}, [&](auto off, std::int64_t len, auto in) {
    for (std::int64_t r = 0; r < len; ++r) {
      const float* s = x + v.offset + off[0] + r * in[0];
      double acc = k.fn == Fn::max ? -std::numeric_limits<double>::infinity() : 0.0;
      if (k.fn == Fn::argmax) {  // as the device: the first (or last) index of the largest
        dev::ReduceArgs a;
        a.len = n, a.step = step, a.last = k.p0 != 0, a.rows = device_shape({1});
        acc = dev::argmax_row(a, 0, s);
      } else if (k.fn == Fn::sum && step == 1) {  // four partial sums: a fixed, faster order
        double a[4] = {0, 0, 0, 0};
        std::int64_t i = 0;
        for (; i + 4 <= n; i += 4)
          for (int j = 0; j < 4; ++j) a[j] += s[i + j];
        for (; i < n; ++i) a[0] += s[i];
        acc = (a[0] + a[1]) + (a[2] + a[3]);
      } else if (k.fn == Fn::sumsq && step == 1) {
        double a[4] = {0, 0, 0, 0};
        std::int64_t i = 0;
        for (; i + 4 <= n; i += 4)
          for (int j = 0; j < 4; ++j) a[j] += static_cast<double>(s[i + j]) * s[i + j];
        for (; i < n; ++i) a[0] += static_cast<double>(s[i]) * s[i];
        acc = (a[0] + a[1]) + (a[2] + a[3]);
      } else if (k.fn == Fn::sum) {
        for (std::int64_t i = 0; i < n; ++i) acc += s[i * step];
      } else if (k.fn == Fn::max && step == 1) {  // max is exact: any order, 8 lanes
        float m[8];
        for (float& x : m) x = -std::numeric_limits<float>::infinity();
        std::int64_t i = 0;
        for (; i + 8 <= n; i += 8)
          for (int j = 0; j < 8; ++j) m[j] = hi(m[j], s[i + j]);
        for (; i < n; ++i) m[0] = hi(m[0], s[i]);
        for (int j = 1; j < 8; ++j) m[0] = hi(m[0], m[j]);
        acc = m[0];
      } else if (k.fn == Fn::max) {
        for (std::int64_t i = 0; i < n; ++i) {
          const double x = s[i * step];
          acc = acc < x ? x : acc;
        }
      } else {
        for (std::int64_t i = 0; i < n; ++i) acc += static_cast<double>(s[i * step]) * s[i * step];
      }
      out[off[1] + r * in[1]] = static_cast<float>(acc);
    }
  });
}

void run_rotary(const KernelPlan& k, const float* x, float* out) {
  const View& v = k.in[0];
  const Dims os = contiguous_strides(k.shape);
  const float* tab = k.values.data();
  for_each_row<2>(k.shape, {&v.strides, &os}, [&](auto off, std::int64_t len, auto in) {
    const float* s = x + v.offset + off[0];
    float* d = out + off[1];
    const float* t = tab + off[1];
    for (std::int64_t i = 0; i + 1 < len; i += 2) {
      const double x0 = s[i * in[0]], x1 = s[(i + 1) * in[0]], c = t[i], sn = t[i + 1];
      d[i] = static_cast<float>(x0 * c - x1 * sn);
      d[i + 1] = static_cast<float>(x0 * sn + x1 * c);
    }
  });
}

void run_pieces(const KernelPlan& k, const float* const* inputs, float* out) {
  const Dims os = contiguous_strides(k.shape);
  for (std::size_t j = 0; j < k.in.size(); ++j) {
    const View& v = k.in[j];
    copy_strided(inputs[j] + v.offset, v.strides, out + k.pieces[j].dst_offset, os, v.shape);
  }
}

void run_synthetic(const Plan& plan, const KernelPlan& k, const float* const* inputs, float* out,
                   std::vector<float>& scratch) {
  const auto m = static_cast<int>(k.sm), kk = static_cast<int>(k.sk);
  if (m > 0 && kk > 0) {
    if (scratch.size() < static_cast<std::size_t>(m * m))
      scratch.resize(static_cast<std::size_t>(m * m));
    for (std::int64_t r = 0; r < k.reps; ++r)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, kk, 1.0f, plan.syn_a.data(),
                  static_cast<int>(kSynMaxK), plan.syn_b.data(), static_cast<int>(kSynMaxM), 0.0f,
                  scratch.data(), m);
  }
  double acc = 0;
  for (std::size_t j = 0; j < k.in.size(); ++j) acc += inputs[j][0];
  const double mean = k.in.empty() ? 0.0 : acc / static_cast<double>(k.in.size());
  out[0] = static_cast<float>(0.5 * mean + k.p0);
}

// out[p, ...] = table[row(idx[p]), ...], one row copy per index; gather_along (p1): an element
// per index, as the device computes it.
void run_gather(const KernelPlan& k, const float* table, const float* idx, float* out) {
  if (k.p1 != 0) {
    const dev::GatherArgs a = gather_args(k);
    for (std::int64_t i = 0; i < k.numel; ++i)
      dev::gather_element(a, i, table + k.in[0].offset, idx + k.in[1].offset, out);
    return;
  }
  const View& t = k.in[0];
  const View& ix = k.in[1];
  const Dims row_shape(t.shape.begin() + 1, t.shape.end());
  const Dims row_strides(t.strides.begin() + 1, t.strides.end());
  const Dims row_dst = contiguous_strides(row_shape);
  const std::int64_t row_len = numel_of(row_shape);
  const dev::Shape ishape = device_shape(ix.shape);
  for (std::int64_t p = 0, n = numel_of(ix.shape); p < n; ++p) {
    const float value = idx[ix.offset + dev::offset_at(p, ishape, ix.strides.data())];
    const std::int64_t r = dev::gather_row(value, t.shape[0]);
    copy_strided(table + t.offset + r * t.strides[0], row_strides, out + p * row_len, row_dst,
                 row_shape);
  }
}

}  // namespace

void run_kernel(const Plan& plan, NodeId v, const float* const* inputs, float* out,
                std::vector<float>& scratch) {
  const KernelPlan& k = plan.kernels[static_cast<std::size_t>(v)];
  switch (k.op) {
    case KernelOp::constant:
      std::memcpy(out, k.values.data(), k.values.size() * sizeof(float));
      return;
    case KernelOp::gemm:
    case KernelOp::einsum_loop:
      return run_einsum(k, inputs, out, scratch);
    case KernelOp::aggregate:
      return run_aggregate(k, inputs, out);
    case KernelOp::pieces:
      return run_pieces(k, inputs, out);
    case KernelOp::copy:
      return copy_strided(inputs[0] + k.in[0].offset + k.copy_start, k.copy_src, out, k.copy_dst,
                          k.copy_shape);
    case KernelOp::unary:
      return run_unary(k, inputs[0], out);
    case KernelOp::binary:
      return run_binary(k, inputs[0], inputs[1], out);
    case KernelOp::where:
      return run_where(k, inputs, out);
    case KernelOp::cell:
      return run_cell(k, inputs, out);
    case KernelOp::scan:
    case KernelOp::topk:
      return run_scan(k, inputs[0], out);
    case KernelOp::reduce:
      return run_reduce(k, inputs[0], out);
    case KernelOp::rotary:
      return run_rotary(k, inputs[0], out);
    case KernelOp::synthetic:
      return run_synthetic(plan, k, inputs, out, scratch);
    case KernelOp::conv2d:
    case KernelOp::conv_transpose2d:
    case KernelOp::maxpool2d:
    case KernelOp::avgpool2d:
      return run_window(k, inputs, out, scratch);
    case KernelOp::gather:
      return run_gather(k, inputs[0], inputs[1], out);
    case KernelOp::resize2d:
      return run_resize(k, inputs, out, scratch);
    case KernelOp::empty:
      return;
  }
}

}  // namespace doppler::engine_detail
