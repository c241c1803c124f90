// Volumetric (3-D) Conv, MaxPool and AveragePool of NCDHW tensors (video and medical-imaging
// models) as 2-D ops over the depth taps (docs/onnx.md): the input is made depth-major
// ([N, D, C, H, W], a transpose), padded along the depth, and each of the KD kernel taps is the
// depth slice it reads for every output depth ([N, Dout, C, H, W]: a select, or a stride for a
// depth stride), seen as a batch of N x Dout images. A Conv stacks the taps on the channels
// ([N Dout, C KD, H, W], each input channel's taps side by side) and runs one 2-D convolution
// with the weight [OC, C / group KD, KH, KW], the same values reshaped: its FLOPs are the 3-D
// convolution's. A pool pools each tap in 2-D and combines the taps (maximum, or a sum divided
// by the depth taps counted). The result [N Dout, C', H', W'] is made NCDHW again.
#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "lowerer.hpp"

namespace doppler::onnx_import {

/// The depth part of a 3-D window op: its kernel extent, stride, dilation, padding (the high
/// one: what the last window reads) and output extent.
struct Lowerer::DepthWindow {
  std::int64_t kernel = 1, stride = 1, dil = 1, pad_lo = 0, pad_hi = 0, out = 0;
};

namespace {

// Removes the depth (first) entry of the window attributes of `m`, a 3-D op rewritten as its 2-D
// op over H and W (pads [d0, h0, w0, d1, h1, w1] become [h0, w0, h1, w1]); returns the removed
// entries of kernel_shape, strides, dilations and pads (1, 1, 1, 0, 0 when absent).
std::array<std::int64_t, 5> take_depth(onnx::NodeProto& m) {
  std::array<std::int64_t, 5> depth = {1, 1, 1, 0, 0};
  for (auto& a : *m.mutable_attribute()) {
    const std::string& k = a.name();
    const bool pads = k == "pads";
    if (k != "kernel_shape" && k != "strides" && k != "dilations" && !pads) continue;
    std::vector<std::int64_t> v(a.ints().begin(), a.ints().end());
    if (v.size() != (pads ? 6u : 3u))
      throw std::runtime_error(
          fmt::format("{} must have {} entries for a 3-D window", k, pads ? 6 : 3));
    if (pads) {
      depth[3] = v[0], depth[4] = v[3];
      v = {v[1], v[2], v[4], v[5]};
    } else {
      depth[k == "kernel_shape" ? 0 : k == "strides" ? 1 : 2] = v[0];
      v.erase(v.begin());
    }
    a.clear_ints();
    for (auto e : v) a.add_ints(e);
  }
  return depth;
}

}  // namespace

bool Lowerer::lower_3d(const onnx::NodeProto& n) {
  const Shape x = in(n, 0).shape;
  if (x.size() != 5) return false;
  const std::string& op = n.op_type();
  if (op == "MaxPool" && n.output_size() > 1 && !n.output(1).empty())
    throw std::runtime_error("MaxPool's Indices output is not supported");
  if (options_.partition.count(n.output(0)))
    throw std::runtime_error("--partition " + n.output(0) +
                             ": the block counts of a 3-D op's output are not supported (the "
                             "automatic rule cuts its batch x depth, channels and rows)");
  onnx::NodeProto m = n;
  const auto [kernel, stride, dil, pad_lo, pad_hi] = take_depth(m);
  DepthWindow w{kernel, stride, dil, pad_lo, pad_hi, 0};
  const HostTensor* weight = op == "Conv" ? &const_in(n, 1, "weight (W)") : nullptr;
  if (weight) {
    if (weight->shape.size() != 5) throw std::runtime_error("a 3-D weight must have rank 5");
    if (find_attr(n, "kernel_shape") && kernel != weight->shape[2])
      throw std::runtime_error("kernel_shape differs from the weight's");
    w.kernel = weight->shape[2];
  }
  if (w.kernel < 1 || w.stride < 1 || w.dil < 1 || w.pad_lo < 0 || w.pad_hi < 0)
    throw std::runtime_error(
        "a 3-D window with a depth kernel, stride or dilation below 1 or "
        "negative pads");
  if (op == "AveragePool" && w.dil != 1)
    throw std::runtime_error("dilations are not supported for this pool");
  const auto* ap = find_attr(n, "auto_pad");
  const std::string mode = ap ? ap->s() : "NOTSET";
  if (mode == "VALID") w.pad_lo = w.pad_hi = 0;
  if (mode == "SAME_UPPER" || mode == "SAME_LOWER")
    std::tie(w.pad_lo, w.pad_hi) = same_pads(mode == "SAME_UPPER", x[2], w.kernel, w.stride, w.dil);
  const bool ceil = op != "Conv" && attr_int(n, "ceil_mode", 0) != 0;
  w.out = window_out(x[2], w.pad_lo, w.pad_hi, w.kernel, w.stride, w.dil, ceil);
  // The high padding the last window reads: less than the pads when they are not all used, more
  // with ceil_mode.
  w.pad_hi = std::max<std::int64_t>(
      0, (w.out - 1) * w.stride + (w.kernel - 1) * w.dil + 1 - x[2] - w.pad_lo);
  const std::string base = out(n, ":3d");
  const double fill = op == "MaxPool" ? -std::numeric_limits<float>::max() : 0.0;
  const auto taps = depth_taps(base, blocked(n, 0), w, fill);
  const BlockedTensor* y = nullptr;
  if (weight) {
    define(base + ".x", stack_taps(base, taps));
    HostTensor wr = *weight;  // [OC, C / group, KD, KH, KW] = [OC, C / group KD, KH, KW]
    wr.shape = {wr.shape[0], wr.shape[1] * wr.shape[2], wr.shape[3], wr.shape[4]};
    set_constant(base + ".w", std::move(wr));
    m.set_input(0, base + ".x");
    m.set_input(1, base + ".w");
    m.clear_output();
    m.add_output(base + ".y");
    conv(m);
    y = values_.at(base + ".y").blocked;
  } else {
    y = &pool_taps(base, m, taps, w, x[2]);
  }
  const Shape& s = y->shape;  // [N Dout, C', H', W']
  const auto& split = reshaped(base + ".split", *y, {x[0], w.out, s[1], s[2], s[3]});
  define(n.output(0), p_.transpose(out(n), split, {0, 2, 1, 3, 4}));
  return true;
}

// The KD taps of x [N, C, D, H, W]: tap i is [N, Dout, C, H, W], its depth d the input's depth
// d stride + i dil - pad_lo (`fill` in the padding).
std::vector<const BlockedTensor*> Lowerer::depth_taps(const std::string& base,
                                                      const BlockedTensor& x, const DepthWindow& w,
                                                      double fill) {
  const BlockedTensor* t = &p_.transpose(base + ".dhw", x, {0, 2, 1, 3, 4});
  if (w.pad_lo > 0 || w.pad_hi > 0) {
    std::vector<const BlockedTensor*> parts;
    if (w.pad_lo > 0)
      parts.push_back(&pad_part(base + ".before", *t, 1, w.pad_lo, true, "constant", fill));
    parts.push_back(t);
    if (w.pad_hi > 0)
      parts.push_back(&pad_part(base + ".after", *t, 1, w.pad_hi, false, "constant", fill));
    t = &p_.concat(base + ".padded", parts, 1);
  }
  std::vector<const BlockedTensor*> taps;
  for (std::int64_t i = 0; i < w.kernel; ++i) {
    Shape offset(5, 0), length = t->shape;
    offset[1] = i * w.dil;
    length[1] = w.out;
    const std::string name = fmt::format("{}.tap{}", base, i);
    taps.push_back(w.stride == 1 || w.out == 1
                       ? &select(name, *t, offset, length)
                       : &p_.strided(name, *t, offset, length, 1, w.stride));
  }
  return taps;
}

// The taps [N, Dout, C, H, W] stacked on the channels: [N Dout, C KD, H, W], channel c KD + i
// tap i's channel c (so that a channel group's taps are contiguous), channels whole.
const BlockedTensor& Lowerer::stack_taps(const std::string& base,
                                         const std::vector<const BlockedTensor*>& taps) {
  const Shape& s = taps.front()->shape;
  const std::int64_t rows = s[0] * s[1], kd = static_cast<std::int64_t>(taps.size());
  if (kd == 1) return reshaped(base + ".stack", *taps.front(), {rows, s[2], s[3], s[4]});
  std::vector<const BlockedTensor*> parts;
  for (std::size_t i = 0; i < taps.size(); ++i)
    parts.push_back(
        &reshaped(fmt::format("{}.tap{}.rows", base, i), *taps[i], {rows, s[2], 1, s[3], s[4]}));
  const auto& joined = p_.concat(base + ".joined", parts, 2);
  const auto& whole = p_.ensure_layout(
      joined, {std::nullopt, Cuts{0, s[2]}, Cuts{0, kd}, std::nullopt, Cuts{0, s[4]}});
  return reshaped(base + ".stack", whole, {rows, s[2] * kd, s[3], s[4]});
}

// Each tap pooled in 2-D by `m` (the op's H and W window) and the taps combined: their maximum,
// or (AveragePool) their sum divided by the depth taps counted for each output depth (those
// inside the input, or all of them with count_include_pad). Returns [N Dout, C, H', W'].
const BlockedTensor& Lowerer::pool_taps(const std::string& base, const onnx::NodeProto& m,
                                        const std::vector<const BlockedTensor*>& taps,
                                        const DepthWindow& w, std::int64_t depth) {
  const bool max = m.op_type() == "MaxPool";
  const BlockedTensor* acc = nullptr;
  for (std::size_t i = 0; i < taps.size(); ++i) {
    const Shape& s = taps[i]->shape;
    const std::string name = fmt::format("{}.tap{}", base, i);
    define(name + ".x", reshaped(name + ".x", *taps[i], {s[0] * s[1], s[2], s[3], s[4]}));
    onnx::NodeProto mi = m;
    mi.set_input(0, name + ".x");
    mi.clear_output();
    mi.add_output(name + ".y");
    pool(mi);
    const BlockedTensor& y = *values_.at(name + ".y").blocked;
    acc = !acc ? &y : &map(name + ".acc", max ? "maximum" : "add", {acc, &y});
  }
  if (max) return *acc;
  const bool all = attr_int(m, "count_include_pad", 0) != 0;
  if (all && attr_int(m, "ceil_mode", 0) != 0)
    throw std::runtime_error("AveragePool with ceil_mode and count_include_pad is not supported");
  HostTensor counts;  // per output row (n, d): 1 / the depth taps counted
  counts.shape = {acc->shape[0], 1, 1, 1};
  bool uniform = true;
  for (std::int64_t r = 0; r < acc->shape[0]; ++r) {
    const std::int64_t first = (r % w.out) * w.stride - w.pad_lo;
    std::int64_t k = w.kernel;
    if (!all) k = std::min(first + w.kernel, depth) - std::max<std::int64_t>(first, 0);
    counts.data.push_back(1.0 / static_cast<double>(k));
    uniform = uniform && k == w.kernel;
  }
  if (uniform && w.kernel == 1) return *acc;
  if (uniform)
    return map(base + ".mean", "scale", {acc}, {{"scale", 1.0 / static_cast<double>(w.kernel)}});
  return map(base + ".mean", "mul", {acc, &load(base + ".counts", counts)});
}

}  // namespace doppler::onnx_import
