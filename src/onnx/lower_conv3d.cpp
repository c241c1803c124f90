// Volumetric (3-D) Conv, ConvTranspose, MaxPool and AveragePool of NCDHW tensors (video and
// medical-imaging models) as 2-D ops over the depth taps (docs/onnx.md): the input is made
// depth-major ([N, D, C, H, W], a transpose), padded along the depth, and each of the KD kernel
// taps is the depth slice it reads for every output depth ([N, Dout, C, H, W]: a select, or a
// stride for a depth stride), seen as a batch of N x Dout images. A Conv stacks the taps on the
// channels ([N Dout, C KD, H, W], each input channel's taps side by side) and runs one 2-D
// convolution with the weight [OC, C / group KD, KH, KW], the same values reshaped: its FLOPs are
// the 3-D convolution's. A pool pools each tap in 2-D and combines the taps (maximum, or a sum
// divided by the depth taps counted). A ConvTranspose transposes each depth tap of its weight in
// 2-D over all N x D input images and places the results at their depths. The result [N Dout,
// C', H', W'] is made NCDHW again.
#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "lowerer.hpp"

namespace doppler::onnx_import {

/// The depth part of a 3-D window op: its kernel extent, stride, dilation, padding (the high
/// one: what the last window reads), output extent; ConvTranspose's output padding and wanted
/// output extent (-1: none).
struct Lowerer::DepthWindow {
  std::int64_t kernel = 1, stride = 1, dil = 1, pad_lo = 0, pad_hi = 0, out = 0;
  std::int64_t out_pad = 0, want = -1;
};

namespace {

// The depth entries of a 3-D window op's attributes.
struct DepthAttrs {
  std::int64_t kernel = 1, stride = 1, dil = 1, pad_lo = 0, pad_hi = 0, out_pad = 0, want = -1;
};

// Removes the depth (first) entry of the window attributes of `m`, a 3-D op rewritten as its 2-D
// op over H and W (pads [d0, h0, w0, d1, h1, w1] become [h0, w0, h1, w1]; an output_shape of 5
// entries loses N, C and D); returns the entries removed.
DepthAttrs take_depth(onnx::NodeProto& m) {
  DepthAttrs depth;
  for (auto& a : *m.mutable_attribute()) {
    const std::string& k = a.name();
    const bool pads = k == "pads", shape = k == "output_shape";
    if (k != "kernel_shape" && k != "strides" && k != "dilations" && k != "output_padding" &&
        !pads && !shape)
      continue;
    std::vector<std::int64_t> v(a.ints().begin(), a.ints().end());
    if (shape && v.size() == 5) v.erase(v.begin(), v.begin() + 2);
    if (v.size() != (pads ? 6u : 3u))
      throw std::runtime_error(
          fmt::format("{} must have {} entries for a 3-D window", k, pads ? 6 : 3));
    if (pads) {
      depth.pad_lo = v[0], depth.pad_hi = v[3];
      v = {v[1], v[2], v[4], v[5]};
    } else {
      std::int64_t& entry = k == "kernel_shape" ? depth.kernel
                            : k == "strides"    ? depth.stride
                            : k == "dilations"  ? depth.dil
                            : shape             ? depth.want
                                                : depth.out_pad;
      entry = v[0];
      v.erase(v.begin());
    }
    a.clear_ints();
    for (auto e : v) a.add_ints(e);
  }
  return depth;
}

// The weight taps [.., .., KH, KW] of depth `i` of a weight [A, B, KD, KH, KW].
HostTensor depth_tap(const HostTensor& w, std::int64_t i) {
  const std::int64_t kd = w.shape[2], kk = w.shape[3] * w.shape[4];
  HostTensor t;
  t.shape = {w.shape[0], w.shape[1], w.shape[3], w.shape[4]};
  for (std::int64_t q = 0; q < w.shape[0] * w.shape[1]; ++q) {
    const auto from = w.data.begin() + (q * kd + i) * kk;
    t.data.insert(t.data.end(), from, from + kk);
  }
  return t;
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
  const DepthAttrs a = take_depth(m);
  if (a.kernel < 1 || a.stride < 1 || a.dil < 1 || a.pad_lo < 0 || a.pad_hi < 0)
    throw std::runtime_error(
        "a 3-D window with a depth kernel, stride or dilation below 1 or negative pads");
  const auto* ap = find_attr(n, "auto_pad");
  const std::string mode = ap ? ap->s() : "NOTSET";
  const DepthWindow w{a.kernel, a.stride, a.dil, a.pad_lo, a.pad_hi, 0, a.out_pad, a.want};
  if (op == "ConvTranspose")
    conv_transpose_3d(n, std::move(m), w, mode);
  else
    window_3d(n, std::move(m), w, mode);
  return true;
}

// A 3-D Conv or pool: the depth window completed (the kernel from a Conv's weight, auto_pad,
// the output depth, the high padding the last window reads: less than the pads when they are not
// all used, more with ceil_mode), the taps, then the 2-D op `m` over them.
void Lowerer::window_3d(const onnx::NodeProto& n, onnx::NodeProto m, DepthWindow w,
                        const std::string& auto_pad) {
  const Shape x = in(n, 0).shape;
  const std::string& op = n.op_type();
  if (op == "Conv") {
    const HostTensor& weight = const_in(n, 1, "weight (W)");
    if (weight.shape.size() != 5) throw std::runtime_error("a 3-D weight must have rank 5");
    if (find_attr(n, "kernel_shape") && w.kernel != weight.shape[2])
      throw std::runtime_error("kernel_shape differs from the weight's");
    w.kernel = weight.shape[2];
  }
  if (op == "AveragePool" && w.dil != 1)
    throw std::runtime_error("dilations are not supported for this pool");
  if (auto_pad == "VALID") w.pad_lo = w.pad_hi = 0;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
    std::tie(w.pad_lo, w.pad_hi) =
        same_pads(auto_pad == "SAME_UPPER", x[2], w.kernel, w.stride, w.dil);
  const bool ceil = op != "Conv" && attr_int(n, "ceil_mode", 0) != 0;
  w.out = window_out(x[2], w.pad_lo, w.pad_hi, w.kernel, w.stride, w.dil, ceil);
  w.pad_hi = std::max<std::int64_t>(
      0, (w.out - 1) * w.stride + (w.kernel - 1) * w.dil + 1 - x[2] - w.pad_lo);
  const std::string base = out(n, ":3d");
  const double fill = op == "MaxPool" ? -std::numeric_limits<float>::max() : 0.0;
  const auto taps = depth_taps(base, blocked(n, 0), w, fill);
  const BlockedTensor& y =
      op == "Conv" ? conv_taps(n, std::move(m), taps, base) : pool_taps(base, m, taps, w, x[2]);
  const Shape& s = y.shape;  // [N Dout, C', H', W']
  const auto& split = reshaped(base + ".split", y, {x[0], w.out, s[1], s[2], s[3]});
  define(n.output(0), p_.transpose(out(n), split, {0, 2, 1, 3, 4}));
}

// A 3-D Conv's taps stacked on the channels and convolved by the 2-D Conv `m` with the weight
// [OC, C / group, KD, KH, KW] read as [OC, C / group KD, KH, KW] (the same values).
const BlockedTensor& Lowerer::conv_taps(const onnx::NodeProto& n, onnx::NodeProto m,
                                        const std::vector<const BlockedTensor*>& taps,
                                        const std::string& base) {
  define(base + ".x", stack_taps(base, taps));
  HostTensor w = const_in(n, 1, "weight (W)");
  w.shape = {w.shape[0], w.shape[1] * w.shape[2], w.shape[3], w.shape[4]};
  set_constant(base + ".w", std::move(w));
  m.set_input(0, base + ".x");
  m.set_input(1, base + ".w");
  m.clear_output();
  m.add_output(base + ".y");
  conv(m);
  return *values_.at(base + ".y").blocked;
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

// A 3-D ConvTranspose: x [N, C, D, H, W] as N D images; each depth tap i of the weight [C, OC /
// group, KD, KH, KW] a 2-D ConvTranspose of them (no bias), whose image z lands at depth z stride
// + i dil of the uncropped output; the taps interleaved along the depth (one tensor when no two
// of them reach a depth, else one per tap, shifted, and their sum), cropped to the output's
// depths, the bias added, made NCDHW.
void Lowerer::conv_transpose_3d(const onnx::NodeProto& n, onnx::NodeProto m, DepthWindow w,
                                const std::string& auto_pad) {
  const Shape x = in(n, 0).shape;
  const HostTensor& weight = const_in(n, 1, "weight (W)");
  if (weight.shape.size() != 5) throw std::runtime_error("a 3-D weight must have rank 5");
  if (find_attr(n, "kernel_shape") && w.kernel != weight.shape[2])
    throw std::runtime_error("kernel_shape differs from the weight's");
  w.kernel = weight.shape[2];
  if (w.out_pad < 0) throw std::runtime_error("output_padding must not be negative");
  w.out = transposed_out(x[2], w.kernel, w.stride, w.dil, w.out_pad, auto_pad, w.want, w.pad_lo,
                         w.pad_hi, w.pad_lo);
  if (w.out < 1) throw std::runtime_error("the padding leaves an empty output");
  const std::string base = out(n, ":3d");
  const auto& xt = p_.transpose(base + ".dhw", blocked(n, 0), {0, 2, 1, 3, 4});
  define(base + ".x", reshaped(base + ".x", xt, {x[0] * x[2], x[1], x[3], x[4]}));
  m.set_input(0, base + ".x");
  while (m.input_size() > 2) m.mutable_input()->RemoveLast();  // the bias: added once, below
  m.clear_output();
  std::vector<const BlockedTensor*> taps;
  for (std::int64_t i = 0; i < w.kernel; ++i) {
    const std::string name = fmt::format("{}.tap{}", base, i);
    set_constant(name + ".w", depth_tap(weight, i));
    onnx::NodeProto mi = m;
    mi.set_input(1, name + ".w");
    mi.add_output(name + ".y");
    conv_transpose(mi);
    const BlockedTensor& y = *values_.at(name + ".y").blocked;  // [N D, OC, H', W']
    taps.push_back(&reshaped(name + ".nd", y, {x[0], x[2], y.shape[1], y.shape[2], y.shape[3]}));
  }
  const BlockedTensor* sum = place_taps(base, taps, w);
  if (!sum) throw std::runtime_error("the padding leaves an empty output");
  if (const BlockedTensor* b = conv_bias(n, sum->shape[2])) {
    const auto& b5 = reshaped(base + ".bias", *b, {1, 1, sum->shape[2], 1, 1});
    sum = &map(base + ".biased", "add", {sum, &b5});
  }
  define(n.output(0), p_.transpose(out(n), *sum, {0, 2, 1, 3, 4}));
}

// The ConvTranspose taps [N, D, OC, H', W'] at their depths (image z of tap i at depth z stride
// + i dil of the uncropped output; several per depth summed), cropped to the output's depths
// pad_lo .. pad_lo + out - 1 (zeros where no tap reaches); nullptr when every tap is cropped.
const BlockedTensor* Lowerer::place_taps(const std::string& base,
                                         const std::vector<const BlockedTensor*>& taps,
                                         const DepthWindow& w) {
  // Groups of taps that reach distinct depths, each with the depth of its first slot.
  std::vector<std::pair<std::int64_t, const BlockedTensor*>> groups;
  if ((w.kernel - 1) * w.dil + 1 <= w.stride) {
    std::vector<const BlockedTensor*> slots(static_cast<std::size_t>(w.stride), nullptr);
    for (std::int64_t i = 0; i < w.kernel; ++i)
      slots[static_cast<std::size_t>(i * w.dil)] = taps[static_cast<std::size_t>(i)];
    groups.push_back({0, &interleave(base + ".taps", slots)});
  } else {
    for (std::int64_t i = 0; i < w.kernel; ++i) {
      std::vector<const BlockedTensor*> slots(static_cast<std::size_t>(w.stride), nullptr);
      slots[0] = taps[static_cast<std::size_t>(i)];
      groups.push_back({i * w.dil, &interleave(fmt::format("{}.tap{}.at", base, i), slots)});
    }
  }
  const BlockedTensor* sum = nullptr;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& [first, t] = groups[g];  // depths first .. first + D stride - 1
    const std::int64_t lo = std::max(w.pad_lo, first);
    const std::int64_t hi = std::min(w.pad_lo + w.out, first + t->shape[1]);
    if (lo >= hi) continue;  // cropped away
    Shape offset(5, 0), length = t->shape;
    offset[1] = lo - first;
    length[1] = hi - lo;
    const std::string name = fmt::format("{}.group{}", base, g);
    const BlockedTensor* part = &select(name + ".crop", *t, offset, length);
    std::vector<const BlockedTensor*> parts;
    if (lo > w.pad_lo)
      parts.push_back(&pad_part(name + ".before", *part, 1, lo - w.pad_lo, true, "constant", 0));
    parts.push_back(part);
    if (hi < w.pad_lo + w.out)
      parts.push_back(
          &pad_part(name + ".after", *part, 1, w.pad_lo + w.out - hi, false, "constant", 0));
    if (parts.size() > 1) part = &p_.concat(name, parts, 1);
    sum = sum ? &map(name + ".sum", "add", {sum, part}) : part;
  }
  return sum;
}

// The tensors [N, D, C, H, W] of `slots` (nullptr: zeros) side by side along the depth: [N, D
// stride, C, H, W], depth z stride + s slot s's depth z (stride = the slots' count).
const BlockedTensor& Lowerer::interleave(const std::string& name,
                                         const std::vector<const BlockedTensor*>& slots) {
  if (slots.size() == 1) return *slots.front();
  std::vector<const BlockedTensor*> rows(slots.size(), nullptr);  // [N, D, 1, C, H, W] each
  const BlockedTensor* like = nullptr;
  for (std::size_t k = 0; k < slots.size(); ++k) {
    if (!slots[k]) continue;
    const Shape& s = slots[k]->shape;
    rows[k] =
        &reshaped(fmt::format("{}.slot{}", name, k), *slots[k], {s[0], s[1], 1, s[2], s[3], s[4]});
    like = like ? like : rows[k];
  }
  std::vector<const BlockedTensor*> parts;
  for (std::size_t k = 0; k < rows.size();) {
    std::size_t run = k;
    while (run < rows.size() && !rows[run]) ++run;
    if (run > k)  // zeros for the empty slots k .. run - 1
      parts.push_back(&pad_part(fmt::format("{}.zeros{}", name, k), *like, 2,
                                static_cast<std::int64_t>(run - k), false, "constant", 0));
    if (run < rows.size()) parts.push_back(rows[run]);
    k = run + 1;
  }
  const Shape& s = like->shape;
  return reshaped(name, p_.concat(name + ".joined", parts, 2),
                  {s[0], s[1] * static_cast<std::int64_t>(slots.size()), s[3], s[4], s[5]});
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
