// Lowering of the convolutional ops: Conv, ConvTranspose, MaxPool, AveragePool,
// GlobalAveragePool, BatchNormalization (inference), Clip, HardSigmoid, HardSwish and Pad
// (docs/onnx.md).
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "lowerer.hpp"

namespace doppler::onnx_import {

std::pair<std::int64_t, std::int64_t> same_pads(bool upper, std::int64_t in, std::int64_t kernel,
                                                std::int64_t stride, std::int64_t dil) {
  const std::int64_t out = (in + stride - 1) / stride;
  const std::int64_t total =
      std::max<std::int64_t>(0, (out - 1) * stride + (kernel - 1) * dil + 1 - in);
  const std::int64_t small = total / 2, big = total - small;
  return upper ? std::pair{small, big} : std::pair{big, small};
}

std::int64_t window_out(std::int64_t in, std::int64_t pad_lo, std::int64_t pad_hi,
                        std::int64_t kernel, std::int64_t stride, std::int64_t dil, bool ceil) {
  const std::int64_t span = (kernel - 1) * dil + 1, padded = in + pad_lo + pad_hi;
  if (span > padded)
    throw std::runtime_error(fmt::format(
        "the kernel ({} with dilation) is larger than the padded input ({})", span, padded));
  std::int64_t out = (padded - span) / stride + 1;
  if (ceil && (padded - span) % stride != 0 && (out * stride - pad_lo) < in) ++out;
  return out;
}

namespace {

// Pads [top, left, bottom, right] of a 2-D window op from `pads` or `auto_pad`.
std::array<std::int64_t, 4> window_pads(const onnx::NodeProto& n, const Shape& x,
                                        const workloads::Window2d& g) {
  const auto* ap = find_attr(n, "auto_pad");
  const std::string mode = ap ? ap->s() : "NOTSET";
  if (mode == "NOTSET") {
    const auto p = attr_ints(n, "pads");
    if (p.empty()) return {0, 0, 0, 0};
    if (p.size() != 4) throw std::runtime_error("pads must have 4 entries for a 2-D window");
    for (auto v : p)
      if (v < 0) throw std::runtime_error("negative pads are not supported");
    return {p[0], p[1], p[2], p[3]};
  }
  if (mode == "VALID") return {0, 0, 0, 0};
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER")
    throw std::runtime_error("auto_pad '" + mode + "' is not supported");
  std::array<std::int64_t, 4> pads{};
  const std::int64_t in[2] = {x[2], x[3]}, k[2] = {g.kernel_h, g.kernel_w},
                     s[2] = {g.stride_h, g.stride_w}, d[2] = {g.dil_h, g.dil_w};
  for (std::size_t a = 0; a < 2; ++a)
    std::tie(pads[a], pads[a + 2]) = same_pads(mode == "SAME_UPPER", in[a], k[a], s[a], d[a]);
  return pads;
}

// Strides and dilations (2 entries each, default 1) of node `n`.
void read_strides(const onnx::NodeProto& n, workloads::Window2d& g, bool dilations) {
  const auto s = attr_ints(n, "strides");
  if (!s.empty() && (s.size() != 2 || s[0] < 1 || s[1] < 1))
    throw std::runtime_error("strides must be 2 positive entries for a 2-D window");
  if (!s.empty()) g.stride_h = s[0], g.stride_w = s[1];
  const auto d = attr_ints(n, "dilations");
  if (!d.empty() && (d.size() != 2 || d[0] < 1 || d[1] < 1))
    throw std::runtime_error("dilations must be 2 positive entries for a 2-D window");
  if (!d.empty() && !dilations && (d[0] != 1 || d[1] != 1))
    throw std::runtime_error("dilations are not supported for this pool");
  if (!d.empty()) g.dil_h = d[0], g.dil_w = d[1];
}

// A convolution's kernel extent from its weight [.., .., KH, KW] (kernel_shape must agree), its
// strides and dilations.
void kernel_of_weight(const onnx::NodeProto& n, const HostTensor& w, workloads::Window2d& g) {
  g.kernel_h = w.shape[2];
  g.kernel_w = w.shape[3];
  const auto ks = attr_ints(n, "kernel_shape");
  if (!ks.empty() && (ks.size() != 2 || ks[0] != g.kernel_h || ks[1] != g.kernel_w))
    throw std::runtime_error("kernel_shape differs from the weight's");
  read_strides(n, g, true);
}

}  // namespace

const BlockedTensor* Lowerer::conv_bias(const onnx::NodeProto& n, std::int64_t oc) {
  if (!has_in(n, 2)) return nullptr;
  const HostTensor& b = const_in(n, 2, "bias (B)");
  if (b.shape != Shape{oc})
    throw std::runtime_error("the bias must have one value per output channel");
  return &blocked(n, 2);
}

// Conv, ConvTranspose, MaxPool and AveragePool of an NCL tensor (1-D: speech and audio
// models) as the 2-D op of [N, C, L, 1]: the input reshaped, a weight [a, b, K] as [a, b, K, 1],
// the window attributes given a width of 1 (kernel, stride and dilation 1, no padding), the
// output reshaped back to [N, C', L']. The length is the height, so the partition rule cuts it
// (with the halo rows each block needs) as it cuts an image's rows.
bool Lowerer::lower_1d(const onnx::NodeProto& n, Op op) {
  const Shape x = in(n, 0).shape;
  if (x.size() != 3) return false;
  onnx::NodeProto m = n;
  const std::string base = out(n, ":2d");
  define(base + ".x", reshaped(base + ".x", blocked(n, 0), {x[0], x[1], x[2], 1}));
  m.set_input(0, base + ".x");
  if (n.op_type() == "Conv" || n.op_type() == "ConvTranspose") {
    HostTensor w = const_in(n, 1, "weight (W)");
    if (w.shape.size() != 3) throw std::runtime_error("a 1-D weight must have rank 3");
    w.shape.push_back(1);
    set_constant(base + ".w", std::move(w));
    m.set_input(1, base + ".w");
  }
  for (auto& a : *m.mutable_attribute()) {
    const std::string& k = a.name();
    if (k != "kernel_shape" && k != "strides" && k != "dilations" && k != "pads" &&
        k != "output_padding" && k != "output_shape")
      continue;
    std::vector<std::int64_t> v(a.ints().begin(), a.ints().end());
    if (v.size() != (k == "pads" ? 2u : 1u))
      throw std::runtime_error(
          fmt::format("{} must have {} entries for a 1-D window", k, k == "pads" ? 2 : 1));
    const std::int64_t flat = k == "pads" || k == "output_padding" ? 0 : 1;
    v.insert(v.begin() + 1, flat);  // pads: [begin, 0, end, 0]
    if (k == "pads") v.push_back(0);
    a.clear_ints();
    for (auto e : v) a.add_ints(e);
  }
  m.clear_output();
  m.add_output(base + ".y");
  (this->*op)(m);
  const Value& y = values_.at(base + ".y");
  define(n.output(0), reshaped(out(n), *y.blocked, {y.shape[0], y.shape[1], y.shape[2]}));
  return true;
}

std::vector<Cuts> Lowerer::nchw_cuts(const std::string& tensor, const Shape& shape) const {
  if (options_.partition.count(tensor)) {
    auto cuts = cuts_for(tensor, shape, nullptr);
    if (cuts[3].size() != 2)
      throw std::runtime_error("--partition " + tensor +
                               ": the width (last) dimension of a "
                               "convolution or pooling output is never cut");
    return cuts;
  }
  auto parts = auto_parts({shape[0], shape[1], shape[2]}, options_.devices);
  parts.push_back(1);
  return workloads::even_grid(shape, parts);
}

void Lowerer::conv(const onnx::NodeProto& n) {
  if (lower_1d(n, &Lowerer::conv) || lower_3d(n)) return;
  const Shape x = in(n, 0).shape;
  if (x.size() != 4)
    throw std::runtime_error("only 1-D, 2-D and 3-D Conv (NCL, NCHW, NCDHW) is supported");
  const HostTensor& w = const_in(n, 1, "weight (W)");
  if (w.shape.size() != 4) throw std::runtime_error("the weight must be OIHW (rank 4)");
  workloads::Window2d g;
  g.groups = attr_int(n, "group", 1);
  const std::int64_t oc = w.shape[0];
  if (g.groups < 1 || x[1] % g.groups != 0 || oc % g.groups != 0)
    throw std::runtime_error(
        fmt::format("group {} does not divide the {} input and {} output "
                    "channels",
                    g.groups, x[1], oc));
  if (w.shape[1] != x[1] / g.groups)
    throw std::runtime_error(
        fmt::format("the weight has {} input channels per group, the input "
                    "{} / {} groups",
                    w.shape[1], x[1], g.groups));
  kernel_of_weight(n, w, g);
  const auto pads = window_pads(n, x, g);
  g.pad_h = pads[0];
  g.pad_w = pads[1];
  const std::int64_t oh =
      window_out(x[2], pads[0], pads[2], g.kernel_h, g.stride_h, g.dil_h, false);
  const std::int64_t ow =
      window_out(x[3], pads[1], pads[3], g.kernel_w, g.stride_w, g.dil_w, false);
  const BlockedTensor* bias = conv_bias(n, oc);
  const Shape out_shape = {x[0], oc, oh, ow};
  define(n.output(0), p_.conv2d(out(n), blocked(n, 0), blocked(n, 1), bias, g, oh, ow,
                                nchw_cuts(out(n), out_shape)));
}

std::int64_t transposed_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                            std::int64_t out_pad, const std::string& auto_pad, std::int64_t want,
                            std::int64_t pad_lo_attr, std::int64_t pad_hi_attr,
                            std::int64_t& pad_lo) {
  const std::int64_t full = s * (in - 1) + out_pad + (k - 1) * d + 1;
  if (want < 0 && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")) want = in * s;
  if (want < 0) {
    pad_lo = auto_pad == "VALID" ? 0 : pad_lo_attr;
    return full - pad_lo - (auto_pad == "VALID" ? 0 : pad_hi_attr);
  }
  const std::int64_t total = full - want;
  if (total < 0)
    throw std::runtime_error(fmt::format(
        "output_shape {} is beyond the transposed convolution's extent {}", want, full));
  pad_lo = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
  return want;
}

namespace {

// W'[o, ci, ky, kx] = W[g icg + ci, o - g opg, ky, kx], g = o / opg: ConvTranspose's weight
// [C, OC / groups, KH, KW] regrouped by output channel, as conv2d's.
HostTensor regrouped_weight(const HostTensor& w, std::int64_t groups) {
  const std::int64_t c = w.shape[0], opg = w.shape[1], kk = w.shape[2] * w.shape[3];
  const std::int64_t icg = c / groups, oc = opg * groups;
  HostTensor r;
  r.shape = {oc, icg, w.shape[2], w.shape[3]};
  r.data.resize(w.data.size());
  for (std::int64_t o = 0; o < oc; ++o)
    for (std::int64_t ci = 0; ci < icg; ++ci) {
      const std::int64_t g = o / opg, src = ((g * icg + ci) * opg + (o - g * opg)) * kk;
      std::copy_n(w.data.begin() + src, kk, r.data.begin() + (o * icg + ci) * kk);
    }
  return r;
}

}  // namespace

void Lowerer::conv_transpose(const onnx::NodeProto& n) {
  if (lower_1d(n, &Lowerer::conv_transpose) || lower_3d(n)) return;
  const Shape x = in(n, 0).shape;
  if (x.size() != 4)
    throw std::runtime_error("only 1-D, 2-D and 3-D ConvTranspose (NCL, NCHW, NCDHW) is supported");
  const HostTensor& w = const_in(n, 1, "weight (W)");
  if (w.shape.size() != 4)
    throw std::runtime_error("the weight must be [C, OC / group, KH, KW] (rank 4)");
  workloads::Window2d g;
  g.groups = attr_int(n, "group", 1);
  if (g.groups < 1 || x[1] % g.groups != 0 || w.shape[0] != x[1])
    throw std::runtime_error(
        fmt::format("the weight has {} input channels for an input of {} in {} groups", w.shape[0],
                    x[1], g.groups));
  const std::int64_t oc = w.shape[1] * g.groups;
  kernel_of_weight(n, w, g);
  const auto* ap = find_attr(n, "auto_pad");
  const std::string auto_pad = ap ? ap->s() : "NOTSET";
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    throw std::runtime_error("auto_pad '" + auto_pad + "' is not supported");
  auto pads = attr_ints(n, "pads"), out_pad = attr_ints(n, "output_padding");
  auto os = attr_ints(n, "output_shape");
  if (pads.empty()) pads.assign(4, 0);
  if (out_pad.empty()) out_pad.assign(2, 0);
  if (pads.size() != 4 || out_pad.size() != 2 || (!os.empty() && os.size() != 2 && os.size() != 4))
    throw std::runtime_error("pads, output_padding and output_shape must be 2-D");
  for (auto v : pads)
    if (v < 0) throw std::runtime_error("negative pads are not supported");
  for (auto v : out_pad)
    if (v < 0) throw std::runtime_error("output_padding must not be negative");
  if (os.size() == 4) os.erase(os.begin(), os.begin() + 2);
  std::int64_t pad[2] = {0, 0}, extent[2] = {0, 0};
  const std::int64_t k[2] = {g.kernel_h, g.kernel_w}, s[2] = {g.stride_h, g.stride_w},
                     d[2] = {g.dil_h, g.dil_w};
  for (std::size_t a = 0; a < 2; ++a) {
    extent[a] = transposed_out(x[a + 2], k[a], s[a], d[a], out_pad[a], auto_pad,
                               os.empty() ? -1 : os[a], pads[a], pads[a + 2], pad[a]);
    if (extent[a] < 1) throw std::runtime_error("the padding leaves an empty output");
  }
  g.pad_h = pad[0];
  g.pad_w = pad[1];
  const BlockedTensor* bias = conv_bias(n, oc);
  const Shape out_shape = {x[0], oc, extent[0], extent[1]};
  const auto& wr = load(out(n, ":weight"), regrouped_weight(w, g.groups));
  define(n.output(0), p_.conv_transpose2d(out(n), blocked(n, 0), wr, bias, g, extent[0], extent[1],
                                          nchw_cuts(out(n), out_shape)));
}

void Lowerer::pool(const onnx::NodeProto& n) {
  if (n.output_size() > 1 && !n.output(1).empty())
    throw std::runtime_error("MaxPool's Indices output is not supported");
  if (lower_1d(n, &Lowerer::pool) || lower_3d(n)) return;
  const Shape x = in(n, 0).shape;
  if (x.size() != 4)
    throw std::runtime_error("only 1-D, 2-D and 3-D " + n.op_type() +
                             " (NCL, NCHW, NCDHW) is supported");
  if (attr_int(n, "storage_order", 0) != 0)
    throw std::runtime_error("storage_order 1 is not supported");
  workloads::Window2d g;
  const auto ks = attr_ints(n, "kernel_shape");
  if (ks.size() != 2 || ks[0] < 1 || ks[1] < 1)
    throw std::runtime_error("kernel_shape must be 2 positive entries");
  g.kernel_h = ks[0];
  g.kernel_w = ks[1];
  const bool max = n.op_type() == "MaxPool";
  read_strides(n, g, max);
  g.count_include_pad = attr_int(n, "count_include_pad", 0) != 0;
  const auto pads = window_pads(n, x, g);
  g.pad_h = pads[0];
  g.pad_w = pads[1];
  const bool ceil = attr_int(n, "ceil_mode", 0) != 0;
  if (ceil && !max && g.count_include_pad)
    throw std::runtime_error("AveragePool with ceil_mode and count_include_pad is not supported");
  const std::int64_t oh = window_out(x[2], pads[0], pads[2], g.kernel_h, g.stride_h, g.dil_h, ceil);
  const std::int64_t ow = window_out(x[3], pads[1], pads[3], g.kernel_w, g.stride_w, g.dil_w, ceil);
  const Shape out_shape = {x[0], x[1], oh, ow};
  define(n.output(0), p_.pool2d(out(n), max ? "maxpool2d" : "avgpool2d", blocked(n, 0), g, oh, ow,
                                nchw_cuts(out(n), out_shape)));
}

// GlobalAveragePool, the mean over the spatial axes: [N, C, D...] -> [N, C, prod D] ->
// reduce_sum -> scale 1 / prod D -> [N, C, 1...]; GlobalMaxPool their maximum (reduce_max).
void Lowerer::global_avg_pool(const onnx::NodeProto& n) {
  const Shape x = in(n, 0).shape;
  if (x.size() < 3) throw std::runtime_error(n.op_type() + " of a tensor of rank below 3");
  std::int64_t rest = 1;
  for (std::size_t d = 2; d < x.size(); ++d) rest *= x[d];
  const bool max = n.op_type() == "GlobalMaxPool";
  const auto& flat = reshaped(out(n, ":flat"), blocked(n, 0), {x[0], x[1], rest});
  const BlockedTensor* r =
      &p_.reduce(out(n, max ? ":max" : ":sum"), max ? "reduce_max" : "reduce_sum", flat);
  if (!max) r = &map(out(n, ":mean"), "scale", {r}, {{"scale", 1.0 / static_cast<double>(rest)}});
  Shape ones(x.size(), 1);
  ones[0] = x[0], ones[1] = x[1];
  define(n.output(0), reshaped(out(n), *r, ones));
}

// Inference BatchNormalization as x * s + t with s = gamma / sqrt(var + eps), t = beta - mean s
// (constants of shape [C, 1, ..., 1]).
void Lowerer::batch_norm(const onnx::NodeProto& n) {
  const Shape x = in(n, 0).shape;
  if (x.size() < 2) throw std::runtime_error("BatchNormalization of a tensor of rank below 2");
  if (attr_int(n, "training_mode", 0) != 0)
    throw std::runtime_error("BatchNormalization in training mode is not supported");
  const double eps = attr_float(n, "epsilon", 1e-5);
  const char* what[4] = {"scale", "B", "input_mean", "input_var"};
  std::vector<const HostTensor*> p;
  for (std::size_t i = 0; i < 4; ++i) {
    p.push_back(&const_in(n, i + 1, what[i]));
    if (p.back()->shape != Shape{x[1]})
      throw std::runtime_error(
          fmt::format("{} must have one value per channel ({})", what[i], x[1]));
  }
  Shape cshape(x.size() - 1, 1);
  cshape[0] = x[1];
  HostTensor s, t;
  s.shape = t.shape = cshape;
  for (std::int64_t c = 0; c < x[1]; ++c) {
    const auto i = static_cast<std::size_t>(c);
    const double k = p[0]->data[i] / std::sqrt(p[3]->data[i] + eps);
    s.data.push_back(k);
    t.data.push_back(p[1]->data[i] - p[2]->data[i] * k);
  }
  const auto& scaled = map(out(n, ":scaled"), "mul", {&blocked(n, 0), &load(out(n, ":s"), s)});
  define(n.output(0), map(out(n), "add", {&scaled, &load(out(n, ":t"), t)}));
}

void Lowerer::clip(const onnx::NodeProto& n) {
  double lo = -std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::max();
  if (opset_ < 11) {
    lo = attr_float(n, "min", lo);
    hi = attr_float(n, "max", hi);
  } else {
    if (has_in(n, 1)) lo = const_in(n, 1, "min").data.at(0);
    if (has_in(n, 2)) hi = const_in(n, 2, "max").data.at(0);
  }
  // An infinite bound is no bound: the f32 extreme, as when the bound is absent.
  lo = std::max(lo, -static_cast<double>(std::numeric_limits<float>::max()));
  hi = std::min(hi, static_cast<double>(std::numeric_limits<float>::max()));
  if (std::isnan(lo) || std::isnan(hi)) throw std::runtime_error("Clip with a NaN bound");
  if (lo > hi) throw std::runtime_error(fmt::format("Clip with min {} above max {}", lo, hi));
  define(n.output(0), map(out(n), "clip", {&blocked(n, 0)}, {{"min", lo}, {"max", hi}}));
}

void Lowerer::hard_sigmoid(const onnx::NodeProto& n) {
  if (n.op_type() == "HardSwish") {
    define(n.output(0), map(out(n), "hardswish", {&blocked(n, 0)}));
    return;
  }
  define(n.output(0),
         map(out(n), "hardsigmoid", {&blocked(n, 0)},
             {{"alpha", attr_float(n, "alpha", 0.2)}, {"beta", attr_float(n, "beta", 0.5)}}));
}

// Constant-mode Pad: along each padded axis, concat(fill(pad before), x, fill(pad after)).
void Lowerer::pad(const onnx::NodeProto& n) {
  const Shape x = in(n, 0).shape;
  const auto* mode_attr = find_attr(n, "mode");
  const std::string mode = mode_attr ? mode_attr->s() : "constant";
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    throw std::runtime_error("Pad mode '" + mode + "' is not supported (constant, reflect, edge)");
  std::vector<std::int64_t> pads =
      opset_ < 11 ? attr_ints(n, "pads") : const_in(n, 1, "pads").ints();
  double value = opset_ < 11 ? attr_float(n, "value", 0) : 0;
  if (opset_ >= 11 && has_in(n, 2)) value = const_in(n, 2, "constant_value").data.at(0);
  if (opset_ >= 18 && has_in(n, 3)) throw std::runtime_error("Pad with axes is not supported");
  if (pads.size() != 2 * x.size())
    throw std::runtime_error(
        fmt::format("Pad: {} pads for a rank-{} input", pads.size(), x.size()));
  const BlockedTensor* t = &blocked(n, 0);
  if (t->blocks.empty()) t = &p_.ensure_layout(*t, std::vector<std::optional<Cuts>>(x.size()));
  for (std::size_t a = 0; a < x.size(); ++a) {
    const std::int64_t before = pads[a], after = pads[a + x.size()];
    const std::string axis = out(n, fmt::format(":axis{}", a));
    if (before < 0 || after < 0) {  // a crop first
      const std::int64_t n = t->shape[a], lo = std::max<std::int64_t>(-before, 0),
                         hi = std::max<std::int64_t>(-after, 0);
      if (lo >= n || hi >= n - lo)
        throw std::runtime_error("Pad: negative pads remove the whole axis");
      Shape off(x.size(), 0), len = t->shape;
      off[a] = lo;
      len[a] = n - lo - hi;
      t = &select(axis + ":crop", *t, off, len);
    }
    if (before <= 0 && after <= 0) continue;
    std::vector<const BlockedTensor*> parts;
    if (before > 0) parts.push_back(&pad_part(axis + ":before", *t, a, before, true, mode, value));
    parts.push_back(t);
    if (after > 0) parts.push_back(&pad_part(axis + ":after", *t, a, after, false, mode, value));
    t = &p_.concat(axis, parts, static_cast<int>(a));
  }
  define(n.output(0), *t);
}

// The `extent` elements Pad puts before (or after) t along axis a: `value` (constant), t's
// elements mirrored about its first (last) one (reflect: a stride of step -1), or its first
// (last) element repeated (edge: a select expanded).
const BlockedTensor& Lowerer::pad_part(const std::string& name, const BlockedTensor& t,
                                       std::size_t a, std::int64_t extent, bool before,
                                       const std::string& mode, double value) {
  const std::int64_t n = t.shape[a];
  Shape s = t.shape;
  s[a] = extent;
  if (mode == "constant") {
    std::vector<Cuts> cuts = t.cuts;
    cuts[a] = Cuts{0, extent};
    return p_.fill(name, s, cuts, {{"value", value}});
  }
  Shape off(t.shape.size(), 0);
  if (mode == "reflect") {
    if (extent > n - 1)
      throw std::runtime_error(
          fmt::format("Pad: reflect pads of {} on an axis of {} (at most {})", extent, n, n - 1));
    off[a] = before ? 1 : n - 1 - extent;
    return p_.strided(name, t, off, s, static_cast<int>(a), -1);
  }
  Shape one = t.shape;  // edge
  one[a] = 1;
  off[a] = before ? 0 : n - 1;
  const BlockedTensor& e = select(name + ":edge", t, off, one);
  std::vector<Cuts> cuts = e.cuts;
  cuts[a] = Cuts{0, extent};
  return p_.expand(name, e, s, cuts);
}

}  // namespace doppler::onnx_import
