// Lowering of Resize (opsets 10-17) and Upsample of 1-D, 2-D and 3-D tensors: kernel resize2d,
// the depth of a 3-D one first by selects and a blend (docs/onnx.md, docs/exec.md).
#include <cmath>
#include <initializer_list>
#include <stdexcept>

#include <fmt/format.h>

#include "lowerer.hpp"

namespace doppler::onnx_import {

namespace {

// The index of `name` in `names`, or an error listing them.
int choice(const std::string& what, const std::string& name,
           std::initializer_list<const char*> names) {
  int i = 0;
  std::string all;
  for (const char* c : names) {
    if (name == c) return i;
    all += (i++ ? ", " : "") + std::string(c);
  }
  throw std::runtime_error(what + " '" + name + "' is not supported (" + all + ")");
}

std::string string_attr(const onnx::NodeProto& n, const std::string& name,
                        const std::string& fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : fallback;
}

}  // namespace

// How Resize (opset 11+) or Resize-10 / Upsample (asymmetric, nearest rounding down) maps
// positions.
workloads::Resize2d Lowerer::resize_mode(const onnx::NodeProto& n) const {
  workloads::Resize2d r;
  r.linear = choice("mode", string_attr(n, "mode", "nearest"), {"nearest", "linear"}) == 1;
  if (n.op_type() == "Upsample" || opset_ < 11) {
    r.coord = resize::Coord::asymmetric;
    r.rounding = resize::Rounding::floor;
    return r;
  }
  r.coord = static_cast<resize::Coord>(
      choice("coordinate_transformation_mode",
             string_attr(n, "coordinate_transformation_mode", "half_pixel"),
             {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
              "tf_half_pixel_for_nearest"}));
  r.rounding = static_cast<resize::Rounding>(
      choice("nearest_mode", string_attr(n, "nearest_mode", "round_prefer_floor"),
             {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}));
  return r;
}

// Resize / Upsample of the spatial axes of an NCHW tensor, of an NCL one as [N, C, L, 1] (kernel
// resize2d), or of an NCDHW one: the depth first (resize_depth), then the rows and columns of the
// N x C x D' images.
void Lowerer::resize(const onnx::NodeProto& n) {
  const Shape x = in(n, 0).shape;
  const std::size_t rank = x.size();
  if (rank < 3 || rank > 5)
    throw std::runtime_error("only 3-D (NCL), 4-D (NCHW) and 5-D (NCDHW) " + n.op_type() +
                             " is supported");
  workloads::Resize2d r = resize_mode(n);
  // Scales: the attribute (Upsample-7), input 1 (opset < 11) or 2; else sizes (input 3).
  std::vector<double> scales;
  const std::size_t si = n.op_type() == "Upsample" || opset_ < 11 ? 1 : 2;
  if (n.op_type() == "Upsample" && opset_ < 9) {
    const auto* a = find_attr(n, "scales");
    if (a) scales.assign(a->floats().begin(), a->floats().end());
  } else if (has_in(n, si)) {
    scales = const_in(n, si, "scales").data;
  }
  Shape out_shape = x;
  if (!scales.empty()) {
    if (scales.size() != rank)
      throw std::runtime_error(fmt::format("scales must have {} entries", rank));
    for (std::size_t a = 0; a < rank; ++a) {
      if (!(scales[a] > 0)) throw std::runtime_error("scales must be positive");
      out_shape[a] = static_cast<std::int64_t>(std::floor(static_cast<double>(x[a]) * scales[a]));
    }
  } else if (si == 2 && has_in(n, 3)) {
    out_shape = const_in(n, 3, "sizes").ints();
    if (out_shape.size() != rank)
      throw std::runtime_error(fmt::format("sizes must have {} entries", rank));
    scales.assign(rank, 0);  // the kernel's scale 0: out / in
  } else {
    throw std::runtime_error(n.op_type() + " needs constant scales or sizes");
  }
  if (out_shape[0] != x[0] || out_shape[1] != x[1])
    throw std::runtime_error("only the spatial axes may be resized (N and C unchanged)");
  for (std::size_t a = 2; a < rank; ++a)
    if (out_shape[a] < 1)
      throw std::runtime_error(fmt::format("the output {} is empty", fmt::join(out_shape, "x")));
  if (r.rounding == resize::Rounding::floor && r.coord == resize::Coord::asymmetric && !r.linear &&
      si == 1)
    for (std::size_t a = 2; a < rank; ++a)
      if (out_shape[a] < x[a])
        throw std::runtime_error("nearest downsampling is not supported before opset 11");
  if (rank == 3) {  // as [N, C, L, 1]
    r.scale_h = scales[2], r.scale_w = 1.0;  // the width of 1 kept
    const auto& in4 = reshaped(out(n, ":2d.x"), blocked(n, 0), {x[0], x[1], x[2], 1});
    const Shape o4 = {x[0], x[1], out_shape[2], 1};
    const auto& y = p_.resize2d(out(n, ":2d.y"), in4, r, o4[2], 1, nchw_cuts(out(n, ":2d.y"), o4));
    define(n.output(0), reshaped(out(n), y, out_shape));
    return;
  }
  r.scale_h = scales[rank - 2], r.scale_w = scales[rank - 1];
  if (rank == 4) {
    define(n.output(0), p_.resize2d(out(n), blocked(n, 0), r, out_shape[2], out_shape[3],
                                    nchw_cuts(out(n), out_shape)));
    return;
  }
  const BlockedTensor& d = resize_depth(n, r, out_shape[2], scales[2]);  // [N, C, D', H, W]
  const Shape images = {x[0], x[1] * out_shape[2], x[3], x[4]};
  const Shape o4 = {x[0], x[1] * out_shape[2], out_shape[3], out_shape[4]};
  const auto& y = p_.resize2d(out(n, ":2d.y"), reshaped(out(n, ":2d.x"), d, images), r, o4[2],
                              o4[3], nchw_cuts(out(n, ":2d.y"), o4));
  define(n.output(0), reshaped(out(n), y, out_shape));
}

// The depth axis of x [N, C, D, H, W] resized to `depth` (scale `scale`, 0: depth / D) by `r`'s
// rule: nearest, the depth slice each output depth reads (selects, concatenated); linear, the
// two it interpolates, g0 + (g1 - g0) w1 with w1 a constant per output depth (3 FLOPs per
// element). x itself when every output depth reads its own.
const BlockedTensor& Lowerer::resize_depth(const onnx::NodeProto& n, const workloads::Resize2d& r,
                                           std::int64_t depth, double scale) {
  const BlockedTensor& x = blocked(n, 0);
  const resize::Axis axis{
      r.coord, scale > 0 ? scale : static_cast<double>(depth) / static_cast<double>(x.shape[2]),
      x.shape[2], depth};
  std::vector<std::int64_t> i0, i1;
  HostTensor w1{{1, 1, depth, 1, 1}, {}, false};
  bool identity = depth == x.shape[2], blend = false;
  for (std::int64_t o = 0; o < depth; ++o) {
    const resize::Taps t = r.linear ? resize::linear(axis, o)
                                    : resize::Taps{resize::nearest(axis, r.rounding, o), 0, 0};
    i0.push_back(t.i0), i1.push_back(r.linear ? t.i1 : t.i0), w1.data.push_back(t.w1);
    identity = identity && t.i0 == o && t.w1 == 0;
    blend = blend || t.w1 != 0;
  }
  if (identity) return x;
  const auto slices = [&](const std::string& name, const std::vector<std::int64_t>& at) {
    std::vector<const BlockedTensor*> parts;
    for (std::int64_t o = 0; o < depth; ++o) {
      Shape offset(5, 0), length = x.shape;
      offset[2] = at[static_cast<std::size_t>(o)], length[2] = 1;
      parts.push_back(&select(fmt::format("{}[{}]", name, o), x, offset, length));
    }
    return &p_.concat(name, parts, 2);
  };
  const BlockedTensor* g0 = slices(out(n, ":depth0"), i0);
  if (!blend) return *g0;
  const BlockedTensor* g1 = slices(out(n, ":depth1"), i1);
  const auto& diff = map(out(n, ":ddiff"), "sub", {g1, g0});
  const auto& part = map(out(n, ":dpart"), "mul", {&diff, &load(out(n, ":dweight"), w1)});
  return map(out(n, ":depth"), "add", {g0, &part});
}

}  // namespace doppler::onnx_import
