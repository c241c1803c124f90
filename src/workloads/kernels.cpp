#include "doppler/workloads/kernels.hpp"

#include <array>

namespace doppler::workloads {

namespace {

// FLOP conventions (docs/exec.md): one FLOP per arithmetic operation, exp / sqrt / division
// counted as one each, sin and cos of rotary angles not counted.
constexpr std::array<KernelInfo, 91> kKernels = {{
    {"input", OpKind::input, 0, 0, "deterministic values offset + scale * u(seed, coord)"},
    {"fill", OpKind::fill, 0, 0,
     "constant value, or value on one side of a diagonal when causal (a triangular mask)"},
    {"load", OpKind::input, 0, 0, "values of a Graph constant tensor at origin + i"},
    {"einsum", OpKind::einsum, -1, 2, "contraction by spec; 2 FLOPs per iteration point"},
    {"sum", OpKind::aggregate, -1, 1, "elementwise sum of k partial blocks"},
    {"max", OpKind::aggregate, -1, 1, "elementwise max of k partial blocks"},
    {"assemble", OpKind::aggregate, -1, 0, "re-blocking: pieces placed by global position"},
    {"select", OpKind::select, 1, 0, "copy of one region"},
    {"reshape", OpKind::select, 1, 0, "the operand's elements in row-major order, reshaped"},
    {"transpose", OpKind::select, 1, 0, "permutation of the dimensions by a one-operand spec"},
    {"expand", OpKind::select, 1, 0, "the operand broadcast to the output's shape"},
    {"stride", OpKind::select, 1, 0,
     "every |step|-th element along `axis` of the region, from its far end when step < 0"},
    {"gather", OpKind::select, 2, 0,
     "rows of the table (operand 0) at the indices (operand 1: truncated, negative from the end, "
     "clamped into the table)"},
    {"gather_along", OpKind::select, 2, 0,
     "an element of each last-axis row of the table (operand 0) per index (operand 1, the "
     "table's leading extents: as gather's), NumPy's take_along_axis"},
    {"relu", OpKind::elementwise, 1, 1, "max(x, 0)"},
    {"exp", OpKind::elementwise, 1, 1, "exp(x)"},
    {"silu", OpKind::elementwise, 1, 4, "x / (1 + exp(-x))"},
    {"scale", OpKind::elementwise, 1, 1, "scale * x"},
    {"rsqrt", OpKind::elementwise, 1, 3, "1 / sqrt(scale * x + eps)"},
    {"rotary", OpKind::elementwise, 1, 3, "rotary position embedding of adjacent pairs"},
    {"sqrt", OpKind::elementwise, 1, 1, "sqrt(x)"},
    {"sigmoid", OpKind::elementwise, 1, 4, "1 / (1 + exp(-x))"},
    {"tanh", OpKind::elementwise, 1, 1, "tanh(x)"},
    {"erf", OpKind::elementwise, 1, 1, "erf(x)"},
    {"gelu", OpKind::elementwise, 1, 5, "0.5 x (1 + erf(x / sqrt 2))"},
    {"neg", OpKind::elementwise, 1, 1, "-x"},
    {"pow", OpKind::elementwise, 1, 1, "x^exponent"},
    {"identity", OpKind::elementwise, 1, 0, "copy of x"},
    {"add", OpKind::elementwise, 2, 1, "a + b (broadcast)"},
    {"sub", OpKind::elementwise, 2, 1, "a - b (broadcast)"},
    {"mul", OpKind::elementwise, 2, 1, "a * b (broadcast)"},
    {"div", OpKind::elementwise, 2, 1, "a / b (broadcast)"},
    {"relu_grad", OpKind::elementwise, 2, 1, "dy * (x > 0)"},
    {"silu_grad", OpKind::elementwise, 2, 8, "dy * silu'(x)"},
    {"rsqrt_grad", OpKind::elementwise, 2, 5, "dy * d/dx (scale * x + eps)^(-1/2)"},
    {"sumsq_grad", OpKind::elementwise, 2, 2, "2 * x * dy (dy broadcast)"},
    {"reduce_sum", OpKind::einsum, 1, 1, "sum over the last axis (kept, extent 1)"},
    {"reduce_max", OpKind::einsum, 1, 1, "max over the last axis (kept, extent 1)"},
    {"reduce_sumsq", OpKind::einsum, 1, 2, "sum of squares over the last axis"},
    {"reduce_argmax", OpKind::einsum, 1, 1,
     "index of the largest element of the last axis (kept, extent 1; ties: the first)"},
    {"topk", OpKind::einsum, 1, 1,
     "the k first elements of the last axis in value order, k the output's last extent: values, "
     "or indices with `indices`; per input element k FLOPs (k comparisons)"},
    {"clip", OpKind::elementwise, 1, 2, "min(max(x, min), max)"},
    {"reciprocal", OpKind::elementwise, 1, 1, "1 / x"},
    {"floor", OpKind::elementwise, 1, 1, "the largest whole number <= x"},
    {"ceil", OpKind::elementwise, 1, 1, "the smallest whole number >= x"},
    {"round", OpKind::elementwise, 1, 1, "the nearest whole number, halves to even"},
    {"sign", OpKind::elementwise, 1, 1, "1, -1 or x (0, NaN) by the sign of x"},
    {"sin", OpKind::elementwise, 1, 1, "sin(x)"},
    {"cos", OpKind::elementwise, 1, 1, "cos(x)"},
    {"tan", OpKind::elementwise, 1, 1, "tan(x)"},
    {"asin", OpKind::elementwise, 1, 1, "asin(x)"},
    {"acos", OpKind::elementwise, 1, 1, "acos(x)"},
    {"atan", OpKind::elementwise, 1, 1, "atan(x)"},
    {"sinh", OpKind::elementwise, 1, 1, "sinh(x)"},
    {"cosh", OpKind::elementwise, 1, 1, "cosh(x)"},
    {"selu", OpKind::elementwise, 1, 5, "gamma (x > 0 ? x : alpha (exp(x) - 1))"},
    {"celu", OpKind::elementwise, 1, 5, "max(0, x) + min(0, alpha (exp(x / alpha) - 1))"},
    {"isnan", OpKind::elementwise, 1, 1, "1 where x is NaN, else 0"},
    {"isinf", OpKind::elementwise, 1, 1, "1 where x is +inf (positive) or -inf (negative)"},
    {"maximum", OpKind::elementwise, 2, 1, "max(a, b) (broadcast; NaN when either is)"},
    {"minimum", OpKind::elementwise, 2, 1, "min(a, b) (broadcast; NaN when either is)"},
    {"power", OpKind::elementwise, 2, 1, "a^b (broadcast)"},
    {"prelu", OpKind::elementwise, 2, 2, "a < 0 ? b a : a (broadcast slope b)"},
    {"mod", OpKind::elementwise, 2, 1, "a mod b with the divisor's sign (broadcast)"},
    {"fmod", OpKind::elementwise, 2, 1, "C's fmod(a, b): the dividend's sign (broadcast)"},
    {"hardsigmoid", OpKind::elementwise, 1, 4, "max(0, min(1, alpha x + beta))"},
    {"hardswish", OpKind::elementwise, 1, 5, "x max(0, min(1, x / 6 + 1/2))"},
    {"leaky_relu", OpKind::elementwise, 1, 2, "x if x > 0 else alpha x"},
    {"elu", OpKind::elementwise, 1, 4, "x if x > 0 else alpha (exp(x) - 1)"},
    {"softplus", OpKind::elementwise, 1, 3, "log(1 + exp(x))"},
    {"abs", OpKind::elementwise, 1, 1, "|x|"},
    {"log", OpKind::elementwise, 1, 1, "log(x)"},
    {"not", OpKind::elementwise, 1, 1, "1 where x == 0, else 0"},
    {"cumsum", OpKind::elementwise, 1, 1, "running sums along the last axis (exclusive, reverse)"},
    {"less", OpKind::elementwise, 2, 1, "1 where a < b, else 0 (broadcast)"},
    {"greater", OpKind::elementwise, 2, 1, "1 where a > b, else 0 (broadcast)"},
    {"equal", OpKind::elementwise, 2, 1, "1 where a == b, else 0 (broadcast)"},
    {"less_equal", OpKind::elementwise, 2, 1, "1 where a <= b, else 0 (broadcast)"},
    {"greater_equal", OpKind::elementwise, 2, 1, "1 where a >= b, else 0 (broadcast)"},
    {"and", OpKind::elementwise, 2, 1, "1 where a != 0 and b != 0, else 0 (broadcast)"},
    {"or", OpKind::elementwise, 2, 1, "1 where a != 0 or b != 0, else 0 (broadcast)"},
    {"xor", OpKind::elementwise, 2, 1, "1 where exactly one of a, b is nonzero (broadcast)"},
    {"where", OpKind::elementwise, 3, 1,
     "a where cond != 0, else b (operands cond, a, b; broadcast)"},
    {"lstm_cell", OpKind::elementwise, 2, 12,
     "fused LSTM cell state s(f) c + s(i) tanh(g) of the gates [.., 4h] (i o f g) and c [.., h]"},
    {"lstm_hidden", OpKind::elementwise, 2, 6,
     "fused LSTM output s(o) tanh(c') of the gates [.., 4h] and the new cell state c' [.., h]"},
    {"gru_cell", OpKind::elementwise, -1, 17,
     "fused GRU step (linear_before_reset) of x W^T + Wb [.., 3h] (z r n), h R^T [.., 3h], h "
     "[.., h] and Rb_n [h]: n = tanh(x_n + r (hR_n + Rb_n)), h' = n + z (h - n); 16 FLOPs per "
     "element without Rb_n"},
    {"conv2d", OpKind::einsum, -1, 2, "2-D convolution of an NCHW window; 2 per MAC"},
    {"conv_transpose2d", OpKind::einsum, -1, 2,
     "transposed 2-D convolution of an NCHW window; 2 per MAC"},
    {"maxpool2d", OpKind::einsum, -1, 1, "max over each window position (NCHW)"},
    {"avgpool2d", OpKind::einsum, -1, 1, "mean over each window position (NCHW)"},
    {"resize2d", OpKind::elementwise, -1, 9,
     "nearest (0 FLOPs) or linear (9 per output element) resize of an NCHW window"},
}};

}  // namespace

std::span<const KernelInfo> kernels() {
  return kKernels;
}

const KernelInfo* find_kernel(std::string_view name) {
  for (const KernelInfo& k : kernels())
    if (k.name == name) return &k;
  return nullptr;
}

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

namespace {
// The value in [-1, 1) of a finished chain: its top 53 bits as a fraction, shifted.
double unit_of(std::uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
}
}  // namespace

std::uint64_t input_row_hash(std::uint64_t seed, std::span<const std::int64_t> lead) {
  std::uint64_t h = splitmix64(seed);
  for (std::int64_t c : lead) h = splitmix64(h ^ static_cast<std::uint64_t>(c));
  return h;
}

double input_unit_at(std::uint64_t row_hash, std::int64_t last) {
  return unit_of(splitmix64(row_hash ^ static_cast<std::uint64_t>(last)));
}

double input_unit_value(std::uint64_t seed, std::span<const std::int64_t> coord) {
  if (coord.empty()) return unit_of(splitmix64(seed));
  return input_unit_at(input_row_hash(seed, coord.first(coord.size() - 1)), coord.back());
}

}  // namespace doppler::workloads
