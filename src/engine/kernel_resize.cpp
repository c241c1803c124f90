// The resize2d kernel (docs/exec.md): nearest or linear resizing of an NCHW window, rows and
// columns by ONNX's coordinate transformations (doppler/graph/resize_coords.hpp). The column taps
// are computed once when the plan is compiled; each output row then reads one or two window rows.
#include <cmath>
#include <string>

#include "plan.hpp"

#include "doppler/util/error.hpp"

namespace doppler::engine_detail {

namespace {

using I64 = std::int64_t;

[[noreturn]] void fail(const ExecDesc& e, const std::string& why) {
  throw InputError(e.op + ": " + why);
}

// Attribute `name` in [0, max] (default 0).
int choice_attr(const ExecDesc& e, const std::string& name, int max) {
  const I64 x = window_attr(e, name, false, 0, 0);
  if (x > max) fail(e, "attribute '" + name + "' must be 0 .. " + std::to_string(max));
  return static_cast<int>(x);
}

// Scale attribute `name` (> 0, finite), `out / in` when absent.
double scale_attr(const ExecDesc& e, const std::string& name, I64 in, I64 out) {
  const double fallback = static_cast<double>(out) / static_cast<double>(in);
  const double s = e.attr(name, fallback);
  if (!(s > 0) || !std::isfinite(s)) fail(e, "attribute '" + name + "' must be positive");
  return s;
}

void read_resize(const ExecDesc& e, WindowPlan& w) {
  w.linear = choice_attr(e, "mode", 1) == 1;
  const auto coord = static_cast<resize::Coord>(choice_attr(e, "coord", resize::kMaxCoord));
  w.rounding = static_cast<resize::Rounding>(choice_attr(e, "nearest", resize::kMaxRounding));
  const I64 out_h = window_attr(e, "out_h", true, 1, 1);
  const I64 out_w = window_attr(e, "out_w", true, 1, 1);
  w.ay = {coord, scale_attr(e, "scale_h", w.in_h, out_h), w.in_h, out_h};
  w.ax = {coord, scale_attr(e, "scale_w", w.in_w, out_w), w.in_w, out_w};
  if (w.c0 != w.o0 || w.cw != w.cb)
    fail(e, "channels map one to one: c0 must equal o0 and the window have cb channels");
  if (w.ow != out_w) fail(e, "the output block must span the whole width out_w");
  if (w.y0 + w.oh > out_h) fail(e, "output rows beyond out_h");
}

// The window holds every input row the block's output rows read.
void check_rows(const ExecDesc& e, const WindowPlan& w) {
  const resize::Span s = resize::input_span(w.ay, w.linear, w.rounding, w.y0, w.y0 + w.oh);
  if (s.lo < w.row0 || s.hi > w.row0 + w.rows)
    fail(e, "input rows " + std::to_string(s.lo) + " .. " + std::to_string(s.hi - 1) +
                " are not all in the window (rows " + std::to_string(w.row0) + " .. " +
                std::to_string(w.row0 + w.rows - 1) + ")");
}

// Per output column: the input columns it reads (col_lo, col_hi) and the weight of col_hi.
void plan_columns(WindowPlan& w) {
  for (I64 x = 0; x < w.ow; ++x) {
    if (w.linear) {
      const resize::Taps t = resize::linear(w.ax, x);
      w.col_lo.push_back(t.i0), w.col_hi.push_back(t.i1);
      w.col_w.push_back(static_cast<float>(t.w1));
    } else {
      const I64 i = resize::nearest(w.ax, w.rounding, x);
      w.col_lo.push_back(i), w.col_hi.push_back(i);
    }
  }
}

// The window channel at `x` (row iy at x + (iy - row0) sy): one output plane [oh, ow].
void resize_plane(const WindowPlan& w, const float* x, I64 sy, float* plane) {
  for (I64 y = 0; y < w.oh; ++y) {
    float* o = plane + y * w.ow;
    const I64 gy = w.y0 + y;
    if (!w.linear) {
      const float* row = x + (resize::nearest(w.ay, w.rounding, gy) - w.row0) * sy;
      for (I64 i = 0; i < w.ow; ++i) o[i] = row[w.col_lo[static_cast<std::size_t>(i)]];
      continue;
    }
    const resize::Taps t = resize::linear(w.ay, gy);
    const float* r0 = x + (t.i0 - w.row0) * sy;
    const float* r1 = x + (t.i1 - w.row0) * sy;
    const auto wy = static_cast<float>(t.w1);
    for (I64 i = 0; i < w.ow; ++i) {
      const auto c = static_cast<std::size_t>(i);
      const I64 a = w.col_lo[c], b = w.col_hi[c];
      const float top = dev::lerp(r0[a], r0[b], w.col_w[c]);
      o[i] = dev::lerp(top, dev::lerp(r1[a], r1[b], w.col_w[c]), wy);
    }
  }
}

}  // namespace

void plan_resize(const ExecDesc& e, KernelPlan& k) {
  WindowPlan& w = k.window;
  read_window(e, k, 0, w);
  read_resize(e, w);
  check_rows(e, w);
  plan_columns(w);
  w.scratch = w.pieces > 1 ? w.nb * w.cw * w.rows * w.in_w : 0;
  k.op = KernelOp::resize2d;
  k.flops = w.linear ? 9.0 * static_cast<double>(k.numel) : 0.0;
}

void run_resize(const KernelPlan& k, const float* const* inputs, float* out,
                std::vector<float>& scratch) {
  const WindowPlan& w = k.window;
  if (scratch.size() < static_cast<std::size_t>(w.scratch))
    scratch.resize(static_cast<std::size_t>(w.scratch));
  float* s = scratch.data();
  const WindowRef win = window_ref(k, inputs, s);  // the pieces stacked when there are several
  for (I64 n = 0; n < w.nb; ++n)
    for (I64 c = 0; c < w.cb; ++c)
      resize_plane(w, win.p + n * win.sn + c * win.sc, win.sy, out + (n * w.cb + c) * w.oh * w.ow);
}

}  // namespace doppler::engine_detail
