#include "block_eval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <gtest/gtest.h>

namespace doppler::test {

namespace {

using Idx = std::vector<std::int64_t>;

// Advances a row-major multi-index; false after the last one.
bool next_index(Idx& idx, const Idx& shape) {
  for (auto d = static_cast<std::ptrdiff_t>(shape.size()) - 1; d >= 0; --d) {
    const auto du = static_cast<std::size_t>(d);
    if (++idx[du] < shape[du]) return true;
    idx[du] = 0;
  }
  return false;
}

std::int64_t count(const Idx& s) {
  std::int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}

std::uint64_t mix(std::uint64_t z) {  // splitmix64, as docs/exec.md writes it
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

[[noreturn]] void fail(const Graph& g, NodeId v, const std::string& why) {
  throw std::runtime_error("node " + g.label(v) + ": " + why);
}

// The region an ExecInput designates, copied out of its producer's value.
Dense operand(const Graph& g, const std::vector<Dense>& vals, NodeId v, const ExecInput& in) {
  const Dense& src = vals[static_cast<std::size_t>(in.src)];
  if (in.offset.empty() && in.shape.empty()) return src;
  if (in.offset.size() != src.shape.size() || in.shape.size() != src.shape.size())
    fail(g, v, "region rank differs from the producer's");
  for (std::size_t d = 0; d < src.shape.size(); ++d)
    if (in.offset[d] < 0 || in.shape[d] < 1 || in.offset[d] + in.shape[d] > src.shape[d])
      fail(g, v, "region outside the producer block");
  Dense out(in.shape);
  Idx idx(in.shape.size(), 0), s(in.shape.size());
  if (out.numel() == 0) return out;
  do {
    for (std::size_t d = 0; d < idx.size(); ++d) s[d] = idx[d] + in.offset[d];
    out[idx] = src[s];
  } while (next_index(idx, in.shape));
  return out;
}

// Index of `out_idx` (of a tensor of rank r_out) in an operand of `shape`, NumPy broadcasting.
Idx broadcast_index(const Idx& out_idx, const Idx& shape) {
  Idx i(shape.size());
  const std::size_t off = out_idx.size() - shape.size();
  for (std::size_t d = 0; d < shape.size(); ++d) i[d] = shape[d] == 1 ? 0 : out_idx[off + d];
  return i;
}

double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}

double unary(const std::string& op, double x, const ExecDesc& e) {
  if (op == "relu") return x > 0 ? x : 0;
  if (op == "exp") return std::exp(x);
  if (op == "silu") return x * sigmoid(x);
  if (op == "scale") return e.attr("scale", 1) * x;
  if (op == "rsqrt") return 1 / std::sqrt(e.attr("scale", 1) * x + e.attr("eps", 0));
  if (op == "sqrt") return std::sqrt(x);
  if (op == "sigmoid") return sigmoid(x);
  if (op == "tanh") return std::tanh(x);
  if (op == "erf") return std::erf(x);
  if (op == "gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (op == "neg") return -x;
  if (op == "pow") return std::pow(x, e.attr("exponent", 1));
  if (op == "identity") return x;
  if (op == "clip") return std::min(std::max(x, e.attr("min", -3.4e38)), e.attr("max", 3.4e38));
  if (op == "hardsigmoid")
    return std::max(0.0, std::min(1.0, e.attr("alpha", 0.2) * x + e.attr("beta", 0.5)));
  if (op == "hardswish") return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
  if (op == "leaky_relu") return x > 0 ? x : e.attr("alpha", 0.01) * x;
  if (op == "elu") return x > 0 ? x : e.attr("alpha", 1) * (std::exp(x) - 1);
  if (op == "softplus") return std::log(1 + std::exp(x));
  if (op == "abs") return std::abs(x);
  if (op == "log") return std::log(x);
  if (op == "not") return x == 0 ? 1 : 0;
  if (op == "reciprocal") return 1 / x;
  if (op == "floor") return std::floor(x);
  if (op == "ceil") return std::ceil(x);
  if (op == "round") {               // halves to the even neighbour
    const double r = std::round(x);  // halves away from zero
    return std::abs(x - std::trunc(x)) == 0.5 ? 2 * std::round(x / 2) : r;
  }
  if (op == "sign") return x > 0 ? 1 : x < 0 ? -1 : x;
  if (op == "sin") return std::sin(x);
  if (op == "cos") return std::cos(x);
  if (op == "tan") return std::tan(x);
  if (op == "asin") return std::asin(x);
  if (op == "acos") return std::acos(x);
  if (op == "atan") return std::atan(x);
  if (op == "sinh") return std::sinh(x);
  if (op == "cosh") return std::cosh(x);
  if (op == "selu") {
    const double a = e.attr("alpha", 1.6732632423543772), g = e.attr("gamma", 1.0507009873554805);
    return x > 0 ? g * x : g * a * (std::exp(x) - 1);
  }
  if (op == "celu") {
    const double a = e.attr("alpha", 1);
    if (std::isnan(x)) return x;
    return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1));
  }
  if (op == "isnan") return std::isnan(x) ? 1 : 0;
  if (op == "isinf")
    return (e.attr("positive", 1) != 0 && x == INFINITY) ||
                   (e.attr("negative", 1) != 0 && x == -INFINITY)
               ? 1
               : 0;
  throw std::runtime_error("unknown unary " + op);
}

double binary(const std::string& op, double a, double b, const ExecDesc& e) {
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") return a / b;
  if (op == "relu_grad") return b > 0 ? a : 0;  // (dy, x)
  if (op == "silu_grad") {
    const double s = sigmoid(b);
    return a * s * (1 + b * (1 - s));
  }
  if (op == "rsqrt_grad") {
    const double sc = e.attr("scale", 1), u = sc * b + e.attr("eps", 0);
    return a * (-0.5 * sc) * std::pow(u, -1.5);
  }
  if (op == "sumsq_grad") return 2 * a * b;
  if (op == "less") return a < b;
  if (op == "greater") return a > b;
  if (op == "equal") return a == b;
  if (op == "less_equal") return a <= b;
  if (op == "greater_equal") return a >= b;
  if (op == "and") return a != 0 && b != 0;
  if (op == "or") return a != 0 || b != 0;
  if (op == "xor") return (a != 0) != (b != 0);
  if (op == "maximum" || op == "minimum") {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
    return op == "maximum" ? std::max(a, b) : std::min(a, b);
  }
  if (op == "power") return std::pow(a, b);
  if (op == "prelu") return a < 0 ? b * a : a;
  if (op == "mod") return a - b * std::floor(a / b);  // Python's %
  if (op == "fmod") return std::fmod(a, b);
  throw std::runtime_error("unknown binary " + op);
}

Dense eval_einsum(const Graph& g, NodeId v, const ExecDesc& e, const std::vector<Dense>& ops) {
  const auto arrow = e.einsum.find("->");
  if (arrow == std::string::npos) fail(g, v, "einsum without ->");
  std::vector<std::string> in;
  std::string cur;
  for (char c : e.einsum.substr(0, arrow)) {
    if (c == ',') {
      in.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  in.push_back(cur);
  const std::string out = e.einsum.substr(arrow + 2);
  if (in.size() != ops.size()) fail(g, v, "einsum operand count");
  std::string labels;
  Idx ext;
  for (std::size_t j = 0; j < in.size(); ++j) {
    if (in[j].size() != ops[j].shape.size()) fail(g, v, "einsum operand rank");
    for (std::size_t d = 0; d < in[j].size(); ++d) {
      const auto p = labels.find(in[j][d]);
      if (p == std::string::npos) {
        labels += in[j][d];
        ext.push_back(ops[j].shape[d]);
      } else if (ext[p] != ops[j].shape[d]) {
        fail(g, v, "einsum extents disagree");
      }
    }
  }
  Idx oshape;
  for (char c : out) oshape.push_back(ext[labels.find(c)]);
  if (oshape != e.shape) fail(g, v, "einsum output shape differs from exec shape");
  Dense r(oshape);
  Idx idx(labels.size(), 0), oi(out.size());
  std::vector<Idx> oj(in.size());
  for (std::size_t j = 0; j < in.size(); ++j) oj[j].resize(in[j].size());
  do {
    double prod = 1;
    for (std::size_t j = 0; j < in.size(); ++j) {
      for (std::size_t d = 0; d < in[j].size(); ++d) oj[j][d] = idx[labels.find(in[j][d])];
      prod *= ops[j][oj[j]];
    }
    for (std::size_t d = 0; d < out.size(); ++d) oi[d] = idx[labels.find(out[d])];
    r[oi] += prod;
  } while (next_index(idx, ext));
  return r;
}

// ---- windowed kernels (docs/exec.md, "Windowed kernels") ----

// Attribute `name` of a windowed kernel: an integer; `required` ones must be present.
std::int64_t int_attr(const Graph& g, NodeId v, const ExecDesc& e, const std::string& name,
                      bool required, double fallback) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double x = e.attr(name, required ? nan : fallback);
  if (std::isnan(x)) fail(g, v, e.op + ": attribute " + name + " is required");
  if (x != std::floor(x)) fail(g, v, e.op + ": attribute " + name + " is not an integer");
  return static_cast<std::int64_t>(x);
}

// The window geometry: attributes and the output block's place.
struct Geom {
  std::int64_t pieces, row0, c0, in_h, in_w, sh, sw, ph, pw, dh, dw, o0, y0;
};

Geom geometry(const Graph& g, NodeId v, const ExecDesc& e) {
  if (e.shape.size() != 4 || e.origin[3] != 0) fail(g, v, e.op + ": output block not 4-D");
  Geom w{};
  w.pieces = int_attr(g, v, e, "pieces", true, 0);
  w.row0 = int_attr(g, v, e, "row0", true, 0);
  w.c0 = int_attr(g, v, e, "c0", true, 0);
  w.in_h = int_attr(g, v, e, "in_h", true, 0);
  w.in_w = int_attr(g, v, e, "in_w", true, 0);
  w.sh = int_attr(g, v, e, "stride_h", false, 1);
  w.sw = int_attr(g, v, e, "stride_w", false, 1);
  w.ph = int_attr(g, v, e, "pad_h", false, 0);
  w.pw = int_attr(g, v, e, "pad_w", false, 0);
  w.dh = int_attr(g, v, e, "dil_h", false, 1);
  w.dw = int_attr(g, v, e, "dil_w", false, 1);
  w.o0 = e.origin[1];
  w.y0 = e.origin[2];
  return w;
}

// The first `pieces` operands stacked along dimension 2.
Dense stack_window(const Graph& g, NodeId v, const std::vector<Dense>& ops, std::int64_t pieces) {
  if (pieces < 1 || static_cast<std::size_t>(pieces) > ops.size())
    fail(g, v, "bad window piece count");
  Idx shape = ops[0].shape;
  if (shape.size() != 4) fail(g, v, "window piece not 4-D");
  shape[2] = 0;
  for (std::int64_t j = 0; j < pieces; ++j) {
    const Idx& s = ops[static_cast<std::size_t>(j)].shape;
    if (s.size() != 4 || s[0] != shape[0] || s[1] != shape[1] || s[3] != shape[3])
      fail(g, v, "window pieces disagree");
    shape[2] += s[2];
  }
  Dense win(shape);
  std::int64_t row = 0;
  for (std::int64_t j = 0; j < pieces; ++j) {
    const Dense& p = ops[static_cast<std::size_t>(j)];
    Idx i(4, 0);
    do {
      win[{i[0], i[1], row + i[2], i[3]}] = p[i];
    } while (next_index(i, p.shape));
    row += p.shape[2];
  }
  return win;
}

// X(n, c, iy, ix) (global channel and position, local n): false on padding.
bool x_at(const Graph& g, NodeId v, const Dense& win, const Geom& w, std::int64_t n, std::int64_t c,
          std::int64_t iy, std::int64_t ix, double& x) {
  if (iy < 0 || iy >= w.in_h || ix < 0 || ix >= w.in_w) return false;
  const std::int64_t r = iy - w.row0, cl = c - w.c0;
  if (r < 0 || r >= win.shape[2] || cl < 0 || cl >= win.shape[1] || ix >= win.shape[3])
    fail(g, v, "window position outside the window");
  x = win[{n, cl, r, ix}];
  return true;
}

Dense eval_conv2d(const Graph& g, NodeId v, const ExecDesc& e, const std::vector<Dense>& ops) {
  const Geom w = geometry(g, v, e);
  const Dense win = stack_window(g, v, ops, w.pieces);
  const bool bias = int_attr(g, v, e, "bias", false, 0) == 1;
  const std::int64_t opg = int_attr(g, v, e, "out_per_group", true, 0);
  if (ops.size() != static_cast<std::size_t>(w.pieces) + (bias ? 2 : 1) || opg < 1)
    fail(g, v, "conv2d operands");
  const Dense& wt = ops[static_cast<std::size_t>(w.pieces)];
  if (wt.shape.size() != 4 || wt.shape[0] != e.shape[1]) fail(g, v, "conv2d weight shape");
  const std::int64_t icg = wt.shape[1], kh = wt.shape[2], kw = wt.shape[3];
  Dense r(e.shape);
  Idx i(4, 0);
  do {
    const std::int64_t n = i[0], o = i[1], oy = w.y0 + i[2], x = i[3];
    const std::int64_t grp = (w.o0 + o) / opg;
    double acc = bias ? ops[static_cast<std::size_t>(w.pieces) + 1][{o}] : 0.0;
    for (std::int64_t ci = 0; ci < icg; ++ci)
      for (std::int64_t ky = 0; ky < kh; ++ky)
        for (std::int64_t kx = 0; kx < kw; ++kx) {
          const std::int64_t iy = oy * w.sh - w.ph + ky * w.dh, ix = x * w.sw - w.pw + kx * w.dw;
          double xv = 0;
          if (x_at(g, v, win, w, n, grp * icg + ci, iy, ix, xv)) acc += wt[{o, ci, ky, kx}] * xv;
        }
    r[i] = acc;
  } while (next_index(i, e.shape));
  return r;
}

// Transposed convolution by scattering: every window pixel times every kernel position adds to
// the output position it lands on, oy = iy stride_h - pad_h + ky dil_h (kept when in the block).
Dense eval_conv_transpose2d(const Graph& g, NodeId v, const ExecDesc& e,
                            const std::vector<Dense>& ops) {
  const Geom w = geometry(g, v, e);
  const Dense win = stack_window(g, v, ops, w.pieces);
  const bool bias = int_attr(g, v, e, "bias", false, 0) == 1;
  const std::int64_t opg = int_attr(g, v, e, "out_per_group", true, 0);
  if (ops.size() != static_cast<std::size_t>(w.pieces) + (bias ? 2 : 1) || opg < 1)
    fail(g, v, "conv_transpose2d operands");
  const Dense& wt = ops[static_cast<std::size_t>(w.pieces)];
  if (wt.shape.size() != 4 || wt.shape[0] != e.shape[1]) fail(g, v, "conv_transpose2d weight");
  const std::int64_t icg = wt.shape[1], kh = wt.shape[2], kw = wt.shape[3];
  Dense r(e.shape);
  Idx i(4, 0);
  do {
    r[i] = bias ? ops[static_cast<std::size_t>(w.pieces) + 1][{i[1]}] : 0.0;
  } while (next_index(i, e.shape));
  for (std::int64_t n = 0; n < e.shape[0]; ++n)
    for (std::int64_t o = 0; o < e.shape[1]; ++o) {
      const std::int64_t c0 = ((w.o0 + o) / opg) * icg;  // the group's first input channel
      for (std::int64_t ci = 0; ci < icg; ++ci)
        for (std::int64_t iy = 0; iy < w.in_h; ++iy)
          for (std::int64_t ky = 0; ky < kh; ++ky) {
            const std::int64_t y = iy * w.sh - w.ph + ky * w.dh - w.y0;
            if (y < 0 || y >= e.shape[2]) continue;
            for (std::int64_t ix = 0; ix < w.in_w; ++ix)
              for (std::int64_t kx = 0; kx < kw; ++kx) {
                const std::int64_t x = ix * w.sw - w.pw + kx * w.dw;
                if (x < 0 || x >= e.shape[3]) continue;
                double xv = 0;
                x_at(g, v, win, w, n, c0 + ci, iy, ix, xv);
                r[{n, o, y, x}] += wt[{o, ci, ky, kx}] * xv;
              }
          }
    }
  return r;
}

Dense eval_pool2d(const Graph& g, NodeId v, const ExecDesc& e, const std::vector<Dense>& ops) {
  const Geom w = geometry(g, v, e);
  const Dense win = stack_window(g, v, ops, w.pieces);
  if (ops.size() != static_cast<std::size_t>(w.pieces)) fail(g, v, "pool operands");
  const std::int64_t kh = int_attr(g, v, e, "kernel_h", true, 0);
  const std::int64_t kw = int_attr(g, v, e, "kernel_w", true, 0);
  const bool is_max = e.op == "maxpool2d";
  const bool include_pad = int_attr(g, v, e, "count_include_pad", false, 0) == 1;
  Dense r(e.shape);
  Idx i(4, 0);
  do {
    const std::int64_t n = i[0], c = w.o0 + i[1], oy = w.y0 + i[2], x = i[3];
    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    std::int64_t inside = 0;
    for (std::int64_t ky = 0; ky < kh; ++ky)
      for (std::int64_t kx = 0; kx < kw; ++kx) {
        const std::int64_t iy = oy * w.sh - w.ph + ky * w.dh, ix = x * w.sw - w.pw + kx * w.dw;
        double xv = 0;
        if (!x_at(g, v, win, w, n, c, iy, ix, xv)) continue;
        ++inside;
        acc = is_max ? std::max(acc, xv) : acc + xv;
      }
    if (inside == 0) fail(g, v, "pool window entirely in the padding");
    if (!is_max) acc /= static_cast<double>(include_pad ? kh * kw : inside);
    r[i] = acc;
  } while (next_index(i, e.shape));
  return r;
}

// ONNX Resize's input coordinate of output position x (the spec's formulas, written out here
// apart from the engine's resize_coords.hpp): coord 0 half_pixel, 1 asymmetric, 2 align_corners,
// 3 pytorch_half_pixel, 4 tf_half_pixel_for_nearest.
double resize_source(int coord, std::int64_t x, double scale, std::int64_t in, std::int64_t out) {
  const double xr = static_cast<double>(x);
  if (coord == 1) return xr / scale;
  if (coord == 2)
    return out > 1 ? xr * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0;
  if (coord == 3 && out == 1) return 0;
  if (coord == 4) return (xr + 0.5) / scale;
  return (xr + 0.5) / scale - 0.5;
}

// Nearest: the rounded source index (0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3
// ceil), clamped into the input.
std::int64_t resize_nearest(int rounding, double s, std::int64_t in) {
  double i = std::floor(s);
  const double frac = s - i;
  if (rounding == 3 || (rounding == 1 && frac >= 0.5) || (rounding == 0 && frac > 0.5)) {
    i = frac > 0 ? i + 1 : i;
  }
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(i), 0, in - 1);
}

Dense eval_resize2d(const Graph& g, NodeId v, const ExecDesc& e, const std::vector<Dense>& ops) {
  const Geom w = geometry(g, v, e);
  const Dense win = stack_window(g, v, ops, w.pieces);
  if (ops.size() != static_cast<std::size_t>(w.pieces)) fail(g, v, "resize2d operands");
  const std::int64_t out_h = int_attr(g, v, e, "out_h", true, 0);
  const std::int64_t out_w = int_attr(g, v, e, "out_w", true, 0);
  const bool linear = int_attr(g, v, e, "mode", false, 0) == 1;
  const int coord = static_cast<int>(int_attr(g, v, e, "coord", false, 0));
  const int rounding = static_cast<int>(int_attr(g, v, e, "nearest", false, 0));
  const double sh = e.attr("scale_h", static_cast<double>(out_h) / static_cast<double>(w.in_h));
  const double sw = e.attr("scale_w", static_cast<double>(out_w) / static_cast<double>(w.in_w));
  Dense r(e.shape);
  Idx i(4, 0);
  do {
    const std::int64_t n = i[0], c = w.o0 + i[1], oy = w.y0 + i[2], ox = i[3];
    const double ys = resize_source(coord, oy, sh, w.in_h, out_h);
    const double xs = resize_source(coord, ox, sw, w.in_w, out_w);
    double x = 0, acc = 0;
    if (!linear) {
      if (!x_at(g, v, win, w, n, c, resize_nearest(rounding, ys, w.in_h),
                resize_nearest(rounding, xs, w.in_w), x))
        fail(g, v, "resize2d read outside the input");
      r[i] = x;
      continue;
    }
    // Bilinear: the four neighbours of the position clamped into the input.
    const double yc = std::clamp(ys, 0.0, static_cast<double>(w.in_h - 1));
    const double xc = std::clamp(xs, 0.0, static_cast<double>(w.in_w - 1));
    const auto y0 = static_cast<std::int64_t>(yc), x0 = static_cast<std::int64_t>(xc);
    for (std::int64_t dy = 0; dy < 2; ++dy)
      for (std::int64_t dx = 0; dx < 2; ++dx) {
        const double wy = dy ? yc - static_cast<double>(y0) : 1 - (yc - static_cast<double>(y0));
        const double wx = dx ? xc - static_cast<double>(x0) : 1 - (xc - static_cast<double>(x0));
        if (wy == 0 || wx == 0) continue;
        if (!x_at(g, v, win, w, n, c, std::min(y0 + dy, w.in_h - 1), std::min(x0 + dx, w.in_w - 1),
                  x))
          fail(g, v, "resize2d read outside the input");
        acc += wy * wx * x;
      }
    r[i] = acc;
  } while (next_index(i, e.shape));
  return r;
}

// The fused recurrent steps of docs/exec.md, from their equations: unit j of output row b reads
// gate q's unit at column q h + j of its operand's row b (row 0 for a one-row operand).
Dense eval_cell(const Graph& g, NodeId v, const ExecDesc& e, const std::vector<Dense>& ops) {
  const bool gru = e.op == "gru_cell";
  if (gru ? ops.size() != 3 && ops.size() != 4 : ops.size() != 2) fail(g, v, e.op + ": operands");
  const std::int64_t h = e.shape.back();
  Dense r(e.shape);
  const std::int64_t rows = r.numel() / h;
  const auto at = [&](std::size_t k, std::int64_t row, std::int64_t q, std::int64_t j) {
    const Dense& o = ops[k];
    const std::int64_t width = o.shape.back();
    const std::int64_t orow = o.numel() == width ? 0 : row;
    return o.data[static_cast<std::size_t>(orow * width + q * h + j)];
  };
  for (std::int64_t b = 0; b < rows; ++b)
    for (std::int64_t j = 0; j < h; ++j) {
      double y;
      if (e.op == "lstm_cell") {  // gates i, o, f, g
        y = sigmoid(at(0, b, 2, j)) * at(1, b, 0, j) +
            sigmoid(at(0, b, 0, j)) * std::tanh(at(0, b, 3, j));
      } else if (e.op == "lstm_hidden") {
        y = sigmoid(at(0, b, 1, j)) * std::tanh(at(1, b, 0, j));
      } else {  // gates z, r, n; h; Rb_n
        const double z = sigmoid(at(0, b, 0, j) + at(1, b, 0, j));
        const double reset = sigmoid(at(0, b, 1, j) + at(1, b, 1, j));
        const double rb = ops.size() == 4 ? at(3, b, 0, j) : 0.0;
        const double n = std::tanh(at(0, b, 2, j) + reset * (at(1, b, 2, j) + rb));
        y = (1 - z) * n + z * at(2, b, 0, j);
      }
      r.data[static_cast<std::size_t>(b * h + j)] = y;
    }
  return r;
}

Dense eval_node(const Graph& g, NodeId v, const std::vector<Dense>& vals) {
  const ExecDesc& e = *g.node(v).exec;
  const std::string& op = e.op;
  std::vector<Dense> ops;
  for (const ExecInput& in : e.inputs) ops.push_back(operand(g, vals, v, in));
  Dense r(e.shape);
  Idx idx(e.shape.size(), 0);
  if (e.origin.size() != e.shape.size()) fail(g, v, "origin rank differs from shape rank");
  if (op == "input") {
    const auto seed = static_cast<std::uint64_t>(e.attr("seed", -1));
    Idx glob(idx.size());
    do {
      for (std::size_t d = 0; d < idx.size(); ++d) glob[d] = e.origin[d] + idx[d];
      r[idx] = e.attr("offset", 0) + e.attr("scale", 1) * doc_input_unit(seed, glob);
    } while (next_index(idx, e.shape));
  } else if (op == "fill") {
    // docs/exec.md: with causal, value where col - row >= diagonal (default 1: col > row), or
    // <= diagonal with lower, on the last two global coordinates; 0 elsewhere.
    const bool causal = e.attr("causal", 0) != 0, lower = e.attr("lower", 0) != 0;
    const double value = e.attr("value", 0), diagonal = e.attr("diagonal", 1);
    const std::size_t n = idx.size();
    do {
      bool on = !causal;
      if (causal && n >= 2) {
        const auto col = e.origin[n - 1] + idx[n - 1], row = e.origin[n - 2] + idx[n - 2];
        const auto off = static_cast<double>(col - row);
        on = lower ? off <= diagonal : off >= diagonal;
      }
      r[idx] = on ? value : 0.0;
    } while (next_index(idx, e.shape));
  } else if (op == "einsum") {
    r = eval_einsum(g, v, e, ops);
  } else if (op == "sum" || op == "max") {
    for (const Dense& o : ops)
      if (o.shape != e.shape) fail(g, v, "aggregate operand shape");
    for (std::int64_t i = 0; i < r.numel(); ++i) {
      double acc = ops[0].data[static_cast<std::size_t>(i)];
      for (std::size_t j = 1; j < ops.size(); ++j) {
        const double x = ops[j].data[static_cast<std::size_t>(i)];
        acc = op == "sum" ? acc + x : std::max(acc, x);
      }
      r.data[static_cast<std::size_t>(i)] = acc;
    }
  } else if (op == "assemble") {
    std::vector<int> covered(static_cast<std::size_t>(r.numel()), 0);
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const ExecDesc& pe = *g.node(e.inputs[j].src).exec;
      Idx pi(ops[j].shape.size(), 0), dst(pi.size());
      do {
        for (std::size_t d = 0; d < pi.size(); ++d) {
          const auto off = e.inputs[j].offset.empty() ? 0 : e.inputs[j].offset[d];
          dst[d] = pe.origin[d] + off + pi[d] - e.origin[d];
          if (dst[d] < 0 || dst[d] >= e.shape[d]) fail(g, v, "assemble piece outside the block");
        }
        r[dst] = ops[j][pi];
        ++covered[static_cast<std::size_t>(r.at(dst))];
      } while (next_index(pi, ops[j].shape));
    }
    for (int c : covered)
      if (c != 1) fail(g, v, "assemble pieces do not tile the block");
  } else if (op == "load") {
    const double t = e.attr("tensor", -1);
    const auto& cs = g.constants();
    if (t < 0 || t >= static_cast<double>(cs.size()) || t != std::floor(t))
      fail(g, v, "load of a missing constant");
    const ConstantTensor& c = cs[static_cast<std::size_t>(t)];
    if (c.shape.size() != e.shape.size()) fail(g, v, "load rank differs from the constant's");
    for (std::size_t d = 0; d < e.shape.size(); ++d)
      if (e.origin[d] < 0 || e.origin[d] + e.shape[d] > c.shape[d])
        fail(g, v, "load block outside the constant");
    do {
      std::int64_t flat = 0;  // row-major offset of origin + idx in the constant
      for (std::size_t d = 0; d < idx.size(); ++d) flat = flat * c.shape[d] + e.origin[d] + idx[d];
      r[idx] = c.values.at(static_cast<std::size_t>(flat));
    } while (next_index(idx, e.shape));
  } else if (op == "reshape") {
    if (ops.size() != 1 || ops[0].numel() != r.numel()) fail(g, v, "reshape element count");
    r.data = ops[0].data;  // both row-major
  } else if (op == "transpose") {
    const auto arrow = e.einsum.find("->");
    if (ops.size() != 1 || arrow == std::string::npos) fail(g, v, "transpose spec");
    const std::string in = e.einsum.substr(0, arrow), out = e.einsum.substr(arrow + 2);
    if (in.size() != ops[0].shape.size() || out.size() != e.shape.size() || in.size() != out.size())
      fail(g, v, "transpose spec rank");
    for (std::size_t d = 0; d < in.size(); ++d) {
      const auto k = out.find(in[d]);
      if (k == std::string::npos || out.rfind(in[d]) != k || in.rfind(in[d]) != d)
        fail(g, v, "transpose spec is not a permutation");
      if (e.shape[k] != ops[0].shape[d]) fail(g, v, "transpose extents");
    }
    Idx src(in.size());
    do {
      for (std::size_t d = 0; d < in.size(); ++d) {
        src[d] = idx[out.find(in[d])];
      }
      r[idx] = ops[0][src];
    } while (next_index(idx, e.shape));
  } else if (op == "select") {
    if (ops.size() != 1 || ops[0].shape != e.shape) fail(g, v, "select region shape");
    r = ops[0];
  } else if (op == "stride") {
    // docs/exec.md: out[.., i, ..] = x[.., i step, ..] along axis, x[.., R - 1 + i step, ..] when
    // step < 0, R = (out - 1) |step| + 1 the region's extent there.
    const auto ax = static_cast<std::size_t>(e.attr("axis", -1));
    const auto step = static_cast<std::int64_t>(e.attr("step", 0));
    if (ops.size() != 1 || ax >= e.shape.size() || step == 0) fail(g, v, "stride operands");
    Idx want = e.shape;
    want[ax] = (want[ax] - 1) * std::abs(step) + 1;
    if (ops[0].shape != want) fail(g, v, "stride region shape");
    Idx src(idx.size());
    do {
      src = idx;
      src[ax] = step > 0 ? idx[ax] * step : want[ax] - 1 + idx[ax] * step;
      r[idx] = ops[0][src];
    } while (next_index(idx, e.shape));
  } else if (op == "gather") {
    // docs/exec.md: out[p, q] = table[row(idx[p]), q]; row: truncated toward zero, negative
    // counted from the end, clamped into the table.
    if (ops.size() != 2 || ops[0].shape.empty()) fail(g, v, "gather operands");
    const Dense& table = ops[0];
    const Dense& ind = ops[1];
    Idx want = ind.shape;
    want.insert(want.end(), table.shape.begin() + 1, table.shape.end());
    if (want != e.shape) fail(g, v, "gather output shape");
    const std::int64_t rows = table.shape[0];
    do {
      const Idx p(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(ind.shape.size()));
      std::int64_t row = static_cast<std::int64_t>(std::trunc(ind[p]));
      if (row < 0) row += rows;
      Idx t = {std::clamp<std::int64_t>(row, 0, rows - 1)};
      t.insert(t.end(), idx.begin() + static_cast<std::ptrdiff_t>(ind.shape.size()), idx.end());
      r[idx] = table[t];
    } while (next_index(idx, e.shape));
  } else if (op == "gather_along") {
    // docs/exec.md: out[l, j] = table[l, row(idx[l, j])], row as gather's over the last axis.
    if (ops.size() != 2 || ops[0].shape.empty() || ops[1].shape != e.shape ||
        ops[0].shape.size() != e.shape.size() ||
        !std::equal(e.shape.begin(), e.shape.end() - 1, ops[0].shape.begin()))
      fail(g, v, "gather_along operands");
    const std::int64_t n = ops[0].shape.back();
    do {
      std::int64_t j = static_cast<std::int64_t>(std::trunc(ops[1][idx]));
      if (j < 0) j += n;
      Idx t = idx;
      t.back() = std::clamp<std::int64_t>(j, 0, n - 1);
      r[idx] = ops[0][t];
    } while (next_index(idx, e.shape));
  } else if (op == "topk") {
    // docs/exec.md: each row stably sorted (larger first, or smaller with largest = 0; NaN above
    // every number), its first k (the output's last extent) values or indices.
    Idx want = ops.at(0).shape;
    const auto last = want.size() - 1;
    const auto n = want[last], k = e.shape.empty() ? 0 : e.shape[last];
    want[last] = k;
    if (want != e.shape || k < 1 || k > n) fail(g, v, "topk shape");
    const bool largest = e.attr("largest", 1) != 0, indices = e.attr("indices", 0) != 0;
    do {
      if (idx[last] != 0) continue;  // one row at a time, at its first output element
      Idx a = idx;
      std::vector<std::int64_t> order(static_cast<std::size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      const auto value = [&](std::int64_t i) {
        a[last] = i;
        return ops[0][a];
      };
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
        const double vx = value(x), vy = value(y);
        if (std::isnan(vx) || std::isnan(vy))
          return largest ? std::isnan(vx) && !std::isnan(vy) : !std::isnan(vx) && std::isnan(vy);
        return largest ? vx > vy : vx < vy;
      });
      Idx o = idx;
      for (std::int64_t j = 0; j < k; ++j) {
        o[last] = j;
        const std::int64_t i = order[static_cast<std::size_t>(j)];
        r[o] = indices ? static_cast<double>(i) : value(i);
      }
    } while (next_index(idx, e.shape));
  } else if (op == "reduce_argmax") {
    Idx want = ops.at(0).shape;
    const auto last = want.size() - 1;
    const auto k = want[last];
    want[last] = 1;
    if (want != e.shape) fail(g, v, "reduction shape");
    const bool last_tie = e.attr("last", 0) != 0;
    do {  // the first (or last) position of the largest value
      Idx a = idx;
      double best = -std::numeric_limits<double>::infinity();
      std::int64_t at = 0;
      for (a[last] = 0; a[last] < k; ++a[last]) {
        const double x = ops[0][a];
        if (x > best || (last_tie && x == best)) best = x, at = a[last];
      }
      r[idx] = static_cast<double>(at);
    } while (next_index(idx, e.shape));
  } else if (op == "reduce_sum" || op == "reduce_max" || op == "reduce_sumsq") {
    Idx want = ops.at(0).shape;
    const auto last = want.size() - 1;
    const auto k = want[last];
    want[last] = 1;
    if (want != e.shape) fail(g, v, "reduction shape");
    do {
      Idx a = idx;
      double acc = op == "reduce_max" ? -std::numeric_limits<double>::infinity() : 0;
      for (a[last] = 0; a[last] < k; ++a[last]) {
        const double x = ops[0][a];
        acc = op == "reduce_sum" ? acc + x : op == "reduce_max" ? std::max(acc, x) : acc + x * x;
      }
      r[idx] = acc;
    } while (next_index(idx, e.shape));
  } else if (op == "conv2d") {
    r = eval_conv2d(g, v, e, ops);
  } else if (op == "maxpool2d" || op == "avgpool2d") {
    r = eval_pool2d(g, v, e, ops);
  } else if (op == "conv_transpose2d") {
    r = eval_conv_transpose2d(g, v, e, ops);
  } else if (op == "resize2d") {
    r = eval_resize2d(g, v, e, ops);
  } else if (op == "rotary") {
    if (ops.size() != 1 || ops[0].shape != e.shape) fail(g, v, "rotary operand shape");
    const auto pa = static_cast<std::size_t>(e.attr("pos_axis", -1));
    const double theta = e.attr("theta", 0), hd = e.attr("head_dim", 0);
    const double sign = e.attr("inverse", 0) != 0 ? -1 : 1;
    const auto last = e.shape.size() - 1;
    if (e.origin[last] % 2 || e.shape[last] % 2) fail(g, v, "rotary block splits a pair");
    do {
      if (idx[last] % 2) continue;
      const double pair = static_cast<double>((e.origin[last] + idx[last]) / 2);
      const double pos = static_cast<double>(e.origin[pa] + idx[pa]);
      const double ang = sign * pos * std::pow(theta, -2 * pair / hd);
      Idx j = idx;
      j[last] += 1;
      const double x0 = ops[0][idx], x1 = ops[0][j];
      r[idx] = x0 * std::cos(ang) - x1 * std::sin(ang);
      r[j] = x0 * std::sin(ang) + x1 * std::cos(ang);
    } while (next_index(idx, e.shape));
  } else if (op == "expand") {
    if (ops.size() != 1 || ops[0].shape.size() > e.shape.size()) fail(g, v, "expand operand");
    for (std::size_t d = 0; d < ops[0].shape.size(); ++d) {
      const auto od = e.shape[e.shape.size() - ops[0].shape.size() + d];
      if (ops[0].shape[d] != 1 && ops[0].shape[d] != od) fail(g, v, "expand does not broadcast");
    }
    do {
      r[idx] = ops[0][broadcast_index(idx, ops[0].shape)];
    } while (next_index(idx, e.shape));
  } else if (op == "cumsum") {
    if (ops.size() != 1 || ops[0].shape != e.shape || e.shape.empty())
      fail(g, v, "cumsum operand shape");
    const bool exclusive = e.attr("exclusive", 0) != 0, reverse = e.attr("reverse", 0) != 0;
    const auto last = e.shape.size() - 1;
    do {  // each output: the sum of its row's elements before it (after it when reverse)
      Idx j = idx;
      double acc = 0;
      for (j[last] = 0; j[last] < e.shape[last]; ++j[last]) {
        const bool before = reverse ? j[last] > idx[last] : j[last] < idx[last];
        if (before || (!exclusive && j[last] == idx[last])) acc += ops[0][j];
      }
      r[idx] = acc;
    } while (next_index(idx, e.shape));
  } else if (op == "lstm_cell" || op == "lstm_hidden" || op == "gru_cell") {
    r = eval_cell(g, v, e, ops);
  } else if (ops.size() == 1) {
    if (ops[0].shape != e.shape) fail(g, v, "unary operand shape");
    for (std::int64_t i = 0; i < r.numel(); ++i)
      r.data[static_cast<std::size_t>(i)] = unary(op, ops[0].data[static_cast<std::size_t>(i)], e);
  } else if (ops.size() == 2 || op == "where") {
    if (ops.size() != (op == "where" ? 3u : 2u)) fail(g, v, op + ": operand count");
    for (const Dense& o : ops) {
      if (o.shape.size() > e.shape.size()) fail(g, v, "operand rank above output rank");
      for (std::size_t d = 0; d < o.shape.size(); ++d) {
        const auto od = e.shape[e.shape.size() - o.shape.size() + d];
        if (o.shape[d] != 1 && o.shape[d] != od) fail(g, v, "operand does not broadcast");
      }
    }
    do {
      const double a = ops[0][broadcast_index(idx, ops[0].shape)];
      const double b = ops[1][broadcast_index(idx, ops[1].shape)];
      r[idx] = op == "where" ? (a != 0 ? b : ops[2][broadcast_index(idx, ops[2].shape)])
                             : binary(op, a, b, e);
    } while (next_index(idx, e.shape));
  } else {
    fail(g, v, "unknown kernel " + op);
  }
  return r;
}

}  // namespace

