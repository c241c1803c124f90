#pragma once
// Internal: the math of a GPU backend's elementwise kernels, one output element at a time
// (kernel_driver.hpp splits every kernel plan into them and GEMMs). Plain structs (the launch
// arguments, passed by value: each under CUDA's 4 KiB) and functions compiled for the GPU by
// nvcc (src/engine/cuda/cuda_kernels.cu) and for the host by the C++ compiler, so that
// tests/engine/test_device_ops.cpp checks every one against the CPU engine's kernels without a
// GPU. Free of the project's other headers. Element i of an N-d shape is its row-major index;
// strides and offsets count elements. Every function takes its tensors as T, float or Bf16
// (the storage type, `--gpu-dtype`): it loads them to f32, computes in f32 or double as the CPU
// engine does, and stores its result rounded to T. The semantics are the CPU engine's
// (src/engine/kernels.cpp, kernel_einsum.cpp, kernel_window.cpp); only the order of
// floating-point sums, and with Bf16 the rounding of every stored value, may differ.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "doppler/graph/resize_coords.hpp"  // also free of the project's other headers

#if defined(__CUDACC__)
#define DOPPLER_HD __host__ __device__ inline
#else
#define DOPPLER_HD inline
#endif

namespace doppler::engine_detail::dev {

using I64 = std::int64_t;

/// Largest rank of a shape (the CPU engine's kMaxRank).
inline constexpr int kMaxRank = 16;
/// Largest number of einsum labels ('a' .. 'z').
inline constexpr int kMaxLabels = 26;
/// Largest number of operands of a looped einsum.
inline constexpr int kMaxLoopOperands = 4;
/// Operands summed by one synthetic-checksum launch.
inline constexpr int kChecksumOperands = 32;
/// Operands folded by one aggregate launch (<= kChecksumOperands; their strides are a kernel
/// parameter, 1 KiB at this count).
inline constexpr int kAggregateOperands = 8;

/// A bfloat16 value as stored in memory: the upper 16 bits of an f32 (the layout of cuBLAS's
/// CUDA_R_16BF and of __nv_bfloat16).
struct Bf16 {
  std::uint16_t bits = 0;
};

/// The bits of an f32.
DOPPLER_HD std::uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

/// The f32 of these bits.
DOPPLER_HD float float_of(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/// x rounded to bf16, to nearest even (CUDA's __float2bfloat16_rn): infinities stay, a NaN
/// stays a (quiet) NaN, finite values past bf16's largest round to infinity.
DOPPLER_HD Bf16 to_bf16(float x) {
  std::uint32_t u = bits_of(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return Bf16{static_cast<std::uint16_t>((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return Bf16{static_cast<std::uint16_t>(u >> 16)};
}

/// The stored value as f32 (exact: every bf16 is an f32).
DOPPLER_HD float as_f32(float x) {
  return x;
}
DOPPLER_HD float as_f32(Bf16 x) {
  return float_of(static_cast<std::uint32_t>(x.bits) << 16);
}

/// Stores f32 x as the storage type (rounded to nearest even for Bf16).
DOPPLER_HD void put(float* p, float x) {
  *p = x;
}
DOPPLER_HD void put(Bf16* p, float x) {
  *p = to_bf16(x);
}

/// Extents of an N-d shape (rank <= kMaxRank; rank 0 is one element).
struct Shape {
  int rank = 0;
  I64 ext[kMaxRank] = {};
  /// True when the shape has fewer than 2^31 elements: indices then take 32-bit divisions,
  /// several times cheaper than 64-bit ones on a GPU.
  bool narrow = true;
};

/// Offset of element i (row-major over `s`) in a view with strides `st`.
DOPPLER_HD I64 offset_at(I64 i, const Shape& s, const I64* st) {
  I64 off = 0;
  if (s.narrow) {
    auto j = static_cast<std::uint32_t>(i);
    for (int d = s.rank - 1; d >= 0; --d) {
      const auto e = static_cast<std::uint32_t>(s.ext[d]);
      off += static_cast<I64>(j % e) * st[d];
      j /= e;
    }
    return off;
  }
  for (int d = s.rank - 1; d >= 0; --d) {
    const I64 e = s.ext[d];
    off += (i % e) * st[d];
    i /= e;
  }
  return off;
}

// ---- strided copy: dst[view] = src[view] ----

/// Copies the `n` elements of `shape` from a strided source to a strided destination.
struct CopyArgs {
  Shape shape;
  I64 src[kMaxRank] = {};
  I64 dst[kMaxRank] = {};
  I64 n = 0;  ///< elements (the shape's product)
};

template <class T>
DOPPLER_HD void copy_element(const CopyArgs& a, I64 i, const T* src, T* dst) {
  dst[offset_at(i, a.shape, a.dst)] = src[offset_at(i, a.shape, a.src)];
}

// ---- gather: rows of a table at computed indices (embedding lookups) ----

/// The row of a table of `rows` rows that index value `v` names: truncated toward zero,
/// negative values counted from the end (ONNX Gather), then clamped into the table (so that
/// no index reads outside it; the importer refuses the out-of-range values it knows).
DOPPLER_HD I64 gather_row(float v, I64 rows) {
  if (!(v > -0x1.0p62f && v < 0x1.0p62f)) v = 0;  // NaN and huge values: row 0
  I64 r = static_cast<I64>(v);
  if (r < 0) r += rows;
  return r < 0 ? 0 : r >= rows ? rows - 1 : r;
}

/// Rows (gather): out[p, q] = table[row(idx[p]), q]: output element i is position p = i /
/// row_len of the indices view and element q = i % row_len of a table row (a view over the
/// table's dimensions after the first).
/// Along the last axis (gather_along, `along`): out[l, j] = table[l, row(idx[l, j])]: output
/// element i is position i of the indices view [lead..., k], and its leading position
/// l = i / row_len (row_len = k) locates the table's row through `row` / `tr` (the table's
/// leading dimensions, the indices'); rows and row_stride are then the table's last extent and
/// stride.
struct GatherArgs {
  Shape idx;              ///< the indices view's shape
  I64 ix[kMaxRank] = {};  ///< its strides
  Shape row;              ///< a table row's shape (along: the table's leading dimensions)
  I64 tr[kMaxRank] = {};  ///< its strides in the table
  I64 rows = 1;           ///< the table's first extent (along: its last)
  I64 row_stride = 0;     ///< the table's first stride (along: its last)
  I64 row_len = 1;        ///< elements of a row (along: the indices' last extent)
  I64 n = 0;              ///< output elements
  bool along = false;     ///< gather_along: an element of each table row per index
};

template <class T>
DOPPLER_HD void gather_element(const GatherArgs& a, I64 i, const T* table, const T* idx, T* out) {
  const I64 p = a.along ? i : i / a.row_len, q = i % a.row_len;
  const I64 r = gather_row(as_f32(idx[offset_at(p, a.idx, a.ix)]), a.rows);
  out[i] = a.along ? table[offset_at(i / a.row_len, a.row, a.tr) + r * a.row_stride]
                   : table[r * a.row_stride + offset_at(q, a.row, a.tr)];
}

// ---- unary and binary elementwise functions (the values of engine_detail::Fn) ----

/// Elementwise or reduction function of unary / binary / aggregate / reduce kernels (the CPU
/// engine's engine_detail::Fn is this type).
enum class Fn : std::uint8_t {
  relu,
  exp,
  silu,
  scale,  ///< p0 = scale
  rsqrt,  ///< 1 / sqrt(p0 x + p1)
  sqrt,
  sigmoid,
  tanh,
  erf,
  gelu,
  neg,
  pow,  ///< p0 = exponent
  identity,
  clip,         ///< p0 = min, p1 = max
  hardsigmoid,  ///< p0 = alpha, p1 = beta
  hardswish,
  leaky_relu,  ///< p0 = alpha
  elu,         ///< p0 = alpha
  softplus,
  abs,
  log,
  logical_not,  // unary: 1 where x == 0, else 0
  reciprocal,
  floor,
  ceil,
  round,  ///< to the nearest whole number, halves to even
  sign,
  sin,
  cos,
  tan,
  asin,
  acos,
  atan,
  sinh,
  cosh,
  selu,   ///< p0 = alpha, p1 = gamma
  celu,   ///< p0 = alpha
  isnan,  ///< 1 where x is NaN, else 0
  isinf,  ///< 1 where x is +inf (p0 != 0) or -inf (p1 != 0), else 0
  add,
  sub,
  mul,
  div,
  relu_grad,
  silu_grad,
  rsqrt_grad,
  sumsq_grad,  // binary (the gradients take (dy, x))
  less,
  greater,
  equal,
  less_equal,
  greater_equal,
  logical_and,
  logical_or,
  logical_xor,  // binary, 1 where the comparison or connective holds, else 0 (nonzero is true)
  maximum,
  minimum,  // binary: NaN when either operand is NaN
  power,    // binary: a^b
  prelu,    // binary: a < 0 ? b a : a (b: the slope)
  mod,      // binary: a - b floor(a / b) (the divisor's sign, Python's %)
  fmod,     // binary: C's fmod (the dividend's sign)
  sum,
  max,
  sumsq,   // aggregate / reduce
  argmax,  // reduce: the index of the largest element (ties: the first, the last with p0 = 1)
};

/// exp in f32 saturating as the CPU engine's: 0 below -87.3, about 1.7e38 above 88.7.
DOPPLER_HD float exp_clamped(float x) {
  if (x < -87.3f) return 0.0f;
  return std::exp(x < 88.7f ? x : 88.7f);
}

DOPPLER_HD float sigmoid(float x) {
  return 1.0f / (1.0f + exp_clamped(-x));
}

DOPPLER_HD float clamp01(float x) {
  return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}

/// f(x) of a unary Fn with its parameters (scale / eps, exponent, min and max, alpha and beta).
DOPPLER_HD float unary(Fn f, float p0, float p1, float x) {
  switch (f) {
    case Fn::relu:
      return x > 0 ? x : 0.0f;
    case Fn::exp:
      return exp_clamped(x);
    case Fn::silu:
      return x * sigmoid(x);
    case Fn::scale:
      return p0 * x;
    case Fn::rsqrt:
      return 1.0f / std::sqrt(p0 * x + p1);
    case Fn::sqrt:
      return std::sqrt(x);
    case Fn::sigmoid:
      return sigmoid(x);
    case Fn::tanh:
      return static_cast<float>(std::tanh(static_cast<double>(x)));
    case Fn::erf:
      return static_cast<float>(std::erf(static_cast<double>(x)));
    case Fn::gelu: {
      const double d = x;
      return static_cast<float>(0.5 * d * (1 + std::erf(d * 0.70710678118654752440)));
    }
    case Fn::neg:
      return -x;
    case Fn::pow:
      return static_cast<float>(std::pow(static_cast<double>(x), static_cast<double>(p0)));
    case Fn::identity:
      return x;
    case Fn::clip:
      return (x < p0 ? p0 : x) > p1 ? p1 : (x < p0 ? p0 : x);
    case Fn::hardsigmoid:
      return clamp01(p0 * x + p1);
    case Fn::hardswish:
      return x * clamp01(x / 6.0f + 0.5f);
    case Fn::leaky_relu:
      return x > 0 ? x : p0 * x;
    case Fn::elu:
      return x > 0 ? x : static_cast<float>(p0 * std::expm1(static_cast<double>(x)));
    case Fn::softplus:
      return static_cast<float>(std::log1p(std::exp(static_cast<double>(x))));
    case Fn::abs:
      return x < 0 ? -x : x;
    case Fn::log:
      return static_cast<float>(std::log(static_cast<double>(x)));
    case Fn::logical_not:
      return x == 0 ? 1.0f : 0.0f;
    case Fn::reciprocal:
      return 1.0f / x;
    case Fn::floor:
      return std::floor(x);
    case Fn::ceil:
      return std::ceil(x);
    case Fn::round:
      return std::rint(x);  // the default rounding mode: to nearest, halves to even
    case Fn::sign:
      return x > 0 ? 1.0f : (x < 0 ? -1.0f : x);  // 0 and NaN stay
    case Fn::sin:
      return static_cast<float>(std::sin(static_cast<double>(x)));
    case Fn::cos:
      return static_cast<float>(std::cos(static_cast<double>(x)));
    case Fn::tan:
      return static_cast<float>(std::tan(static_cast<double>(x)));
    case Fn::asin:
      return static_cast<float>(std::asin(static_cast<double>(x)));
    case Fn::acos:
      return static_cast<float>(std::acos(static_cast<double>(x)));
    case Fn::atan:
      return static_cast<float>(std::atan(static_cast<double>(x)));
    case Fn::sinh:
      return static_cast<float>(std::sinh(static_cast<double>(x)));
    case Fn::cosh:
      return static_cast<float>(std::cosh(static_cast<double>(x)));
    case Fn::selu:
      return p1 * (x > 0 ? x : static_cast<float>(p0 * std::expm1(static_cast<double>(x))));
    case Fn::celu: {
      if (x != x) return x;
      const double neg = p0 * std::expm1(static_cast<double>(x) / p0);
      return (x > 0 ? x : 0.0f) + static_cast<float>(neg < 0 ? neg : 0.0);
    }
    case Fn::isnan:
      return x != x ? 1.0f : 0.0f;
    case Fn::isinf:
      return (p0 != 0 && x == HUGE_VALF) || (p1 != 0 && x == -HUGE_VALF) ? 1.0f : 0.0f;
    default:
      return x;
  }
}

/// f(a, b) of a binary Fn (the gradients take (dy, x)); sum and max serve aggregates.
DOPPLER_HD float binary(Fn f, float p0, float p1, float a, float b) {
  switch (f) {
    case Fn::add:
    case Fn::sum:
      return a + b;
    case Fn::sub:
      return a - b;
    case Fn::mul:
      return a * b;
    case Fn::div:
      return a / b;
    case Fn::max:
      return a < b ? b : a;
    case Fn::relu_grad:
      return b > 0 ? a : 0.0f;
    case Fn::silu_grad: {
      const float s = sigmoid(b);
      return a * s * (1 + b * (1 - s));
    }
    case Fn::rsqrt_grad: {
      const double u = static_cast<double>(p0) * b + p1;
      return static_cast<float>(a * (-0.5 * p0) * std::pow(u, -1.5));
    }
    case Fn::sumsq_grad:
      return 2 * b * a;
    case Fn::less:
      return a < b ? 1.0f : 0.0f;
    case Fn::greater:
      return a > b ? 1.0f : 0.0f;
    case Fn::equal:
      return a == b ? 1.0f : 0.0f;
    case Fn::less_equal:
      return a <= b ? 1.0f : 0.0f;
    case Fn::greater_equal:
      return a >= b ? 1.0f : 0.0f;
    case Fn::logical_and:
      return a != 0 && b != 0 ? 1.0f : 0.0f;
    case Fn::logical_or:
      return a != 0 || b != 0 ? 1.0f : 0.0f;
    case Fn::logical_xor:
      return (a != 0) != (b != 0) ? 1.0f : 0.0f;
    case Fn::maximum:
      return a != a || b != b ? a + b : (a < b ? b : a);
    case Fn::minimum:
      return a != a || b != b ? a + b : (b < a ? b : a);
    case Fn::power:
      return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    case Fn::prelu:
      return a < 0 ? b * a : a;
    case Fn::mod: {
      const double m = std::fmod(static_cast<double>(a), static_cast<double>(b));
      return static_cast<float>(m != 0 && (m < 0) != (b < 0) ? m + b : m);
    }
    case Fn::fmod:
      return static_cast<float>(std::fmod(static_cast<double>(a), static_cast<double>(b)));
    default:
      return a;
  }
}

/// out[i] = f(x[view]) over a contiguous output of `shape`.
struct UnaryArgs {
  Shape shape;
  I64 in[kMaxRank] = {};  ///< the operand's strides (from its offset)
  I64 n = 0;
  Fn fn = Fn::identity;
  float p0 = 1, p1 = 0;
};

template <class T>
DOPPLER_HD void unary_element(const UnaryArgs& a, I64 i, const T* x, T* out) {
  put(out + i, unary(a.fn, a.p0, a.p1, as_f32(x[offset_at(i, a.shape, a.in)])));
}

/// out[i] = f(a[view], b[view]) over a contiguous output (stride 0 on broadcast dimensions).
/// With `a` the output itself and its contiguous strides it folds an aggregate's operand in.
struct BinaryArgs {
  Shape shape;
  I64 a[kMaxRank] = {};
  I64 b[kMaxRank] = {};
  I64 n = 0;
  Fn fn = Fn::add;
  float p0 = 1, p1 = 0;
};

template <class T>
DOPPLER_HD void binary_element(const BinaryArgs& a, I64 i, const T* x, const T* y, T* out) {
  put(out + i, binary(a.fn, a.p0, a.p1, as_f32(x[offset_at(i, a.shape, a.a)]),
                      as_f32(y[offset_at(i, a.shape, a.b)])));
}

/// where: out[i] = cond != 0 ? a : b over a contiguous output, each operand broadcast (stride 0).
struct WhereArgs {
  Shape shape;
  I64 c[kMaxRank] = {};
  I64 a[kMaxRank] = {};
  I64 b[kMaxRank] = {};
  I64 n = 0;
};

template <class T>
DOPPLER_HD void where_element(const WhereArgs& w, I64 i, const T* c, const T* a, const T* b,
                              T* out) {
  out[i] = as_f32(c[offset_at(i, w.shape, w.c)]) != 0 ? a[offset_at(i, w.shape, w.a)]
                                                      : b[offset_at(i, w.shape, w.b)];
}

// ---- fused recurrent cells ----

/// Which fused recurrent step (docs/exec.md): element i is unit i % h of row i / h.
enum class Cell : std::uint8_t {
  lstm_c,  ///< p: gates [rows, 4h] (i o f c), q: c [rows, h] -> c' = s(f) c + s(i) tanh(c~)
  lstm_h,  ///< p: gates [rows, 4h], q: c' [rows, h] -> h' = s(o) tanh(c')
  gru,     ///< p: x [rows, 3h] (z r n), q: h R^T [rows, 3h], r: h [rows, h], s: Rb_n [h] or
           ///< none -> z = s(x_z + q_z), r = s(x_r + q_r), n = tanh(x_n + r (q_n + Rb_n)),
           ///< h' = n + z (h - n)
};

/// A fused recurrent step over `n` output elements, rows of `h` units; each operand's rows are
/// contiguous, `rows[k]` apart (0: one row for every output row).
struct CellArgs {
  Cell cell = Cell::lstm_c;
  I64 h = 1, n = 0;
  I64 rows[4] = {};
};

/// tanh as the unary kernel computes it.
DOPPLER_HD float tanh_f(float x) {
  return static_cast<float>(std::tanh(static_cast<double>(x)));
}

template <class T>
DOPPLER_HD void cell_element(const CellArgs& a, I64 i, const T* p, const T* q, const T* r,
                             const T* s, T* out) {
  const I64 row = i / a.h, j = i % a.h;
  const T* g = p + row * a.rows[0];
  const T* u = q + row * a.rows[1];
  if (a.cell == Cell::lstm_c) {
    const float in = sigmoid(as_f32(g[j])), forget = sigmoid(as_f32(g[2 * a.h + j]));
    put(out + i, forget * as_f32(u[j]) + in * tanh_f(as_f32(g[3 * a.h + j])));
  } else if (a.cell == Cell::lstm_h) {
    put(out + i, sigmoid(as_f32(g[a.h + j])) * tanh_f(as_f32(u[j])));
  } else {
    const float z = sigmoid(as_f32(g[j]) + as_f32(u[j]));
    const float reset = sigmoid(as_f32(g[a.h + j]) + as_f32(u[a.h + j]));
    const float rb = s ? as_f32(s[j]) : 0.0f;
    const float cand = tanh_f(as_f32(g[2 * a.h + j]) + reset * (as_f32(u[2 * a.h + j]) + rb));
    put(out + i, cand + z * (as_f32(r[row * a.rows[2] + j]) - cand));
  }
}

// ---- last-axis reduction ----

/// Threads that share one row of a long reduction (a warp).
inline constexpr int kReduceLanes = 32;
/// Rows at least this long are reduced by kReduceLanes threads each (reads coalesced across the
/// lanes, and threads enough for a few long rows, as an RMSNorm's 512 rows of 4096); shorter
/// rows by one thread each.
inline constexpr I64 kLaneRowLength = 256;

/// out[r] = sum / max / sum of squares of row r (`len` elements `step` apart), the rows laid
/// out by `rows` (the operand's shape with its last extent 1) and `in` (its strides); double
/// accumulation. With kReduceLanes lanes per row, lane l sums elements l, l + lanes, ... and
/// the lanes' partials combine as a warp's shuffle-down tree (lane i takes lane i + o's for
/// o = 16, 8, 4, 2, 1), which reduce_row() repeats on the host, in the same order.
struct ReduceArgs {
  Shape rows;
  I64 in[kMaxRank] = {};
  I64 n = 0;  ///< rows
  I64 len = 0, step = 1;
  Fn fn = Fn::sum;
  int lanes = 1;      ///< threads per row: 1 or kReduceLanes (argmax: 1)
  bool last = false;  ///< argmax: ties go to the last index
};

/// argmax: the index of the largest element of row r (NaN never wins), the first or last of ties.
template <class T>
DOPPLER_HD double argmax_row(const ReduceArgs& a, I64 r, const T* x) {
  const T* s = x + offset_at(r, a.rows, a.in);
  float best = -HUGE_VALF;
  I64 at = 0;
  for (I64 i = 0; i < a.len; ++i) {
    const float v = as_f32(s[i * a.step]);
    if (v > best || (a.last && v == best)) best = v, at = i;
  }
  return static_cast<double>(at);
}

/// Row kernels along the last axis: row r of the operand (`len` elements `step` apart, the rows
/// laid out by `rows` and `in`) gives one contiguous output row.
/// cumsum (k = 0): running sums in double, from its first element (from its last with
/// `reverse`), each output including its own element (excluding it with `exclusive`);
/// topk (k > 0): its k first elements in value order, larger first (smaller with !largest),
/// ties by lower index, NaN above every number; their values, or their indices with `indices`.
struct ScanArgs {
  Shape rows;
  I64 in[kMaxRank] = {};
  I64 n = 0;  ///< rows
  I64 len = 0, step = 1;
  bool exclusive = false, reverse = false;
  I64 k = 0;  ///< topk: elements per output row (0: cumsum)
  bool largest = true, indices = false;
};

/// topk's order: whether element (av, ai) comes before (bv, bi).
DOPPLER_HD bool topk_before(bool largest, float av, I64 ai, float bv, I64 bi) {
  const bool an = av != av, bn = bv != bv;  // NaN: above every number
  const bool a_above = an ? !bn : (!bn && av > bv), b_above = bn ? !an : (!an && bv > av);
  if (largest ? a_above : b_above) return true;
  if (largest ? b_above : a_above) return false;
  return ai < bi;
}

/// topk of row r: k passes, each taking the first element after the one taken before it.
template <class T>
DOPPLER_HD void topk_row(const ScanArgs& a, I64 r, const T* x, T* out) {
  const T* s = x + offset_at(r, a.rows, a.in);
  T* o = out + r * a.k;
  float pv = 0.0f;
  I64 pi = -1;
  for (I64 j = 0; j < a.k; ++j) {
    float bv = 0.0f;
    I64 bi = -1;
    for (I64 i = 0; i < a.len; ++i) {
      const float v = as_f32(s[i * a.step]);
      if (pi >= 0 && !topk_before(a.largest, pv, pi, v, i)) continue;
      if (bi < 0 || topk_before(a.largest, v, i, bv, bi)) bv = v, bi = i;
    }
    put(o + j, a.indices ? static_cast<float>(bi) : bv);
    pv = bv, pi = bi;
  }
}

template <class T>
DOPPLER_HD void scan_row(const ScanArgs& a, I64 r, const T* x, T* out) {
  if (a.k > 0) return topk_row(a, r, x, out);
  const T* s = x + offset_at(r, a.rows, a.in);
  T* o = out + r * a.len;
  double acc = 0;
  for (I64 j = 0; j < a.len; ++j) {
    const I64 i = a.reverse ? a.len - 1 - j : j;
    const double v = as_f32(s[i * a.step]);
    if (!a.exclusive) acc += v;
    put(o + i, static_cast<float>(acc));
    if (a.exclusive) acc += v;
  }
}

/// Two partial results of a reduction combined (partial sums of squares add).
DOPPLER_HD double reduce_combine(Fn f, double a, double b) {
  if (f == Fn::max) return a < b ? b : a;
  return a + b;
}

/// Lane `lane`'s partial of row r: its elements (lane, lane + a.lanes, ...) in order.
template <class T>
DOPPLER_HD double reduce_lane(const ReduceArgs& a, I64 r, int lane, const T* x) {
  const T* s = x + offset_at(r, a.rows, a.in);
  double acc = a.fn == Fn::max ? -HUGE_VAL : 0.0;
  for (I64 i = lane; i < a.len; i += a.lanes) {
    const double v = as_f32(s[i * a.step]);
    acc = reduce_combine(a.fn, acc, a.fn == Fn::sumsq ? v * v : v);
  }
  return acc;
}

/// Row r as the device reduces it: one lane, or kReduceLanes lanes and their tree.
template <class T>
DOPPLER_HD double reduce_row(const ReduceArgs& a, I64 r, const T* x) {
  if (a.fn == Fn::argmax) return argmax_row(a, r, x);
  if (a.lanes != kReduceLanes) return reduce_lane(a, r, 0, x);
  double p[kReduceLanes];
  for (int l = 0; l < kReduceLanes; ++l) p[l] = reduce_lane(a, r, l, x);
  for (int o = kReduceLanes / 2; o > 0; o /= 2)
    for (int l = 0; l < o; ++l) p[l] = reduce_combine(a.fn, p[l], p[l + o]);
  return p[0];
}

template <class T>
DOPPLER_HD void reduce_element(const ReduceArgs& a, I64 r, const T* x, T* out) {
  put(out + r, static_cast<float>(reduce_row(a, r, x)));
}

// ---- rotary position embedding ----

/// Pairs (2j, 2j + 1) of each innermost row rotated by the cached (cos, sin) table, which is
/// laid out as the contiguous output; an odd row's last element is left alone.
struct RotaryArgs {
  Shape shape;
  I64 in[kMaxRank] = {};
  I64 n = 0;
};

template <class T>
DOPPLER_HD void rotary_element(const RotaryArgs& a, I64 i, const T* x, const T* table, T* out) {
  const I64 len = a.shape.rank > 0 ? a.shape.ext[a.shape.rank - 1] : 1;
  const I64 p = i % len, first = i - p % 2;
  if (p - p % 2 + 1 >= len) return;
  const I64 inner = a.shape.rank > 0 ? a.in[a.shape.rank - 1] : 0;
  const I64 base = offset_at(first, a.shape, a.in);
  const double x0 = as_f32(x[base]), x1 = as_f32(x[base + inner]);
  const double c = as_f32(table[first]), sn = as_f32(table[first + 1]);
  put(out + i, static_cast<float>(p % 2 == 0 ? x0 * c - x1 * sn : x0 * sn + x1 * c));
}

// ---- einsum as a loop ----

/// An einsum that is not one batched GEMM: per label its extent, its stride in each operand
/// (0 when absent) and in the output (0 when summed over). Output element i sums the product of
/// the operands over every summed label, in double.
struct LoopArgs {
  int labels = 0, operands = 0;
  I64 ext[kMaxLabels] = {};
  I64 out[kMaxLabels] = {};
  I64 op[kMaxLoopOperands][kMaxLabels] = {};
  I64 n = 0;  ///< output elements
};

/// The operands of a looped einsum, an aggregate or a synthetic checksum (each from its view's
/// offset).
template <class T>
struct Operands {
  const T* p[kChecksumOperands] = {};
};

template <class T>
DOPPLER_HD void loop_element(const LoopArgs& a, I64 i, const Operands<T>& in, T* out) {
  I64 base[kMaxLoopOperands] = {};
  I64 summed[kMaxLabels] = {};
  int ns = 0;
  for (int l = 0; l < a.labels; ++l) {
    if (a.out[l] == 0) {
      summed[ns++] = l;
      continue;
    }
    const I64 idx = (i / a.out[l]) % a.ext[l];
    for (int j = 0; j < a.operands; ++j) base[j] += idx * a.op[j][l];
  }
  I64 total = 1;
  for (int s = 0; s < ns; ++s) total *= a.ext[summed[s]];
  double acc = 0;
  for (I64 t = 0; t < total; ++t) {
    I64 rest = t, off[kMaxLoopOperands] = {};
    for (int s = ns - 1; s >= 0; --s) {
      const int l = static_cast<int>(summed[s]);
      const I64 idx = rest % a.ext[l];
      rest /= a.ext[l];
      for (int j = 0; j < a.operands; ++j) off[j] += idx * a.op[j][l];
    }
    double prod = 1;
    for (int j = 0; j < a.operands; ++j) prod *= as_f32(in.p[j][base[j] + off[j]]);
    acc += prod;
  }
  put(out + i, static_cast<float>(acc));
}

// ---- synthetic kernels' checksum ----

/// out[0] = 0.5 x the mean of the operands' first elements + p0, over several launches of at
/// most kChecksumOperands operands: the first sets, the others add, the last finishes.
struct ChecksumArgs {
  int count = 0;  ///< operands in this launch
  bool first = true, last = true;
  double total = 1;  ///< operands over every launch
  float p0 = 0;
};

template <class T>
DOPPLER_HD void checksum_element(const ChecksumArgs& a, const Operands<T>& in, T* out) {
  double acc = a.first ? 0.0 : as_f32(out[0]);
  for (int j = 0; j < a.count; ++j) acc += as_f32(in.p[j][0]);
  put(out, static_cast<float>(a.last ? 0.5 * (a.total > 0 ? acc / a.total : 0.0) + a.p0 : acc));
}

// ---- aggregate: the sum or max of k operands ----

/// out[i] = operand 0 (+ or max) operand 1 ... over a contiguous output of `shape`, each
/// operand a view with its strides, folded in f32 in operand order and stored once: with bf16
/// tensors one rounding per launch, where adding blocks pairwise rounds every partial sum. With
/// more than kAggregateOperands operands the launches chain: a launch that is not the first
/// folds out[i] first, then `count` more operands.
struct AggregateArgs {
  Shape shape;
  I64 in[kAggregateOperands][kMaxRank] = {};  ///< each operand's strides (from its offset)
  int count = 0;                              ///< operands of this launch, >= 1
  bool first = true;
  I64 n = 0;  ///< output elements
  Fn fn = Fn::sum;
};

template <class T>
DOPPLER_HD void aggregate_element(const AggregateArgs& a, I64 i, const Operands<T>& in, T* out) {
  const int j0 = a.first ? 1 : 0;
  float acc = a.first ? as_f32(in.p[0][offset_at(i, a.shape, a.in[0])]) : as_f32(out[i]);
  for (int j = j0; j < a.count; ++j)
    acc = binary(a.fn, 1, 0, acc, as_f32(in.p[j][offset_at(i, a.shape, a.in[j])]));
  put(out + i, acc);
}

// ---- windowed NCHW kernels ----

/// The geometry of engine_detail::WindowPlan with the window's strides (sn, sc, sy; unit
/// column stride) after it was gathered.
struct Window {
  I64 nb = 1, cw = 1, rows = 1, in_h = 1, in_w = 1, row0 = 0, c0 = 0;
  I64 cb = 1, oh = 1, ow = 1, o0 = 0, y0 = 0;
  I64 kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  I64 icg = 1, out_per_group = 1;
  bool include_pad = false;
  I64 sn = 0, sc = 0, sy = 0;
};

/// Global input row of local output row y at kernel row ky.
DOPPLER_HD I64 input_row(const Window& w, I64 y, I64 ky) {
  return (w.y0 + y) * w.sh - w.ph + ky * w.dh;
}

/// Input column of output column x at kernel column kx.
DOPPLER_HD I64 input_col(const Window& w, I64 x, I64 kx) {
  return x * w.sw + kx * w.dw - w.pw;
}

/// Output planes [nb, cb, oh, ow] set to the bias of their channel (0 without one).
struct BiasArgs {
  I64 n = 0, plane = 1, cb = 1, stride = 0;
  bool has_bias = false;
};

template <class T>
DOPPLER_HD void bias_element(const BiasArgs& a, I64 i, const T* bias, T* out) {
  out[i] = a.has_bias ? bias[((i / a.plane) % a.cb) * a.stride] : T{};
}

/// im2col of one batch element's group: cols[(ci kh + ky) kw + kx, y ow + x], 0 on padding;
/// `x` is the group's first channel in the window.
struct Im2colArgs {
  Window w;
  I64 n = 0;  ///< icg kh kw oh ow
};

template <class T>
DOPPLER_HD void im2col_element(const Im2colArgs& a, I64 i, const T* x, T* cols) {
  const Window& w = a.w;
  const I64 plane = w.oh * w.ow, r = i / plane, p = i % plane;
  const I64 kx = r % w.kw, ky = (r / w.kw) % w.kh, ci = r / (w.kw * w.kh);
  const I64 iy = input_row(w, p / w.ow, ky), ix = input_col(w, p % w.ow, kx);
  const bool inside = iy >= 0 && iy < w.in_h && ix >= 0 && ix < w.in_w;
  cols[i] = inside ? x[ci * w.sc + (iy - w.row0) * w.sy + ix] : T{};
}

/// Direct convolution of output channels [o, o + count) of one group for one batch element:
/// out (already at the bias) += the sum over the group's channels and the kernel window.
struct DirectConvArgs {
  Window w;
  I64 ldw = 0;  ///< weight row stride ([icg kh kw] rows)
  I64 n = 0;    ///< count oh ow
};

template <class T>
DOPPLER_HD void direct_conv_element(const DirectConvArgs& a, I64 i, const T* x, const T* wt,
                                    T* out) {
  const Window& w = a.w;
  const I64 plane = w.oh * w.ow, j = i / plane, p = i % plane, y = p / w.ow, ox = p % w.ow;
  const T* row_w = wt + j * a.ldw;
  float acc = as_f32(out[i]);
  for (I64 ci = 0; ci < w.icg; ++ci)
    for (I64 ky = 0; ky < w.kh; ++ky) {
      const I64 iy = input_row(w, y, ky);
      if (iy < 0 || iy >= w.in_h) continue;
      const T* row = x + ci * w.sc + (iy - w.row0) * w.sy;
      for (I64 kx = 0; kx < w.kw; ++kx) {
        const I64 ix = input_col(w, ox, kx);
        if (ix >= 0 && ix < w.in_w)
          acc += as_f32(row_w[(ci * w.kh + ky) * w.kw + kx]) * as_f32(row[ix]);
      }
    }
  put(out + i, acc);
}

/// Transposed convolution, after the GEMM cols[(j kh + ky) kw + kx, r in_w + ix] = sum over the
/// group's channels ci of w[o + j, ci, ky, kx] X(ci, row0 + r, ix): output element i of channels
/// [o, o + count) of one batch element (already at the bias) += the columns of every kernel
/// position that lands on it, oy + ph = iy sh + ky dh (and likewise for x).
struct Col2imArgs {
  Window w;
  I64 n = 0;  ///< count oh ow
};

template <class T>
DOPPLER_HD void col2im_element(const Col2imArgs& a, I64 i, const T* cols, T* out) {
  const Window& w = a.w;
  const I64 plane = w.oh * w.ow, j = i / plane, p = i % plane;
  const I64 oy = w.y0 + p / w.ow, ox = p % w.ow, ncol = w.rows * w.in_w;
  float acc = as_f32(out[i]);
  for (I64 ky = 0; ky < w.kh; ++ky) {
    const I64 ty = oy + w.ph - ky * w.dh;
    if (ty < 0 || ty % w.sh != 0 || ty / w.sh >= w.in_h) continue;
    const T* row = cols + ((j * w.kh + ky) * w.kw) * ncol + (ty / w.sh - w.row0) * w.in_w;
    for (I64 kx = 0; kx < w.kw; ++kx) {
      const I64 tx = ox + w.pw - kx * w.dw;
      if (tx < 0 || tx % w.sw != 0 || tx / w.sw >= w.in_w) continue;
      acc += as_f32(row[kx * ncol + tx / w.sw]);
    }
  }
  put(out + i, acc);
}

/// Max or average pooling: output element i of [nb, cb, oh, ow] from the window channel of the
/// same index (channels map one to one).
struct PoolArgs {
  Window w;
  bool is_max = true;
  I64 n = 0;
};

template <class T>
DOPPLER_HD void pool_element(const PoolArgs& a, I64 i, const T* win, T* out) {
  const Window& w = a.w;
  const I64 plane = w.oh * w.ow, c = (i / plane) % w.cb, nb = i / (plane * w.cb);
  const I64 y = (i % plane) / w.ow, ox = i % w.ow;
  const T* x = win + nb * w.sn + c * w.sc;
  float acc = a.is_max ? -HUGE_VALF : 0.0f;
  I64 rows_in = 0, cols_in = 0;
  for (I64 kx = 0; kx < w.kw; ++kx) {
    const I64 ix = input_col(w, ox, kx);
    cols_in += ix >= 0 && ix < w.in_w ? 1 : 0;
  }
  for (I64 ky = 0; ky < w.kh; ++ky) {
    const I64 iy = input_row(w, y, ky);
    if (iy < 0 || iy >= w.in_h) continue;
    ++rows_in;
    const T* row = x + (iy - w.row0) * w.sy;
    for (I64 kx = 0; kx < w.kw; ++kx) {
      const I64 ix = input_col(w, ox, kx);
      if (ix < 0 || ix >= w.in_w) continue;
      const float v = as_f32(row[ix]);
      acc = a.is_max ? (acc < v ? v : acc) : acc + v;
    }
  }
  if (!a.is_max) acc /= static_cast<float>(w.include_pad ? w.kh * w.kw : rows_in * cols_in);
  put(out + i, acc);
}

/// a (1 - w) + b w in f32: one step of a linear resize.
DOPPLER_HD float lerp(float a, float b, float w) {
  return a * (1.0f - w) + b * w;
}

/// resize2d: output element i of [nb, cb, oh, ow] from the window channel of the same index
/// (channels map one to one), at global output row y0 + y and column x.
struct ResizeArgs {
  Window w;
  resize::Axis ay, ax;                                               ///< rows and columns
  bool linear = false;                                               ///< linear, else nearest
  resize::Rounding rounding = resize::Rounding::round_prefer_floor;  ///< nearest's rounding
  I64 n = 0;
};

template <class T>
DOPPLER_HD void resize_element(const ResizeArgs& a, I64 i, const T* win, T* out) {
  const Window& w = a.w;
  const I64 plane = w.oh * w.ow, c = (i / plane) % w.cb, nb = i / (plane * w.cb);
  const I64 y = w.y0 + (i % plane) / w.ow, ox = i % w.ow;
  const T* x = win + nb * w.sn + c * w.sc;  // global row iy at x + (iy - row0) sy
  if (!a.linear) {
    const I64 iy = resize::nearest(a.ay, a.rounding, y), ix = resize::nearest(a.ax, a.rounding, ox);
    out[i] = x[(iy - w.row0) * w.sy + ix];
    return;
  }
  const resize::Taps ty = resize::linear(a.ay, y), tx = resize::linear(a.ax, ox);
  const float wx = static_cast<float>(tx.w1), wy = static_cast<float>(ty.w1);
  const T* r0 = x + (ty.i0 - w.row0) * w.sy;
  const T* r1 = x + (ty.i1 - w.row0) * w.sy;
  const float top = lerp(as_f32(r0[tx.i0]), as_f32(r0[tx.i1]), wx);
  const float bottom = lerp(as_f32(r1[tx.i0]), as_f32(r1[tx.i1]), wx);
  put(out + i, lerp(top, bottom, wy));
}

}  // namespace doppler::engine_detail::dev
