// Lowering of the ONNX data-movement ops: Identity/Cast/Dropout (aliases), Shape, Transpose,
// Reshape, Flatten, Squeeze, Unsqueeze, Concat, Split, Slice (any step: a stride kernel per
// stepped axis), Gather (constant indices: selects; computed ones, such as token ids: the gather
// kernel), Tile, DepthToSpace and SpaceToDepth.
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "lowerer.hpp"

namespace doppler::onnx_import {

void Lowerer::alias(const onnx::NodeProto& n) {
  values_[n.output(0)] = in(n, 0);
  // Dropout's mask in inference: all true (a constant, loaded only where a node reads it).
  if (n.op_type() == "Dropout" && n.output_size() > 1 && !n.output(1).empty()) {
    const Shape& s = in(n, 0).shape;
    check_foldable(s);
    set_constant(n.output(1), HostTensor{s, std::vector<double>(numel_of(s), 1.0), true});
  }
}

void Lowerer::shape_of(const onnx::NodeProto& n) {
  const Shape& s = in(n, 0).shape;
  const auto rank = static_cast<std::int64_t>(s.size());
  auto clampi = [rank](std::int64_t v) {
    return std::clamp<std::int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  const auto lo = clampi(attr_int(n, "start", 0)), hi = clampi(attr_int(n, "end", rank));
  HostTensor t{{std::max<std::int64_t>(hi - lo, 0)}, {}, true};
  for (auto d = lo; d < hi; ++d)
    t.data.push_back(static_cast<double>(s[static_cast<std::size_t>(d)]));
  set_constant(n.output(0), std::move(t));
}

// Expand of a computed tensor (a mask broadcast over heads and queries): kernel expand, or
// nothing when the shape does not change.
void Lowerer::expand(const onnx::NodeProto& n) {
  const Shape x = in(n, 0).shape;
  const Shape s = broadcast_shapes(x, const_in(n, 1, "shape").ints());
  if (s == x) {
    define(n.output(0), blocked(n, 0));
    return;
  }
  define(n.output(0), p_.expand(out(n), blocked(n, 0), s, cuts_for(out(n), s, nullptr)));
}

void Lowerer::transpose(const onnx::NodeProto& n) {
  const auto rank = in(n, 0).shape.size();
  std::vector<int> perm;
  for (auto p : attr_ints(n, "perm"))
    perm.push_back(static_cast<int>(normalize_axis(p, static_cast<std::int64_t>(rank))));
  if (perm.empty())
    for (std::size_t d = 0; d < rank; ++d) perm.push_back(static_cast<int>(rank - 1 - d));
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t d = 0; d < sorted.size(); ++d)
    if (sorted[d] != static_cast<int>(d) || sorted.size() != rank)
      throw std::runtime_error("Transpose: perm is not a permutation");
  define(n.output(0), p_.transpose(out(n), blocked(n, 0), perm));
}

const BlockedTensor& Lowerer::reshaped(const std::string& name, const BlockedTensor& a,
                                       const Shape& shape) {
  if (shape == a.shape) return a;
  return p_.reshape(name, a, shape);
}

void Lowerer::reshape(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const Shape s = in(n, 0).shape;
  Shape target;
  if (op == "Reshape") {
    const auto spec = opset_ >= 5 ? const_in(n, 1, "shape").ints() : attr_ints(n, "shape");
    target = reshape_target(s, spec, attr_int(n, "allowzero", 0) != 0);
  } else if (op == "Flatten") {
    target = flatten_shape(s, attr_int(n, "axis", 1));
  } else {
    const HostTensor* axes_in = opset_ >= 13 && has_in(n, 1) ? &const_in(n, 1, "axes") : nullptr;
    const auto axes = axes_of(n, axes_in);
    target = op == "Squeeze" ? squeeze_shape(s, axes) : unsqueeze_shape(s, axes);
  }
  define(n.output(0), reshaped(out(n), blocked(n, 0), target));
}

void Lowerer::concat(const onnx::NodeProto& n) {
  const auto rank = static_cast<std::int64_t>(in(n, 0).shape.size());
  const auto axis = static_cast<int>(normalize_axis(attr_int(n, "axis", 0), rank));
  std::vector<const BlockedTensor*> parts;
  for (int i = 0; i < n.input_size(); ++i) {
    const Value& v = in(n, static_cast<std::size_t>(i));
    if (v.shape.size() != static_cast<std::size_t>(rank))
      throw std::runtime_error("Concat: ranks differ");
    if (v.shape[static_cast<std::size_t>(axis)] == 0) continue;
    parts.push_back(&blocked(n, static_cast<std::size_t>(i)));
  }
  define(n.output(0), parts.size() == 1 ? *parts[0] : p_.concat(out(n), parts, axis));
}

const BlockedTensor& Lowerer::select(const std::string& name, const BlockedTensor& a,
                                     const Shape& offset, const Shape& length) {
  if (offset == Shape(a.shape.size(), 0) && length == a.shape) return a;
  const BlockedTensor& src =
      a.blocks.empty() ? p_.ensure_layout(a, std::vector<std::optional<Cuts>>(a.shape.size())) : a;
  // The output keeps the source's cuts inside the region, so each block reads one source block.
  std::vector<Cuts> cuts;
  for (std::size_t d = 0; d < src.shape.size(); ++d) {
    if (length[d] < 1) throw std::runtime_error("empty slice");
    cuts.push_back(workloads::cuts_within(src.cuts[d], offset[d], length[d]));
  }
  return p_.select(name, src, offset, length, cuts);
}

void Lowerer::split(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto axis = static_cast<std::size_t>(
      normalize_axis(attr_int(n, "axis", 0), static_cast<std::int64_t>(s.size())));
  std::vector<std::int64_t> sizes =
      opset_ >= 13 ? (has_in(n, 1) ? const_in(n, 1, "split").ints() : std::vector<std::int64_t>{})
                   : attr_ints(n, "split");
  const auto parts = static_cast<std::int64_t>(n.output_size());
  if (sizes.empty()) {
    if (s[axis] % parts != 0)
      throw std::runtime_error("Split: extent not divisible by the outputs");
    sizes.assign(static_cast<std::size_t>(parts), s[axis] / parts);
  }
  if (static_cast<std::int64_t>(sizes.size()) != parts ||
      std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}) != s[axis])
    throw std::runtime_error("Split: sizes do not add up to the extent");
  const auto& x = blocked(n, 0);
  std::int64_t at = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Shape off(s.size(), 0), len = s;
    off[axis] = at;
    len[axis] = sizes[i];
    at += sizes[i];
    if (!n.output(static_cast<int>(i)).empty())
      define(n.output(static_cast<int>(i)), select(n.output(static_cast<int>(i)), x, off, len));
  }
}

