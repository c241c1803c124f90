// Windowed NCHW operations of a blocked program: conv2d, maxpool2d and avgpool2d (docs/exec.md,
// "Windowed kernels"). Output blocks cut N, channels and rows; each reads the input rows its
// windows cover, halo rows from neighbouring blocks included.
#include <algorithm>
#include <stdexcept>

#include "doppler/util/error.hpp"
#include "doppler/workloads/blocked_program.hpp"

namespace doppler::workloads {

namespace {

using Index = std::vector<std::int64_t>;

// Input rows [lo, hi) read by output rows [y0, y1), clamped to the input's [0, in_h).
std::pair<std::int64_t, std::int64_t> input_rows(const Window2d& g, std::int64_t y0,
                                                 std::int64_t y1, std::int64_t in_h) {
  const std::int64_t lo = y0 * g.stride_h - g.pad_h;
  const std::int64_t hi = (y1 - 1) * g.stride_h - g.pad_h + (g.kernel_h - 1) * g.dil_h + 1;
  return {std::max<std::int64_t>(lo, 0), std::min(hi, in_h)};
}

// Input rows [lo, hi) a transposed convolution's output rows [y0, y1) read: those with iy sh -
// pad + ky dil in [y0, y1) for some ky, clamped to the input; one row when there are none (the
// block is its bias alone, but the kernel takes a window).
std::pair<std::int64_t, std::int64_t> transposed_rows(const Window2d& g, std::int64_t y0,
                                                      std::int64_t y1, std::int64_t in_h) {
  const std::int64_t top = y0 + g.pad_h - (g.kernel_h - 1) * g.dil_h;
  std::int64_t lo = top <= 0 ? 0 : (top + g.stride_h - 1) / g.stride_h;
  std::int64_t hi = std::min((y1 - 1 + g.pad_h) / g.stride_h + 1, in_h);
  lo = std::min(lo, in_h - 1);
  return {lo, std::max(hi, lo + 1)};
}

std::vector<std::pair<std::string, double>> window_attrs(const Window2d& g, std::int64_t in_h,
                                                         std::int64_t in_w) {
  return {
      {"in_h", static_cast<double>(in_h)},           {"in_w", static_cast<double>(in_w)},
      {"stride_h", static_cast<double>(g.stride_h)}, {"stride_w", static_cast<double>(g.stride_w)},
      {"pad_h", static_cast<double>(g.pad_h)},       {"pad_w", static_cast<double>(g.pad_w)},
      {"dil_h", static_cast<double>(g.dil_h)},       {"dil_w", static_cast<double>(g.dil_w)}};
}

}  // namespace

const BlockedTensor& BlockedProgram::conv2d(const std::string& name, const BlockedTensor& x,
                                            const BlockedTensor& w, const BlockedTensor* bias,
                                            const Window2d& geometry, std::int64_t out_h,
                                            std::int64_t out_w, std::vector<Cuts> cuts) {
  if (x.rank() != 4 || w.rank() != 4 || (bias && bias->rank() != 1))
    throw std::logic_error("conv2d: ranks");
  Window2d g = geometry;
  g.kernel_h = w.shape[2];
  g.kernel_w = w.shape[3];
  return window2d(name, "conv2d", x, &w, bias, g, {x.shape[0], w.shape[0], out_h, out_w},
                  std::move(cuts));
}

const BlockedTensor& BlockedProgram::conv_transpose2d(const std::string& name,
                                                      const BlockedTensor& x,
                                                      const BlockedTensor& w,
                                                      const BlockedTensor* bias,
                                                      const Window2d& geometry, std::int64_t out_h,
                                                      std::int64_t out_w, std::vector<Cuts> cuts) {
  if (x.rank() != 4 || w.rank() != 4 || (bias && bias->rank() != 1))
    throw std::logic_error("conv_transpose2d: ranks");
  Window2d g = geometry;
  g.kernel_h = w.shape[2];
  g.kernel_w = w.shape[3];
  return window2d(name, "conv_transpose2d", x, &w, bias, g, {x.shape[0], w.shape[0], out_h, out_w},
                  std::move(cuts));
}

const BlockedTensor& BlockedProgram::pool2d(const std::string& name, const std::string& op,
                                            const BlockedTensor& x, const Window2d& geometry,
                                            std::int64_t out_h, std::int64_t out_w,
                                            std::vector<Cuts> cuts) {
  if (op != "maxpool2d" && op != "avgpool2d") throw std::logic_error("pool2d: " + op);
  if (x.rank() != 4) throw std::logic_error("pool2d: rank");
  return window2d(name, op, x, nullptr, nullptr, geometry, {x.shape[0], x.shape[1], out_h, out_w},
                  std::move(cuts));
}

// Appends to `desc` the regions of x's blocks that hold the window rows [lo, hi), channels [c0,
// c0 + cw), and sets the `pieces`, `row0` and `c0` attributes.
void BlockedProgram::add_window_pieces(ExecDesc& desc, const BlockedTensor& x, std::int64_t lo,
                                       std::int64_t hi, std::int64_t c0, std::int64_t cw) const {
  if (lo >= hi)
    throw InputError(desc.op + " " + x.name + ": an output block reads only padding rows");
  int pieces = 0;
  for (std::int64_t b = x.block_index(2, lo); b < x.grid()[2]; ++b) {
    const std::int64_t blo = x.cuts[2][static_cast<std::size_t>(b)];
    const std::int64_t bhi = x.cuts[2][static_cast<std::size_t>(b) + 1];
    if (blo >= hi) break;
    Region r{{desc.origin[0], c0, std::max(lo, blo), 0},
             {desc.origin[0] + desc.shape[0], c0 + cw, std::min(hi, bhi), x.shape[3]}};
    desc.inputs.push_back(read(x, r));
    ++pieces;
  }
  desc.attrs.emplace_back("pieces", pieces);
  desc.attrs.emplace_back("row0", static_cast<double>(lo));
  desc.attrs.emplace_back("c0", static_cast<double>(c0));
}

const BlockedTensor& BlockedProgram::window2d(const std::string& name, const std::string& op,
                                              const BlockedTensor& x0, const BlockedTensor* w0,
                                              const BlockedTensor* bias0, const Window2d& g,
                                              const std::vector<std::int64_t>& out_shape,
                                              std::vector<Cuts> cuts) {
  if (cuts.size() != 4 || cuts[3] != Cuts{0, out_shape[3]})
    throw std::logic_error(op + ": the output width must be one block");
  const bool conv = w0 != nullptr;
  const std::int64_t icg = conv ? w0->shape[1] : 1;
  const std::int64_t out_per_group = conv ? out_shape[1] / g.groups : 1;
  // Channels map one to one for pools and depthwise convs; a general conv reads whole groups.
  const bool one_to_one = !conv || (icg == 1 && out_per_group == 1);
  const BlockedTensor& x =
      ensure_layout(x0, {cuts[0], one_to_one ? std::optional<Cuts>(cuts[1]) : Cuts{0, x0.shape[1]},
                         std::nullopt, Cuts{0, x0.shape[3]}});
  const BlockedTensor* w = conv
                               ? &ensure_layout(*w0, {cuts[1], Cuts{0, w0->shape[1]},
                                                      Cuts{0, w0->shape[2]}, Cuts{0, w0->shape[3]}})
                               : nullptr;
  const BlockedTensor* bias = bias0 ? &ensure_layout(*bias0, {cuts[1]}) : nullptr;
  const bool transposed = op == "conv_transpose2d";
  // Window positions per output element (a transposed convolution's spread over its outputs).
  const double window = static_cast<double>(g.kernel_h * g.kernel_w * icg) /
                        (transposed ? static_cast<double>(g.stride_h * g.stride_w) : 1.0);
  const double elements = static_cast<double>(product(out_shape));
  BlockedTensor& t = new_tensor(name, out_shape, std::move(cuts), elements * window);
  const Index grid = t.grid();
  reserve_nodes(product(grid), name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc d = block_desc(t, idx, op);
    d.attrs = window_attrs(g, x.shape[2], x.shape[3]);
    const std::int64_t o0 = d.origin[1], cb = d.shape[1];
    std::int64_t c0 = o0, cw = cb;
    if (!one_to_one) {
      const std::int64_t g_lo = o0 / out_per_group, g_hi = (o0 + cb - 1) / out_per_group;
      c0 = g_lo * icg;
      cw = (g_hi - g_lo + 1) * icg;
    }
    const std::int64_t y0 = d.origin[2], y1 = y0 + d.shape[2];
    const auto [lo, hi] =
        transposed ? transposed_rows(g, y0, y1, x.shape[2]) : input_rows(g, y0, y1, x.shape[2]);
    add_window_pieces(d, x, lo, hi, c0, cw);
    double flops = window * static_cast<double>(d.numel());
    if (conv) {
      flops *= 2;
      d.inputs.push_back(read(*w, {{o0, 0, 0, 0}, {o0 + cb, icg, g.kernel_h, g.kernel_w}}));
      d.attrs.emplace_back("out_per_group", static_cast<double>(out_per_group));
      if (bias) {
        d.inputs.push_back(read(*bias, {{o0}, {o0 + cb}}));
        d.attrs.emplace_back("bias", 1);
        flops += static_cast<double>(d.numel());
      }
    } else {
      d.attrs.emplace_back("kernel_h", static_cast<double>(g.kernel_h));
      d.attrs.emplace_back("kernel_w", static_cast<double>(g.kernel_w));
      if (op == "avgpool2d") d.attrs.emplace_back("count_include_pad", g.count_include_pad);
    }
    add_tensor_block(t, idx, std::move(d), OpKind::einsum, flops);
  });
  return t;
}

