// The conv_transpose2d kernel (docs/exec.md): per batch element and run of output channels in
// one group, one SGEMM of the packed weight [(o, ky, kx), ci] by the window [ci, rows in_w] gives
// every kernel position's contribution of every window pixel; each output element then adds the
// contributions that land on it (dev::col2im_element, shared with the device path).
#include <algorithm>
#include <string>

#include <cblas.h>
#include <climits>

#include "plan.hpp"

#include "doppler/util/error.hpp"

namespace doppler::engine_detail {

namespace {

using I64 = std::int64_t;

[[noreturn]] void fail(const ExecDesc& e, const std::string& why) {
  throw InputError(e.op + ": " + why);
}

// Every input row that reaches one of the block's output rows lies in the window.
void check_rows(const ExecDesc& e, const WindowPlan& w) {
  for (I64 y = 0; y < w.oh; ++y)
    for (I64 ky = 0; ky < w.kh; ++ky) {
      const I64 t = w.y0 + y + w.ph - ky * w.dh;
      if (t < 0 || t % w.sh != 0 || t / w.sh >= w.in_h) continue;
      const I64 iy = t / w.sh;
      if (iy < w.row0 || iy >= w.row0 + w.rows)
        fail(e, "input row " + std::to_string(iy) + " is not in the window (rows " +
                    std::to_string(w.row0) + " .. " + std::to_string(w.row0 + w.rows - 1) + ")");
    }
}

// The weight [cb, icg, kh, kw] packed at `wp` as [cb, kh, kw, icg]: the GEMM's rows (o, ky, kx).
void pack_weight(const KernelPlan& k, const float* const* inputs, float* wp) {
  const WindowPlan& w = k.window;
  const View& v = k.in[static_cast<std::size_t>(w.pieces)];
  const Dims shape = {w.cb, w.kh, w.kw, w.icg};
  const Dims src = {v.strides[0], v.strides[2], v.strides[3], v.strides[1]};
  copy_strided(inputs[w.pieces] + v.offset, src, wp, contiguous_strides(shape), shape);
}

}  // namespace

void fill_conv_bias(const KernelPlan& k, const float* const* inputs, float* out) {
  const WindowPlan& w = k.window;
  const View* bv = w.bias ? &k.in[static_cast<std::size_t>(w.pieces) + 1] : nullptr;
  const I64 plane = w.oh * w.ow;
  for (I64 o = 0; o < w.cb; ++o) {
    const float b = bv ? inputs[w.pieces + 1][bv->offset + o * bv->strides[0]] : 0.0f;
    for (I64 n = 0; n < w.nb; ++n) std::fill_n(out + (n * w.cb + o) * plane, plane, b);
  }
}

void plan_conv_transpose(const ExecDesc& e, KernelPlan& k) {
  WindowPlan& w = k.window;
  check_conv_weight(e, k, w);
  check_rows(e, w);
  if (w.pieces == 1 && (k.in[0].strides[3] != 1 || k.in[0].strides[2] != w.in_w))
    fail(e, "the window's rows must be contiguous");
  const I64 run = longest_group_run(w), ncol = w.rows * w.in_w;
  const I64 ld_in = w.pieces > 1 ? ncol : k.in[0].strides[1];
  for (I64 x : {run * w.kh * w.kw, ncol, w.icg, ld_in})
    if (x > INT_MAX) fail(e, "block too large for 32-bit BLAS");
  w.scratch += w.cb * w.kh * w.kw * w.icg + run * w.kh * w.kw * ncol;
  k.op = KernelOp::conv_transpose2d;
  const double macs = static_cast<double>(w.icg * w.kh * w.kw) / static_cast<double>(w.sh * w.sw);
  k.flops = static_cast<double>(k.numel) * (2 * macs + (w.bias ? 1 : 0));
}

void run_conv_transpose(const KernelPlan& k, const float* const* inputs, float* out,
                        std::vector<float>& scratch) {
  const WindowPlan& w = k.window;
  if (scratch.size() < static_cast<std::size_t>(w.scratch))
    scratch.resize(static_cast<std::size_t>(w.scratch));
  float* s = scratch.data();
  const WindowRef win = window_ref(k, inputs, s);
  float* wp = s;
  pack_weight(k, inputs, wp);
  float* cols = wp + w.cb * w.kh * w.kw * w.icg;
  fill_conv_bias(k, inputs, out);
  const I64 plane = w.oh * w.ow, ncol = w.rows * w.in_w, kk = w.kh * w.kw;
  dev::Col2imArgs a;
  a.w = device_window(w, win.sn, win.sc, win.sy);
  for (I64 n = 0; n < w.nb; ++n)
    for (I64 o = 0; o < w.cb;) {  // runs [o, end) of output channels in one group
      const I64 g = (w.o0 + o) / w.out_per_group;
      const I64 end = std::min(w.cb, (g + 1) * w.out_per_group - w.o0);
      const float* x = win.p + n * win.sn + (g * w.icg - w.c0) * win.sc;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>((end - o) * kk),
                  static_cast<int>(ncol), static_cast<int>(w.icg), 1.0f, wp + o * kk * w.icg,
                  static_cast<int>(w.icg), x, static_cast<int>(win.sc), 0.0f, cols,
                  static_cast<int>(ncol));
      float* dst = out + (n * w.cb + o) * plane;
      a.n = (end - o) * plane;
      for (I64 i = 0; i < a.n; ++i) dev::col2im_element(a, i, cols, dst);
      o = end;
    }
}

}  // namespace doppler::engine_detail