void Lowerer::slice(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto ints = [&](std::size_t i, const char* what) {
    return has_in(n, i) ? const_in(n, i, what).ints() : std::vector<std::int64_t>{};
  };
  const auto bounds = [&](std::size_t i, const char* what) {
    return const_in(n, i, what).bounds();
  };
  const SliceBox b =
      opset_ >= 10
          ? slice_box(s, bounds(1, "starts"), bounds(2, "ends"), ints(3, "axes"), ints(4, "steps"))
          : slice_box(s, attr_ints(n, "starts"), attr_ints(n, "ends"), attr_ints(n, "axes"), {});
  std::vector<std::size_t> stepped;  // axes taking more than one element, not contiguous ones
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (b.length[d] < 1) throw std::runtime_error("empty slice");
    if (b.step[d] != 1 && b.length[d] > 1) stepped.push_back(d);
  }
  if (stepped.empty()) {
    define(n.output(0), select(out(n), blocked(n, 0), b.offset, b.length));
    return;
  }
  // A stride kernel per stepped axis; the first reads the box of the whole slice from the input.
  Shape offset = b.offset, shape = b.length;
  for (std::size_t d : stepped) shape[d] = (b.length[d] - 1) * std::abs(b.step[d]) + 1;
  const BlockedTensor* t = &blocked(n, 0);
  for (std::size_t i = 0; i < stepped.size(); ++i) {
    const std::size_t d = stepped[i];
    shape[d] = b.length[d];
    const std::string name = i + 1 == stepped.size() ? out(n) : out(n, fmt::format(".step{}", d));
    t = &p_.strided(name, *t, offset, shape, static_cast<int>(d), b.step[d]);
    offset.assign(s.size(), 0);
  }
  define(n.output(0), *t);
}

