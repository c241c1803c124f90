// Lowering of Resize (opsets 10-17) and Upsample: kernel resize2d (docs/onnx.md, docs/exec.md).
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

// Resize / Upsample of the spatial axes of an NCHW tensor, or of an NCL one as [N, C, L, 1]
// (kernel resize2d).
void Lowerer::resize(const onnx::NodeProto& n) {
  const Shape x0 = in(n, 0).shape;
  if (x0.size() != 3 && x0.size() != 4)
    throw std::runtime_error("only 3-D (NCL) and 4-D (NCHW) " + n.op_type() + " is supported");
  const bool flat = x0.size() == 3;  // as [N, C, L, 1]
  const Shape x = flat ? Shape{x0[0], x0[1], x0[2], 1} : x0;
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
    if (scales.size() != x0.size())
      throw std::runtime_error(fmt::format("scales must have {} entries", x0.size()));
    if (flat) scales.push_back(1.0);
    for (std::size_t a = 0; a < 4; ++a) {
      if (!(scales[a] > 0)) throw std::runtime_error("scales must be positive");
      out_shape[a] = static_cast<std::int64_t>(std::floor(static_cast<double>(x[a]) * scales[a]));
    }
    r.scale_h = scales[2];
    r.scale_w = scales[3];
  } else if (si == 2 && has_in(n, 3)) {
    out_shape = const_in(n, 3, "sizes").ints();
    if (out_shape.size() != x0.size())
      throw std::runtime_error(fmt::format("sizes must have {} entries", x0.size()));
    if (flat) out_shape.push_back(1);
  } else {
    throw std::runtime_error(n.op_type() + " needs constant scales or sizes");
  }
  if (out_shape[0] != x[0] || out_shape[1] != x[1])
    throw std::runtime_error("only the spatial axes may be resized (N and C unchanged)");
  if (out_shape[2] < 1 || out_shape[3] < 1)
    throw std::runtime_error(fmt::format("the output {}x{} is empty", out_shape[2], out_shape[3]));
  if (r.rounding == resize::Rounding::floor && r.coord == resize::Coord::asymmetric && !r.linear &&
      si == 1 && (out_shape[2] < x[2] || out_shape[3] < x[3]))
    throw std::runtime_error("nearest downsampling is not supported before opset 11");
  const BlockedTensor& in4 = flat ? reshaped(out(n, ":2d.x"), blocked(n, 0), x) : blocked(n, 0);
  const std::string name = flat ? out(n, ":2d.y") : out(n);
  const auto& y = p_.resize2d(name, in4, r, out_shape[2], out_shape[3], nchw_cuts(name, out_shape));
  define(n.output(0), flat ? reshaped(out(n), y, {out_shape[0], out_shape[1], out_shape[2]}) : y);
}

}  // namespace doppler::onnx_import
