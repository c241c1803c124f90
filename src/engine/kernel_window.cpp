// Windowed NCHW kernels (docs/exec.md): conv2d as im2col + SGEMM per (batch element, run of
// output channels in one group), or a direct loop when the run is short (depthwise convs);
// max and average pooling as direct loops. The window is read in place when it is one operand
// and gathered into scratch when it comes in several pieces.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <cblas.h>
#include <climits>

#include "plan.hpp"

#include "doppler/util/error.hpp"

// As in kernels.cpp: let GCC if-convert the float max of the pooling loops.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

namespace doppler::engine_detail {

namespace {

using I64 = std::int64_t;

// Runs of fewer output channels of one group than this take the direct loop, not SGEMM.
constexpr I64 kMinGemmRows = 8;
// Largest value an integer attribute may take.
constexpr double kMaxAttr = INT_MAX;

[[noreturn]] void fail(const ExecDesc& e, const std::string& why) {
  throw InputError(e.op + ": " + why);
}

bool has_attr(const ExecDesc& e, const std::string& name) {
  return std::any_of(e.attrs.begin(), e.attrs.end(),
                     [&](const auto& a) { return a.first == name; });
}

// 0 or 1 attribute `name` (default 0).
bool flag_attr(const ExecDesc& e, const std::string& name) {
  const I64 x = window_attr(e, name, false, 0, 0);
  if (x > 1) fail(e, "attribute '" + name + "' must be 0 or 1");
  return x == 1;
}

// Global input row of output row y (local) at kernel row ky.
I64 in_row(const WindowPlan& w, I64 y, I64 ky) {
  return (w.y0 + y) * w.sh - w.ph + ky * w.dh;
}

// Output columns [lo, hi) whose input column x sw + off (off = kx dw - pw) lies in the input.
struct Cols {
  I64 lo = 0, hi = 0, off = 0;
};

Cols cols_of(const WindowPlan& w, I64 kx) {
  Cols c;
  c.off = kx * w.dw - w.pw;
  c.lo = c.off >= 0 ? 0 : (-c.off + w.sw - 1) / w.sw;
  const I64 last = w.in_w - 1 - c.off;  // largest x sw
  c.hi = last < 0 ? 0 : std::min(w.ow, last / w.sw + 1);
  c.lo = std::min(c.lo, c.hi);
  return c;
}

void read_geometry(const ExecDesc& e, bool conv, WindowPlan& w) {
  w.sh = window_attr(e, "stride_h", false, 1, 1);
  w.sw = window_attr(e, "stride_w", false, 1, 1);
  w.ph = window_attr(e, "pad_h", false, 0, 0);
  w.pw = window_attr(e, "pad_w", false, 0, 0);
  w.dh = window_attr(e, "dil_h", false, 1, 1);
  w.dw = window_attr(e, "dil_w", false, 1, 1);
  if (conv) {
    w.out_per_group = window_attr(e, "out_per_group", true, 1, 1);
    w.bias = flag_attr(e, "bias");
  } else {
    w.kh = window_attr(e, "kernel_h", true, 1, 1);
    w.kw = window_attr(e, "kernel_w", true, 1, 1);
  }
  if (e.op == "avgpool2d") {
    w.include_pad = flag_attr(e, "count_include_pad");
    if (w.dh != 1 || w.dw != 1) fail(e, "dilation must be 1");
  }
}

void check_output(const ExecDesc& e, WindowPlan& w) {
  if (e.shape.size() != 4) fail(e, "the output block must be 4-D [nb, cb, ohb, OW]");
  if (e.origin[3] != 0) fail(e, "the output block must span the whole width (origin[3] = 0)");
  w.nb = e.shape[0], w.cb = e.shape[1], w.oh = e.shape[2], w.ow = e.shape[3];
  w.o0 = e.origin[1], w.y0 = e.origin[2];
}

// The window pieces: [nb, cw, r_i, in_w] each, stacked rows inside the input.
void check_pieces(const ExecDesc& e, const KernelPlan& k, std::size_t extra, WindowPlan& w) {
  const auto want = static_cast<std::size_t>(w.pieces) + extra;
  if (k.in.size() != want)
    fail(e, "needs " + std::to_string(want) + " operands, has " + std::to_string(k.in.size()));
  w.cw = k.in[0].shape.size() == 4 ? k.in[0].shape[1] : 0;
  w.rows = 0;
  for (I64 j = 0; j < w.pieces; ++j) {
    const Dims& s = k.in[static_cast<std::size_t>(j)].shape;
    if (s.size() != 4 || s[0] != w.nb || s[1] != w.cw || s[3] != w.in_w)
      fail(e, "window piece " + std::to_string(j) + " is not [nb, cw, rows, in_w] = [" +
                  std::to_string(w.nb) + ", " + std::to_string(w.cw) + ", rows, " +
                  std::to_string(w.in_w) + "]");
    w.rows += s[2];
  }
  if (w.row0 + w.rows > w.in_h) fail(e, "window rows beyond in_h");
}

// Every input row a window position reads lies in the window; pools also need one row and one
// column inside the input per output element.
void check_coverage(const ExecDesc& e, WindowPlan& w, bool pool) {
  for (I64 y = 0; y < w.oh; ++y) {
    bool inside = false;
    for (I64 ky = 0; ky < w.kh; ++ky) {
      const I64 iy = in_row(w, y, ky);
      if (iy < 0 || iy >= w.in_h) continue;
      inside = true;
      if (iy < w.row0 || iy >= w.row0 + w.rows)
        fail(e, "input row " + std::to_string(iy) + " is not in the window (rows " +
                    std::to_string(w.row0) + " .. " + std::to_string(w.row0 + w.rows - 1) + ")");
    }
    if (pool && !inside) fail(e, "output row " + std::to_string(w.y0 + y) + " reads only padding");
  }
  w.col_count.assign(static_cast<std::size_t>(w.ow), 0);
  for (I64 kx = 0; kx < w.kw; ++kx) {
    const Cols c = cols_of(w, kx);
    w.col_lo.push_back(c.lo), w.col_hi.push_back(c.hi), w.col_off.push_back(c.off);
    for (I64 x = c.lo; x < c.hi; ++x) ++w.col_count[static_cast<std::size_t>(x)];
  }
  if (pool)
    for (I64 x = 0; x < w.ow; ++x)
      if (w.col_count[static_cast<std::size_t>(x)] == 0)
        fail(e, "output column " + std::to_string(x) + " reads only padding");
}

void check_weight(const ExecDesc& e, const KernelPlan& k, WindowPlan& w) {
  const View& wt = k.in[static_cast<std::size_t>(w.pieces)];
  if (wt.shape.size() != 4 || wt.shape[0] != w.cb)
    fail(e, "the weight must be [cb, icg, KH, KW] with cb = " + std::to_string(w.cb));
  w.icg = wt.shape[1], w.kh = wt.shape[2], w.kw = wt.shape[3];
  w.pack_weight = wt.strides[3] != 1 || wt.strides[2] != w.kw || wt.strides[1] != w.kh * w.kw;
  if (w.bias) {
    const View& b = k.in[static_cast<std::size_t>(w.pieces) + 1];
    if (b.shape != Dims{w.cb}) fail(e, "the bias must be [cb] = [" + std::to_string(w.cb) + "]");
  }
  const I64 g0 = w.o0 / w.out_per_group, g1 = (w.o0 + w.cb - 1) / w.out_per_group;
  const I64 lo = g0 * w.icg, hi = (g1 + 1) * w.icg;
  if (lo < w.c0 || hi > w.c0 + w.cw)
    fail(e, "input channels " + std::to_string(lo) + " .. " + std::to_string(hi - 1) +
                " of the output channels are not in the window (channels " + std::to_string(w.c0) +
                " .. " + std::to_string(w.c0 + w.cw - 1) + ")");
}

// Longest run of output channels of the block in one group.
I64 longest_run(const WindowPlan& w) {
  I64 best = 0;
  for (I64 o = 0; o < w.cb;) {
    const I64 end = std::min(w.cb, ((w.o0 + o) / w.out_per_group + 1) * w.out_per_group - w.o0);
    best = std::max(best, end - o);
    o = end;
  }
  return best;
}

void plan_conv(const ExecDesc& e, KernelPlan& k, WindowPlan& w) {
  check_weight(e, k, w);
  const I64 kk = w.icg * w.kh * w.kw, n = w.oh * w.ow;
  const bool gemm = longest_run(w) >= kMinGemmRows;
  w.direct_1x1 = w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && w.ph == 0 && w.pw == 0 &&
                 w.ow == w.in_w && w.y0 + w.oh <= w.in_h &&
                 (w.pieces > 1 || k.in[0].strides[2] == w.in_w);
  w.scratch += (w.pack_weight ? w.cb * kk : 0) + (gemm && !w.direct_1x1 ? kk * n : 0);
  const I64 ld_in = w.pieces > 1 ? w.rows * w.in_w : k.in[0].strides[1];
  for (I64 x : {kk, n, w.cb, ld_in, k.in[static_cast<std::size_t>(w.pieces)].strides[0]})
    if (x > INT_MAX) fail(e, "block too large for 32-bit BLAS");
  k.op = KernelOp::conv2d;
  k.flops = static_cast<double>(k.numel) * static_cast<double>(2 * kk + (w.bias ? 1 : 0));
}

void plan_pool(const ExecDesc& e, KernelPlan& k, WindowPlan& w) {
  if (w.c0 != w.o0 || w.cw != w.cb)
    fail(e, "channels map one to one: c0 must equal o0 and the window have cb channels");
  k.op = e.op == "maxpool2d" ? KernelOp::maxpool2d : KernelOp::avgpool2d;
  k.flops = static_cast<double>(k.numel) * static_cast<double>(w.kh * w.kw);
}

// ---- running ----

// The planned column range of kernel column kx.
Cols cols_at(const WindowPlan& w, I64 kx) {
  const auto i = static_cast<std::size_t>(kx);
  return {w.col_lo[i], w.col_hi[i], w.col_off[i]};
}

using Win = WindowRef;

// The window in place (one piece) or gathered at `s` (advanced past it).
Win window_of(const KernelPlan& k, const float* const* inputs, float*& s) {
  const WindowPlan& w = k.window;
  if (w.pieces == 1) {
    const View& v = k.in[0];
    return {inputs[0] + v.offset, v.strides[0], v.strides[1], v.strides[2]};
  }
  const Dims ws = contiguous_strides({w.nb, w.cw, w.rows, w.in_w});
  I64 row = 0;
  for (std::size_t j = 0; j < static_cast<std::size_t>(w.pieces); ++j) {
    const View& v = k.in[j];
    copy_strided(inputs[j] + v.offset, v.strides, s + row * ws[2], ws, v.shape);
    row += v.shape[2];
  }
  const Win win{s, ws[0], ws[1], ws[2]};
  s += w.nb * ws[0];
  return win;
}

// The weight [cb, icg kh kw] with its row stride: in place, or packed at `s` (advanced).
const float* weight_of(const KernelPlan& k, const float* const* inputs, float*& s, I64& ld) {
  const WindowPlan& w = k.window;
  const View& v = k.in[static_cast<std::size_t>(w.pieces)];
  const float* p = inputs[w.pieces] + v.offset;
  ld = v.strides[0];
  if (!w.pack_weight) return p;
  const Dims shape = {w.cb, w.icg, w.kh, w.kw};
  copy_strided(p, v.strides, s, contiguous_strides(shape), shape);
  ld = w.icg * w.kh * w.kw;
  p = s;
  s += w.cb * ld;
  return p;
}

// plane[y, x] += value of the window row at every column a kernel column reads: the direct
// loop's inner step, vectorised when the stride is 1.
void axpy_row(const WindowPlan& w, float wv, const float* row, const Cols& c, float* o) {
  if (w.sw == 1) {
    for (I64 x = c.lo; x < c.hi; ++x) o[x] += wv * row[x + c.off];
  } else {
    for (I64 x = c.lo; x < c.hi; ++x) o[x] += wv * row[x * w.sw + c.off];
  }
}

// One output plane [oh, ow] += the convolution of the group's icg channels at `x` with the
// weight row `wt` [icg, kh, kw] (the plane starts at the bias or 0).
void conv_plane_direct(const WindowPlan& w, const Win& win, const float* x, const float* wt,
                       float* plane) {
  for (I64 ci = 0; ci < w.icg; ++ci)
    for (I64 ky = 0; ky < w.kh; ++ky)
      for (I64 y = 0; y < w.oh; ++y) {
        const I64 iy = in_row(w, y, ky);
        if (iy < 0 || iy >= w.in_h) continue;
        const float* row = x + ci * win.sc + (iy - w.row0) * win.sy;
        for (I64 kx = 0; kx < w.kw; ++kx)
          axpy_row(w, wt[(ci * w.kh + ky) * w.kw + kx], row, cols_at(w, kx), plane + y * w.ow);
      }
}

// cols[(ci kh + ky) kw + kx, y ow + x] = X of the group's channels at `x`, 0 on padding.
void im2col(const WindowPlan& w, const Win& win, const float* x, float* cols) {
  const I64 n = w.oh * w.ow;
  for (I64 ci = 0; ci < w.icg; ++ci)
    for (I64 ky = 0; ky < w.kh; ++ky)
      for (I64 kx = 0; kx < w.kw; ++kx) {
        float* dst = cols + ((ci * w.kh + ky) * w.kw + kx) * n;
        const Cols c = cols_at(w, kx);
        for (I64 y = 0; y < w.oh; ++y) {
          float* d = dst + y * w.ow;
          const I64 iy = in_row(w, y, ky);
          if (iy < 0 || iy >= w.in_h) {
            std::fill(d, d + w.ow, 0.0f);
            continue;
          }
          const float* row = x + ci * win.sc + (iy - w.row0) * win.sy;
          std::fill(d, d + c.lo, 0.0f);
          for (I64 i = c.lo; i < c.hi; ++i) d[i] = row[i * w.sw + c.off];
          std::fill(d + c.hi, d + w.ow, 0.0f);
        }
      }
}

// Output channels [o, end) of one group as one SGEMM: weight rows x (im2col'd) window.
void conv_run_gemm(const WindowPlan& w, const Win& win, const float* x, const float* wt, I64 ldw,
                   I64 m, bool accumulate, float* cols, float* out) {
  const I64 n = w.oh * w.ow, kk = w.icg * w.kh * w.kw;
  const float* b = cols;
  I64 ldb = n;
  if (w.direct_1x1) {
    b = x + (w.y0 - w.row0) * win.sy;
    ldb = win.sc;
  } else {
    im2col(w, win, x, cols);
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(kk), 1.0f, wt, static_cast<int>(ldw), b, static_cast<int>(ldb),
              accumulate ? 1.0f : 0.0f, out, static_cast<int>(n));
}

// The worker's scratch, grown to at least `floats` floats.
float* grown(std::vector<float>& scratch, I64 floats) {
  if (scratch.size() < static_cast<std::size_t>(floats))
    scratch.resize(static_cast<std::size_t>(floats));
  return scratch.data();
}

void run_conv(const KernelPlan& k, const float* const* inputs, float* out,
              std::vector<float>& scratch) {
  const WindowPlan& w = k.window;
  float* s = grown(scratch, w.scratch);
  const Win win = window_of(k, inputs, s);
  I64 ldw = 0;
  const float* wt = weight_of(k, inputs, s, ldw);
  const I64 plane = w.oh * w.ow;
  fill_conv_bias(k, inputs, out);
  for (I64 n = 0; n < w.nb; ++n)
    for (I64 o = 0; o < w.cb;) {  // runs [o, end) of output channels in one group
      const I64 g = (w.o0 + o) / w.out_per_group;
      const I64 end = std::min(w.cb, (g + 1) * w.out_per_group - w.o0);
      const float* x = win.p + n * win.sn + (g * w.icg - w.c0) * win.sc;
      float* dst = out + (n * w.cb + o) * plane;
      if (end - o >= kMinGemmRows) {
        conv_run_gemm(w, win, x, wt + o * ldw, ldw, end - o, w.bias, s, dst);
      } else {
        for (I64 j = o; j < end; ++j)
          conv_plane_direct(w, win, x, wt + j * ldw, dst + (j - o) * plane);
      }
      o = end;
    }
}

float larger(float a, float b) {
  return a < b ? b : a;
}

// One output plane [oh, ow] pooled from the window channel at `x`.
void pool_plane(const WindowPlan& w, const Win& win, const float* x, bool is_max, float* plane) {
  const float init = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (I64 y = 0; y < w.oh; ++y) {
    float* o = plane + y * w.ow;
    std::fill(o, o + w.ow, init);
    I64 rows_in = 0;
    for (I64 ky = 0; ky < w.kh; ++ky) {
      const I64 iy = in_row(w, y, ky);
      if (iy < 0 || iy >= w.in_h) continue;
      ++rows_in;
      const float* row = x + (iy - w.row0) * win.sy;
      for (I64 kx = 0; kx < w.kw; ++kx) {
        const Cols c = cols_at(w, kx);
        if (is_max) {
          for (I64 i = c.lo; i < c.hi; ++i) o[i] = larger(o[i], row[i * w.sw + c.off]);
        } else {
          for (I64 i = c.lo; i < c.hi; ++i) o[i] += row[i * w.sw + c.off];
        }
      }
    }
    if (is_max) continue;
    for (I64 i = 0; i < w.ow; ++i) {
      const I64 count =
          w.include_pad ? w.kh * w.kw : rows_in * w.col_count[static_cast<std::size_t>(i)];
      o[i] /= static_cast<float>(count);
    }
  }
}

void run_pool(const KernelPlan& k, const float* const* inputs, float* out,
              std::vector<float>& scratch) {
  const WindowPlan& w = k.window;
  float* s = grown(scratch, w.scratch);
  const Win win = window_of(k, inputs, s);
  const bool is_max = k.op == KernelOp::maxpool2d;
  for (I64 n = 0; n < w.nb; ++n)
    for (I64 o = 0; o < w.cb; ++o)
      pool_plane(w, win, win.p + n * win.sn + o * win.sc, is_max,
                 out + (n * w.cb + o) * w.oh * w.ow);
}

}  // namespace

I64 window_attr(const ExecDesc& e, const std::string& name, bool required, I64 fallback, I64 min) {
  if (!has_attr(e, name)) {
    if (required) fail(e, "attribute '" + name + "' is required");
    return fallback;
  }
  const double x = e.attr(name, 0);
  if (!(x >= static_cast<double>(min)) || x > kMaxAttr || x != std::floor(x))
    fail(e, "attribute '" + name + "' must be an integer >= " + std::to_string(min));
  return static_cast<I64>(x);
}

void read_window(const ExecDesc& e, const KernelPlan& k, std::size_t extra, WindowPlan& w) {
  w.pieces = window_attr(e, "pieces", true, 1, 1);
  w.row0 = window_attr(e, "row0", true, 0, 0);
  w.c0 = window_attr(e, "c0", true, 0, 0);
  w.in_h = window_attr(e, "in_h", true, 1, 1);
  w.in_w = window_attr(e, "in_w", true, 1, 1);
  check_output(e, w);
  check_pieces(e, k, extra, w);
}

WindowRef window_ref(const KernelPlan& k, const float* const* inputs, float*& s) {
  return window_of(k, inputs, s);
}

void check_conv_weight(const ExecDesc& e, const KernelPlan& k, WindowPlan& w) {
  check_weight(e, k, w);
}

I64 longest_group_run(const WindowPlan& w) {
  return longest_run(w);
}

void plan_window(const ExecDesc& e, KernelPlan& k) {
  WindowPlan& w = k.window;
  const bool transposed = e.op == "conv_transpose2d";
  const bool conv = e.op == "conv2d" || transposed;
  read_geometry(e, conv, w);
  read_window(e, k, conv ? 1 + static_cast<std::size_t>(w.bias) : 0, w);
  w.scratch += w.pieces > 1 ? w.nb * w.cw * w.rows * w.in_w : 0;
  if (transposed) return plan_conv_transpose(e, k);
  if (conv) plan_conv(e, k, w);
  check_coverage(e, w, !conv);
  if (!conv) plan_pool(e, k, w);
}

void run_window(const KernelPlan& k, const float* const* inputs, float* out,
                std::vector<float>& scratch) {
  if (k.op == KernelOp::conv2d) {
    run_conv(k, inputs, out, scratch);
  } else if (k.op == KernelOp::conv_transpose2d) {
    run_conv_transpose(k, inputs, out, scratch);
  } else {
    run_pool(k, inputs, out, scratch);
  }
}

}  // namespace doppler::engine_detail