const BlockedTensor& BlockedProgram::resize2d(const std::string& name, const BlockedTensor& x0,
                                              const Resize2d& r, std::int64_t out_h,
                                              std::int64_t out_w, std::vector<Cuts> cuts) {
  if (x0.rank() != 4) throw std::logic_error("resize2d: rank");
  if (cuts.size() != 4 || cuts[3] != Cuts{0, out_w})
    throw std::logic_error("resize2d: the output width must be one block");
  const BlockedTensor& x =
      ensure_layout(x0, {cuts[0], cuts[1], std::nullopt, Cuts{0, x0.shape[3]}});
  const double h = static_cast<double>(x.shape[2]), w = static_cast<double>(x.shape[3]);
  const resize::Axis ay{r.coord, r.scale_h > 0 ? r.scale_h : static_cast<double>(out_h) / h,
                        x.shape[2], out_h};
  const double flops_per = r.linear ? 9 : 0;
  const std::vector<std::int64_t> out_shape = {x.shape[0], x.shape[1], out_h, out_w};
  BlockedTensor& t =
      new_tensor(name, out_shape, std::move(cuts), static_cast<double>(product(out_shape)));
  const Index grid = t.grid();
  reserve_nodes(product(grid), name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc d = block_desc(t, idx, "resize2d");
    d.attrs = {{"in_h", h},
               {"in_w", w},
               {"out_h", static_cast<double>(out_h)},
               {"out_w", static_cast<double>(out_w)},
               {"mode", r.linear ? 1 : 0},
               {"coord", static_cast<double>(static_cast<int>(r.coord))},
               {"nearest", static_cast<double>(static_cast<int>(r.rounding))},
               {"scale_h", ay.scale},
               {"scale_w", r.scale_w > 0 ? r.scale_w : static_cast<double>(out_w) / w}};
    const resize::Span rows =
        resize::input_span(ay, r.linear, r.rounding, d.origin[2], d.origin[2] + d.shape[2]);
    add_window_pieces(d, x, rows.lo, rows.hi, d.origin[1], d.shape[1]);
    const double flops = flops_per * static_cast<double>(d.numel());
    add_tensor_block(t, idx, std::move(d), OpKind::elementwise, flops);
  });
  return t;
}

}  // namespace doppler::workloads