void Lowerer::gather(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto axis = static_cast<std::size_t>(
      normalize_axis(attr_int(n, "axis", 0), static_cast<std::int64_t>(s.size())));
  if (!in(n, 1).constant) return gather_rows(n, axis);
  const HostTensor& ind = const_in(n, 1, "indices");
  std::vector<std::int64_t> idx = ind.ints();
  for (auto& i : idx) {
    if (i < 0) i += s[axis];
    if (i < 0 || i >= s[axis]) throw std::runtime_error("Gather: index out of range");
  }
  if (idx.empty()) throw std::runtime_error("Gather with no indices");
  const auto& x = blocked(n, 0);
  // Runs of consecutive indices become one select each, concatenated along the axis.
  std::vector<const BlockedTensor*> parts;
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i + 1;
    while (j < idx.size() && idx[j] == idx[j - 1] + 1) ++j;
    Shape off(s.size(), 0), len = s;
    off[axis] = idx[i];
    len[axis] = static_cast<std::int64_t>(j - i);
    parts.push_back(&select(fmt::format("{}.part{}", out(n), parts.size()), x, off, len));
    i = j;
  }
  const BlockedTensor& g =
      parts.size() == 1 ? *parts[0] : p_.concat(out(n, ".gather"), parts, static_cast<int>(axis));
  Shape target(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis));
  target.insert(target.end(), ind.shape.begin(), ind.shape.end());
  target.insert(target.end(), s.begin() + static_cast<std::ptrdiff_t>(axis) + 1, s.end());
  define(n.output(0), reshaped(out(n), g, target));
}

// Gather with computed indices: rows of the data (an embedding table, most often) at them, one
// "gather" kernel per output block. On another axis than the first, the data is transposed to
// make that axis the first, and the result transposed back (the indices' dimensions where the
// axis was).
void Lowerer::gather_rows(const onnx::NodeProto& n, std::size_t axis) {
  const Shape s = in(n, 0).shape;
  const std::size_t q = in(n, 1).shape.size(), r = s.size();
  std::vector<int> to_front(r);  // the axis first, the others in order
  std::iota(to_front.begin(), to_front.end(), 0);
  std::rotate(to_front.begin(), to_front.begin() + static_cast<std::ptrdiff_t>(axis),
              to_front.begin() + static_cast<std::ptrdiff_t>(axis) + 1);
  const BlockedTensor& table =
      axis == 0 ? blocked(n, 0) : p_.transpose(out(n, ":table"), blocked(n, 0), to_front);
  Shape shape = in(n, 1).shape;
  for (std::size_t d = 1; d < r; ++d) shape.push_back(s[static_cast<std::size_t>(to_front[d])]);
  const std::string name = axis == 0 ? out(n) : out(n, ":rows");
  const BlockedTensor& rows = p_.gather(name, table, blocked(n, 1), cuts_for(name, shape, nullptr));
  if (axis == 0) return define(n.output(0), rows);
  std::vector<int> back;  // the data's leading dimensions, the indices', the data's trailing ones
  for (std::size_t d = 0; d < axis; ++d) back.push_back(static_cast<int>(q + d));
  for (std::size_t d = 0; d < q; ++d) back.push_back(static_cast<int>(d));
  for (std::size_t d = q + axis; d < q + r - 1; ++d) back.push_back(static_cast<int>(d));
  define(n.output(0), p_.transpose(out(n), rows, back));
}

// GatherElements along `axis` (torch.gather, take_along_axis): kernel gather_along on the last
// axis (another axis is swapped with the last one in the data and the indices, and the result
// swapped back); the data is first cut to the indices' extents on the other axes (PyTorch's
// index may be smaller there). Constant indices are checked against the axis.
void Lowerer::gather_elements(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape, t = in(n, 1).shape;
  const auto rank = static_cast<std::int64_t>(s.size());
  if (rank == 0 || t.size() != s.size())
    throw std::runtime_error("GatherElements: data and indices of different ranks (or scalars)");
  const auto axis = static_cast<std::size_t>(normalize_axis(attr_int(n, "axis", 0), rank));
  for (std::size_t d = 0; d < s.size(); ++d)
    if (t[d] < 1 || (d != axis && t[d] > s[d]))
      throw std::runtime_error("GatherElements: indices larger than the data off the axis");
  if (in(n, 1).constant)
    for (const std::int64_t i : const_in(n, 1, "indices").ints())
      if (i < -s[axis] || i >= s[axis])
        throw std::runtime_error("GatherElements: index out of range");
  Shape len = t;
  len[axis] = s[axis];
  const BlockedTensor& data =
      len == s ? blocked(n, 0) : select(out(n, ":data"), blocked(n, 0), Shape(s.size(), 0), len);
  std::vector<int> perm(s.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[axis], perm.back());
  const bool moved = axis + 1 != s.size();
  const auto swapped = [&](const std::string& name,
                           const BlockedTensor& x) -> const BlockedTensor& {
    return moved ? p_.transpose(name, x, perm) : x;
  };
  const BlockedTensor& table = swapped(out(n, ":table"), data);
  const BlockedTensor& idx = swapped(out(n, ":indices"), blocked(n, 1));
  const std::string name = moved ? out(n, ":along") : out(n);
  const BlockedTensor& g = p_.gather_along(name, table, idx, cuts_for(name, idx.shape, &idx));
  define(n.output(0), swapped(out(n), g));
}

