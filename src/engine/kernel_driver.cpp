// A kernel plan as the launches of an elementwise-and-GEMM device (kernel_driver.hpp): the same
// steps as the CPU kernels (kernels.cpp, kernel_einsum.cpp, kernel_window.cpp), each loop nest
// one elementwise launch, each SGEMM one GEMM call.
#include "kernel_driver.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <climits>

#include "doppler/util/error.hpp"

namespace doppler::engine_detail {

namespace {

using dev::I64;

// Runs of output channels of one group at least this long take a GEMM (as on the CPU).
constexpr I64 kMinGemmRows = 8;

void put(const Dims& d, I64* to) {
  std::copy(d.begin(), d.end(), to);
}

// dst[shape, dst_strides] = src[shape, src_strides].
template <class T>
void copy_view(KernelExec<T>& x, const T* src, const Dims& src_strides, T* dst,
               const Dims& dst_strides, const Dims& shape) {
  dev::CopyArgs a;
  Dims s = src_strides, d = dst_strides;
  Dims* views[] = {&s, &d};
  a.shape = device_shape(coalesce_dims(shape, views));
  put(s, a.src);
  put(d, a.dst);
  a.n = numel_of(shape);
  if (a.n > 0) x.copy(a, src, dst);
}

// ---- einsum ----

template <class T>
GemmCall<T> call_of(const GemmPlan& g, const T* pa, const T* pb, T* pc) {
  GemmCall<T> c;
  c.k = g.k;
  c.c = pc;
  c.ldc = g.ldc;
  if (g.c_mode == 1) {  // C^T = op(B)^T op(A)^T
    c.ta = !g.b.trans, c.tb = !g.a.trans, c.m = g.n, c.n = g.m;
    c.a = pb, c.lda = g.b.ld, c.b = pa, c.ldb = g.a.ld;
  } else {
    c.ta = g.a.trans, c.tb = g.b.trans, c.m = g.m, c.n = g.n;
    c.a = pa, c.lda = g.a.ld, c.b = pb, c.ldb = g.b.ld;
  }
  return c;
}

// The entries of `d` from `from` on.
Dims tail_of(const Dims& d, std::size_t from) {
  return Dims(d.begin() + static_cast<std::ptrdiff_t>(from), d.end());
}

// The batch labels from `from` on as one stride of an operand whose batch strides are
// `strides` (false when coalesce_dims leaves more than one dimension of them).
bool collapse_from(const Dims& shape, const Dims& strides, std::size_t from, I64& stride) {
  Dims s = tail_of(strides, from);
  Dims* views[] = {&s};
  if (coalesce_dims(tail_of(shape, from), views).size() > 1) return false;
  stride = s.empty() ? 0 : s[0];
  return true;
}

// Offsets in A, B and C of the t-th combination of the batch labels before `split`.
void outer_offsets(const GemmPlan& g, std::size_t split, I64 t, I64& oa, I64& ob, I64& oc) {
  oa = ob = oc = 0;
  for (std::size_t d = split; d-- > 0;) {
    const I64 e = g.batch_shape[d], i = t % e;
    t /= e;
    oa += i * g.a.batch_strides[d], ob += i * g.b.batch_strides[d];
    oc += i * g.c_batch_strides[d];
  }
}

// `head` then `tail`.
Dims joined(Dims head, const Dims& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// Contiguous strides of the batch labels from `split` on, each block `block` elements.
Dims block_strides(const GemmPlan& g, std::size_t split, I64 block) {
  Dims s = contiguous_strides(tail_of(g.batch_shape, split));
  for (I64& x : s) x *= block;
  return s;
}

// Operand `o` (at `src`) of every batch element of one call gathered at `dst`, `block` elements
// each: one copy launch.
template <class T>
void pack_batch(KernelExec<T>& x, const GemmPlan& g, const GemmOperand& o, std::size_t split,
                const T* src, T* dst, I64 block) {
  copy_view(x, src, joined(tail_of(o.batch_strides, split), o.pack_strides), dst,
            joined(block_strides(g, split, block), o.pack_dst),
            joined(tail_of(g.batch_shape, split), o.pack_shape));
}

// The scattered output of every batch element of one call, m n elements each at `src`, written
// to the output at `dst`: one copy launch.
template <class T>
void scatter_batch(KernelExec<T>& x, const GemmPlan& g, std::size_t split, const T* src, T* dst) {
  copy_view(x, src, joined(block_strides(g, split, g.m * g.n), g.scatter_src), dst,
            joined(tail_of(g.c_batch_strides, split), g.scatter_strides),
            joined(tail_of(g.batch_shape, split), g.scatter_shape));
}

template <class T>
void run_gemm(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const GemmPlan& g = k.gemm;
  const GemmBatching b = gemm_batching(g);
  if (b.calls == 0) return;  // an extent of 0
  const T* a0 = in[0] + k.in[0].offset;
  const T* b0 = in[1] + k.in[1].offset;
  T* pack_a = b.scratch > 0 ? x.scratch(b.scratch) : nullptr;
  T* pack_b = pack_a + (g.a.pack ? b.count * g.m * g.k : 0);
  T* scatter = pack_b + (g.b.pack ? b.count * g.k * g.n : 0);
  for (I64 t = 0; t < b.calls; ++t) {
    I64 oa = 0, ob = 0, oc = 0;
    outer_offsets(g, b.split, t, oa, ob, oc);
    if (g.a.pack) pack_batch(x, g, g.a, b.split, a0 + oa, pack_a, g.m * g.k);
    if (g.b.pack) pack_batch(x, g, g.b, b.split, b0 + ob, pack_b, g.k * g.n);
    GemmCall<T> c = call_of(g, g.a.pack ? pack_a : a0 + oa, g.b.pack ? pack_b : b0 + ob,
                            g.c_mode == 2 ? scatter : out + oc);
    c.batch = b.count;
    c.sa = g.c_mode == 1 ? b.sb : b.sa, c.sb = g.c_mode == 1 ? b.sa : b.sb, c.sc = b.sc;
    x.gemm(c);
    if (g.c_mode == 2) scatter_batch(x, g, b.split, scatter, out + oc);
  }
}

template <class T>
void run_loop(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const EinsumLoop& l = k.loop;
  dev::LoopArgs a;
  a.labels = static_cast<int>(l.extents.size());
  a.operands = static_cast<int>(l.op_strides.size());
  put(l.extents, a.ext);
  put(l.out_strides, a.out);
  dev::Operands<T> ops;
  for (int j = 0; j < a.operands; ++j) {
    const auto u = static_cast<std::size_t>(j);
    put(l.op_strides[u], a.op[j]);
    ops.p[j] = in[u] + k.in[u].offset;
  }
  a.n = k.numel;
  if (a.n > 0) x.loop(a, ops, out);
}

// ---- elementwise ----

template <class T>
void run_unary(const KernelPlan& k, const T* in, T* out, KernelExec<T>& x) {
  dev::UnaryArgs a;
  Dims s = k.in[0].strides;
  Dims* views[] = {&s};
  a.shape = device_shape(coalesce_dims(k.shape, views));
  put(s, a.in);
  a.n = k.numel, a.fn = k.fn, a.p0 = k.p0, a.p1 = k.p1;
  if (a.n > 0) x.unary(a, in + k.in[0].offset, out);
}

// out = f(p[sp], q[sq]) over the output's shape.
template <class T>
void run_binary_on(const KernelPlan& k, Fn f, const T* p, const Dims& sp, const T* q,
                   const Dims& sq, T* out, KernelExec<T>& x) {
  dev::BinaryArgs a;
  Dims s = sp, t = sq;
  Dims* views[] = {&s, &t};
  a.shape = device_shape(coalesce_dims(k.shape, views));
  put(s, a.a);
  put(t, a.b);
  a.n = k.numel, a.fn = f, a.p0 = k.p0, a.p1 = k.p1;
  if (a.n > 0) x.binary(a, p, q, out);
}

// cond != 0 ? a : b in one launch, the dimensions every operand walks as one merged.
template <class T>
void run_where(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  dev::WhereArgs a;
  Dims c = k.bcast[0], p = k.bcast[1], q = k.bcast[2];
  Dims* views[] = {&c, &p, &q};
  a.shape = device_shape(coalesce_dims(k.shape, views));
  put(c, a.c);
  put(p, a.a);
  put(q, a.b);
  a.n = k.numel;
  if (a.n > 0)
    x.where(a, in[0] + k.in[0].offset, in[1] + k.in[1].offset, in[2] + k.in[2].offset, out);
}

// A fused recurrent step in one launch.
template <class T>
void run_cell(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const T* op[4] = {};
  for (std::size_t i = 0; i < k.in.size(); ++i) op[i] = in[i] + k.in[i].offset;
  if (k.numel > 0) x.cell(k.cell, op[0], op[1], op[2], op[3], out);
}

// One launch per kAggregateOperands operands (the first), then per kAggregateOperands - 1
// (each later launch also reads the output).
template <class T>
void run_aggregate(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  if (k.numel == 0) return;
  const auto total = static_cast<int>(k.in.size());
  std::vector<Dims> strides;
  std::vector<Dims*> views;
  for (const View& v : k.in) strides.push_back(v.strides);
  for (Dims& d : strides) views.push_back(&d);
  const dev::Shape shape = device_shape(coalesce_dims(k.shape, views));
  for (int done = 0; done < total;) {
    dev::AggregateArgs a;
    dev::Operands<T> ops;
    a.shape = shape;
    a.first = done == 0;
    a.count = std::min(dev::kAggregateOperands - (a.first ? 0 : 1), total - done);
    for (int j = 0; j < a.count; ++j) {
      const auto u = static_cast<std::size_t>(done + j);
      put(strides[u], a.in[j]);
      ops.p[j] = in[u] + k.in[u].offset;
    }
    a.n = k.numel, a.fn = k.fn;
    x.aggregate(a, ops, out);
    done += a.count;
  }
}

template <class T>
void run_pieces(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const Dims os = contiguous_strides(k.shape);
  for (std::size_t j = 0; j < k.in.size(); ++j) {
    const View& v = k.in[j];
    copy_view(x, in[j] + v.offset, v.strides, out + k.pieces[j].dst_offset, os, v.shape);
  }
}

// The rows of operand v along its last axis, as ReduceArgs and ScanArgs take them: their
// layout (rows, in), count, length and step.
template <class A>
void set_rows(const View& v, A& a) {
  const std::size_t last = v.shape.size() - 1;
  Dims rows = v.shape;
  rows[last] = 1;
  Dims s = v.strides;
  Dims* views[] = {&s};
  a.rows = device_shape(coalesce_dims(rows, views));
  put(s, a.in);
  a.n = numel_of(rows), a.len = v.shape[last], a.step = v.strides[last];
}

template <class T>
void run_reduce(const KernelPlan& k, const T* in, T* out, KernelExec<T>& x) {
  const View& v = k.in[0];
  dev::ReduceArgs a;
  set_rows(v, a);
  a.fn = k.fn;
  a.lanes = a.len >= dev::kLaneRowLength && k.fn != Fn::argmax ? dev::kReduceLanes : 1;
  a.last = k.p0 != 0;
  if (a.n > 0) x.reduce(a, in + v.offset, out);
}

template <class T>
void run_scan(const KernelPlan& k, const T* in, T* out, KernelExec<T>& x) {
  const View& v = k.in[0];
  dev::ScanArgs a;
  set_rows(v, a);
  set_row_mode(k, a);
  if (a.n > 0) x.scan(a, in + v.offset, out);
}

template <class T>
void run_rotary(const KernelPlan& k, NodeId v, const T* in, T* out, KernelExec<T>& x) {
  dev::RotaryArgs a;
  a.shape = device_shape(k.shape);
  put(k.in[0].strides, a.in);
  a.n = k.numel;
  if (a.n > 0) x.rotary(a, in + k.in[0].offset, x.values(v), out);
}

template <class T>
void run_gather(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const View& t = k.in[0];
  const View& ix = k.in[1];
  dev::GatherArgs a = gather_args(k);
  a.n = k.numel;
  if (a.n > 0) x.gather(a, in[0] + t.offset, in[1] + ix.offset, out);
}

template <class T>
void run_synthetic(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  if (k.sm > 0 && k.sk > 0) {
    GemmCall<T> c;
    c.m = c.n = c.ldc = k.sm, c.k = k.sk;
    c.a = x.syn_a(), c.lda = kSynMaxK, c.b = x.syn_b(), c.ldb = kSynMaxM;
    c.c = x.scratch(k.sm * k.sm);
    for (I64 r = 0; r < k.reps; ++r) x.gemm(c);
  }
  const auto total = static_cast<int>(k.in.size());
  int done = 0;
  do {  // at least one launch: without inputs the checksum is p0
    dev::ChecksumArgs a;
    dev::Operands<T> ops;
    a.count = std::min(dev::kChecksumOperands, total - done);
    for (int j = 0; j < a.count; ++j) ops.p[j] = in[static_cast<std::size_t>(done + j)];
    a.first = done == 0, a.last = done + a.count == total;
    a.total = total, a.p0 = k.p0;
    x.checksum(a, ops, out);
    done += a.count;
  } while (done < total);
}

// ---- windowed kernels ----

// The window in place (one piece) or gathered at `s` (advanced past it), with its geometry.
template <class T>
const T* window_of(const KernelPlan& k, std::span<const T* const> in, T*& s, KernelExec<T>& x,
                   dev::Window& g) {
  const WindowPlan& w = k.window;
  if (w.pieces == 1) {
    const View& v = k.in[0];
    g = device_window(w, v.strides[0], v.strides[1], v.strides[2]);
    return in[0] + v.offset;
  }
  const Dims ws = contiguous_strides({w.nb, w.cw, w.rows, w.in_w});
  I64 row = 0;
  for (std::size_t j = 0; j < static_cast<std::size_t>(w.pieces); ++j) {
    const View& v = k.in[j];
    copy_view(x, in[j] + v.offset, v.strides, s + row * ws[2], ws, v.shape);
    row += v.shape[2];
  }
  g = device_window(w, ws[0], ws[1], ws[2]);
  const T* p = s;
  s += w.nb * ws[0];
  return p;
}

// The weight [cb, icg kh kw] with its row stride: in place, or packed at `s` (advanced).
template <class T>
const T* weight_of(const KernelPlan& k, std::span<const T* const> in, T*& s, KernelExec<T>& x,
                   I64& ld) {
  const WindowPlan& w = k.window;
  const View& v = k.in[static_cast<std::size_t>(w.pieces)];
  const T* p = in[static_cast<std::size_t>(w.pieces)] + v.offset;
  ld = v.strides[0];
  if (!w.pack_weight) return p;
  const Dims shape = {w.cb, w.icg, w.kh, w.kw};
  copy_view(x, p, v.strides, s, contiguous_strides(shape), shape);
  ld = w.icg * w.kh * w.kw;
  p = s;
  s += w.cb * ld;
  return p;
}

// Output channels [o, end) of one group for one batch element: one GEMM (im2col'd window, or the
// window rows themselves for a plain 1x1 convolution) or the direct kernel.
template <class T>
void conv_run(const KernelPlan& k, const dev::Window& g, const T* xg, const T* wt, I64 ldw, I64 o,
              I64 end, T* cols, T* dst, KernelExec<T>& x) {
  const WindowPlan& w = k.window;
  const I64 plane = w.oh * w.ow, kk = w.icg * w.kh * w.kw;
  if (end - o < kMinGemmRows) {
    dev::DirectConvArgs a;
    a.w = g, a.ldw = ldw, a.n = (end - o) * plane;
    if (a.n > 0) x.direct_conv(a, xg, wt + o * ldw, dst);
    return;
  }
  GemmCall<T> c;
  c.m = end - o, c.n = plane, c.k = kk, c.a = wt + o * ldw, c.lda = ldw;
  c.c = dst, c.ldc = plane, c.accumulate = w.bias;
  if (w.direct_1x1) {
    c.b = xg + (w.y0 - w.row0) * g.sy, c.ldb = g.sc;
  } else {
    dev::Im2colArgs a;
    a.w = g, a.n = kk * plane;
    x.im2col(a, xg, cols);
    c.b = cols, c.ldb = plane;
  }
  x.gemm(c);
}

// Every output plane of a convolution at its channel's bias (0 without one).
template <class T>
void fill_bias(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const WindowPlan& w = k.window;
  dev::BiasArgs b;
  b.n = k.numel, b.plane = w.oh * w.ow, b.cb = w.cb, b.has_bias = w.bias;
  const T* bias = nullptr;
  if (w.bias) {
    const View& bv = k.in[static_cast<std::size_t>(w.pieces) + 1];
    bias = in[static_cast<std::size_t>(w.pieces) + 1] + bv.offset;
    b.stride = bv.strides[0];
  }
  if (b.n > 0) x.bias(b, bias, out);
}

template <class T>
void run_conv(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const WindowPlan& w = k.window;
  T* s = w.scratch > 0 ? x.scratch(w.scratch) : nullptr;
  dev::Window g;
  const T* win = window_of(k, in, s, x, g);
  I64 ldw = 0;
  const T* wt = weight_of(k, in, s, x, ldw);
  const I64 plane = w.oh * w.ow;
  fill_bias(k, in, out, x);
  for (I64 n = 0; n < w.nb; ++n)
    for (I64 o = 0; o < w.cb;) {  // runs [o, end) of output channels in one group
      const I64 grp = (w.o0 + o) / w.out_per_group;
      const I64 end = std::min(w.cb, (grp + 1) * w.out_per_group - w.o0);
      const T* xg = win + n * g.sn + (grp * w.icg - w.c0) * g.sc;
      conv_run(k, g, xg, wt, ldw, o, end, s, out + (n * w.cb + o) * plane, x);
      o = end;
    }
}

// Transposed convolution: per batch element and run of output channels in one group, the GEMM
// of the packed weight [(o, ky, kx), ci] by the window [ci, rows in_w], then col2im onto the
// output at the bias.
template <class T>
void run_conv_transpose(const KernelPlan& k, std::span<const T* const> in, T* out,
                        KernelExec<T>& x) {
  const WindowPlan& w = k.window;
  T* s = x.scratch(w.scratch);
  dev::Window g;
  const T* win = window_of(k, in, s, x, g);
  const View& wv = k.in[static_cast<std::size_t>(w.pieces)];
  const Dims pshape = {w.cb, w.kh, w.kw, w.icg};
  T* wp = s;
  copy_view(x, in[static_cast<std::size_t>(w.pieces)] + wv.offset,
            {wv.strides[0], wv.strides[2], wv.strides[3], wv.strides[1]}, wp,
            contiguous_strides(pshape), pshape);
  T* cols = wp + numel_of(pshape);
  const I64 plane = w.oh * w.ow, ncol = w.rows * w.in_w, kk = w.kh * w.kw;
  fill_bias(k, in, out, x);
  dev::Col2imArgs a;
  a.w = g;
  for (I64 n = 0; n < w.nb; ++n)
    for (I64 o = 0; o < w.cb;) {  // runs [o, end) of output channels in one group
      const I64 grp = (w.o0 + o) / w.out_per_group;
      const I64 end = std::min(w.cb, (grp + 1) * w.out_per_group - w.o0);
      GemmCall<T> c;
      c.m = (end - o) * kk, c.n = ncol, c.k = w.icg;
      c.a = wp + o * kk * w.icg, c.lda = w.icg;
      c.b = win + n * g.sn + (grp * w.icg - w.c0) * g.sc, c.ldb = g.sc;
      c.c = cols, c.ldc = ncol;
      x.gemm(c);
      a.n = (end - o) * plane;
      x.col2im(a, cols, out + (n * w.cb + o) * plane);
      o = end;
    }
}

template <class T>
void run_pool(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const WindowPlan& w = k.window;
  T* s = w.scratch > 0 ? x.scratch(w.scratch) : nullptr;
  dev::PoolArgs a;
  const T* win = window_of(k, in, s, x, a.w);
  a.is_max = k.op == KernelOp::maxpool2d;
  a.n = k.numel;
  if (a.n > 0) x.pool(a, win, out);
}

template <class T>
void run_resize(const KernelPlan& k, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const WindowPlan& w = k.window;
  T* s = w.scratch > 0 ? x.scratch(w.scratch) : nullptr;
  dev::ResizeArgs a;
  const T* win = window_of(k, in, s, x, a.w);
  a.ay = w.ay, a.ax = w.ax, a.linear = w.linear, a.rounding = w.rounding;
  a.n = k.numel;
  if (a.n > 0) x.resize(a, win, out);
}

}  // namespace

template <class T>
void run_with(const Plan& plan, NodeId v, std::span<const T* const> in, T* out, KernelExec<T>& x) {
  const KernelPlan& k = plan.kernels[static_cast<std::size_t>(v)];
  switch (k.op) {
    case KernelOp::constant:
      return copy_view(x, x.values(v), {1}, out, {1}, {static_cast<I64>(k.values.size())});
    case KernelOp::gemm:
      return run_gemm(k, in, out, x);
    case KernelOp::einsum_loop:
      return run_loop(k, in, out, x);
    case KernelOp::aggregate:
      return run_aggregate(k, in, out, x);
    case KernelOp::pieces:
      return run_pieces(k, in, out, x);
    case KernelOp::copy:
      return copy_view(x, in[0] + k.in[0].offset + k.copy_start, k.copy_src, out, k.copy_dst,
                       k.copy_shape);
    case KernelOp::unary:
      return run_unary(k, in[0], out, x);
    case KernelOp::binary:
      return run_binary_on(k, k.fn, in[0] + k.in[0].offset, k.bcast[0], in[1] + k.in[1].offset,
                           k.bcast[1], out, x);
    case KernelOp::where:
      return run_where(k, in, out, x);
    case KernelOp::cell:
      return run_cell(k, in, out, x);
    case KernelOp::scan:
    case KernelOp::topk:
      return run_scan(k, in[0], out, x);
    case KernelOp::reduce:
      return run_reduce(k, in[0], out, x);
    case KernelOp::rotary:
      return run_rotary(k, v, in[0], out, x);
    case KernelOp::gather:
      return run_gather(k, in, out, x);
    case KernelOp::synthetic:
      return run_synthetic(k, in, out, x);
    case KernelOp::conv2d:
      return run_conv(k, in, out, x);
    case KernelOp::conv_transpose2d:
      return run_conv_transpose(k, in, out, x);
    case KernelOp::maxpool2d:
    case KernelOp::avgpool2d:
      return run_pool(k, in, out, x);
    case KernelOp::resize2d:
      return run_resize(k, in, out, x);
    case KernelOp::empty:
      return;
  }
}

template void run_with<float>(const Plan&, NodeId, std::span<const float* const>, float*,
                              KernelExec<float>&);
template void run_with<dev::Bf16>(const Plan&, NodeId, std::span<const dev::Bf16* const>,
                                  dev::Bf16*, KernelExec<dev::Bf16>&);

GemmBatching gemm_batching(const GemmPlan& g, I64 budget) {
  const I64 per = g.scratch;  // one batch element's packs and scatter
  GemmBatching r;
  r.split = g.batch_shape.size();
  r.calls = numel_of(g.batch_shape);
  r.sa = g.m * g.k, r.sb = g.k * g.n, r.sc = g.m * g.n;
  r.scratch = per;
  for (std::size_t split = 0; split < g.batch_shape.size() && r.calls > 0; ++split) {
    const I64 count = numel_of(tail_of(g.batch_shape, split));
    if (count > INT_MAX || (per > 0 && count > std::max(budget / per, I64{1}))) continue;
    I64 sa = r.sa, sb = r.sb, sc = r.sc;
    if ((!g.a.pack && !collapse_from(g.batch_shape, g.a.batch_strides, split, sa)) ||
        (!g.b.pack && !collapse_from(g.batch_shape, g.b.batch_strides, split, sb)) ||
        (g.c_mode != 2 && !collapse_from(g.batch_shape, g.c_batch_strides, split, sc)))
      continue;
    r.split = split, r.count = count, r.calls = numel_of(g.batch_shape) / count;
    r.sa = sa, r.sb = sb, r.sc = sc, r.scratch = per * count;
    return r;
  }
  // one element per call
  if (!g.a.pack) r.sa = 0;
  if (!g.b.pack) r.sb = 0;
  if (g.c_mode != 2) r.sc = 0;
  return r;
}

I64 device_scratch(const Plan& plan) {
  I64 need = 1;
  for (const KernelPlan& k : plan.kernels) {
    if (k.op == KernelOp::gemm) need = std::max(need, gemm_batching(k.gemm).scratch);
    if (k.op == KernelOp::conv2d || k.op == KernelOp::maxpool2d || k.op == KernelOp::avgpool2d ||
        k.op == KernelOp::resize2d || k.op == KernelOp::conv_transpose2d)
      need = std::max(need, k.window.scratch);
    if (k.op == KernelOp::synthetic) need = std::max(need, k.sm * k.sm);
  }
  return need;
}

void check_device_plan(const Plan& plan) {
  for (std::size_t v = 0; v < plan.kernels.size(); ++v) {
    const KernelPlan& k = plan.kernels[v];
    if (k.op != KernelOp::einsum_loop) continue;
    if (k.loop.op_strides.size() > static_cast<std::size_t>(dev::kMaxLoopOperands) ||
        k.loop.extents.size() > static_cast<std::size_t>(dev::kMaxLabels))
      throw InputError("node " + std::to_string(v) + ": an einsum of " +
                       std::to_string(k.loop.op_strides.size()) +
                       " operands that is not one GEMM (the device kernels take at most " +
                       std::to_string(dev::kMaxLoopOperands) + ")");
  }
}

}  // namespace doppler::engine_detail