Dense::Dense(std::vector<std::int64_t> s, double fill)
    : shape(std::move(s)), data(static_cast<std::size_t>(count(shape)), fill) {}

std::int64_t Dense::numel() const {
  return count(shape);
}

std::int64_t Dense::at(const std::vector<std::int64_t>& idx) const {
  std::int64_t f = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

double doc_input_unit(std::uint64_t seed, const std::vector<std::int64_t>& coord) {
  std::uint64_t h = mix(seed);
  for (auto c : coord) h = mix(h ^ static_cast<std::uint64_t>(c));
  return static_cast<double>(h >> 11) / 4503599627370496.0 - 1.0;  // 2^52
}

std::vector<Dense> evaluate_blocks(const Graph& g, bool round_f32) {
  std::vector<Dense> vals(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v : g.topo_order()) {
    if (!g.node(v).exec) continue;
    Dense r = eval_node(g, v, vals);
    if (round_f32)
      for (double& x : r.data) x = static_cast<double>(static_cast<float>(x));
    vals[static_cast<std::size_t>(v)] = std::move(r);
  }
  return vals;
}

Dense assemble_tensor(const Graph& g, const std::vector<Dense>& values, const std::string& name) {
  std::vector<NodeId> blocks;
  for (const std::string& prefix : {"agg:" + name + "[", name + "["}) {
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      if (g.node(v).name.rfind(prefix, 0) == 0) blocks.push_back(v);
    if (!blocks.empty()) break;
  }
  if (blocks.empty()) throw std::runtime_error("no blocks for tensor " + name);
  Idx shape;
  for (NodeId v : blocks) {
    const ExecDesc& e = *g.node(v).exec;
    shape.resize(e.shape.size(), 0);
    for (std::size_t d = 0; d < e.shape.size(); ++d)
      shape[d] = std::max(shape[d], e.origin[d] + e.shape[d]);
  }
  Dense full(shape);
  std::vector<int> covered(static_cast<std::size_t>(full.numel()), 0);
  for (NodeId v : blocks) {
    const ExecDesc& e = *g.node(v).exec;
    const Dense& b = values[static_cast<std::size_t>(v)];
    Idx i(e.shape.size(), 0), gi(e.shape.size());
    do {
      for (std::size_t d = 0; d < i.size(); ++d) gi[d] = e.origin[d] + i[d];
      full[gi] = b[i];
      ++covered[static_cast<std::size_t>(full.at(gi))];
    } while (next_index(i, e.shape));
  }
  for (int c : covered)
    if (c != 1) throw std::runtime_error("blocks of " + name + " do not tile it exactly once");
  return full;
}

double relative_error(const Dense& a, const Dense& b) {
  if (a.shape != b.shape) return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    num += (a.data[i] - b.data[i]) * (a.data[i] - b.data[i]);
    den += b.data[i] * b.data[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
}

}  // namespace doppler::test