// Tile by constant repeats: each repeated axis through a new axis of extent 1 in front of it,
// expanded to the repeat count and merged back (`reshape`, `expand`, `reshape`; no FLOPs).
void Lowerer::tile(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto reps = const_in(n, 1, "Tile's repeats").ints();
  if (reps.size() != s.size())
    throw std::runtime_error(
        fmt::format("Tile: {} repeats for a rank-{} input", reps.size(), s.size()));
  const BlockedTensor* t = &blocked(n, 0);
  for (std::size_t a = 0; a < s.size(); ++a) {
    if (reps[a] < 1) throw std::runtime_error("Tile: a repeat count below 1");
    if (reps[a] > (std::int64_t{1} << 31) / t->shape[a])
      throw std::runtime_error("Tile: an extent above 2^31");
    if (reps[a] == 1) continue;
    const std::string axis = out(n, fmt::format(":axis{}", a));
    Shape one = t->shape, wide = t->shape, merged = t->shape;
    one.insert(one.begin() + static_cast<std::ptrdiff_t>(a), 1);
    wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(a), reps[a]);
    merged[a] *= reps[a];
    const BlockedTensor& u = reshaped(axis + ":one", *t, one);
    const BlockedTensor& w = p_.expand(axis + ":wide", u, wide, cuts_for(axis, wide, nullptr));
    t = &reshaped(axis, w, merged);
  }
  define(n.output(0), *t);
}

// DepthToSpace (modes DCR and CRD) and SpaceToDepth of [N, C, H, W] with block size b: a
// reshape to rank 6, a transpose and a reshape back (no FLOPs).
void Lowerer::depth_space(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  if (s.size() != 4) throw std::runtime_error(n.op_type() + " of a tensor of rank other than 4");
  const std::int64_t b = attr_int(n, "blocksize", 0), N = s[0], C = s[1], H = s[2], W = s[3];
  if (b < 1 || b > (std::int64_t{1} << 15))
    throw std::runtime_error(n.op_type() + ": blocksize outside 1..2^15");
  Shape six, last;
  std::vector<int> perm;
  if (n.op_type() == "SpaceToDepth") {
    if (H % b != 0 || W % b != 0)
      throw std::runtime_error("SpaceToDepth: height or width not a multiple of blocksize");
    six = {N, C, H / b, b, W / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    last = {N, C * b * b, H / b, W / b};
  } else {
    if (C % (b * b) != 0)
      throw std::runtime_error("DepthToSpace: channels not a multiple of blocksize squared");
    const auto* mode = find_attr(n, "mode");
    const bool crd = mode && mode->s() == "CRD";
    if (mode && !crd && mode->s() != "DCR")
      throw std::runtime_error("DepthToSpace: mode '" + mode->s() + "' (DCR or CRD)");
    six = crd ? Shape{N, C / (b * b), b, b, H, W} : Shape{N, b, b, C / (b * b), H, W};
    perm = crd ? std::vector<int>{0, 1, 4, 2, 5, 3} : std::vector<int>{0, 3, 4, 1, 5, 2};
    last = {N, C / (b * b), H * b, W * b};
  }
  const BlockedTensor& r = reshaped(out(n, ":six"), blocked(n, 0), six);
  const BlockedTensor& t = p_.transpose(out(n, ":moved"), r, perm);
  define(n.output(0), reshaped(out(n), t, last));
}

}  // namespace doppler::onnx_import
