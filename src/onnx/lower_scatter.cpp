// Lowering of ScatterND on computed tensors (docs/onnx.md): the slice assignment PyTorch exports
// for `y[:, 2:5] = v` (YOLOv5's Detect layer decodes its boxes this way). The constant indices
// must name a box of consecutive positions, in row-major order; the result is the data around
// the box (selects) and the updates in it, concatenated axis by axis (0 FLOPs), or with a
// reduction the box's data combined with the updates by its kernel.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "lowerer.hpp"

namespace doppler::onnx_import {

namespace {

// The first `k` dimensions' offsets and extents of the box the index tuples of `ind` ([..., k])
// enumerate in row-major order (negative indices count from the end of `data`'s extent), or a
// std::runtime_error naming what is not a box.
std::pair<Shape, Shape> index_box(const HostTensor& ind, const Shape& data) {
  const auto k = static_cast<std::size_t>(ind.shape.back());
  const std::int64_t count = k ? ind.numel() / static_cast<std::int64_t>(k) : 0;
  Shape lo(k, 0), len(k, 0);
  const auto at = [&](std::int64_t j, std::size_t d) {
    return scatter_nd_index(ind.data[static_cast<std::size_t>(j) * k + d], data[d]);
  };
  for (std::size_t d = 0; d < k && count > 0; ++d) {  // the first tuple is the box's corner
    lo[d] = at(0, d);
    std::int64_t hi = lo[d];
    for (std::int64_t j = 0; j < count; ++j) hi = std::max(hi, at(j, d));
    len[d] = hi - lo[d] + 1;
  }
  std::int64_t box = 1;
  for (auto e : len) box *= e;
  bool ok = count > 0 && box == count;
  for (std::int64_t j = 0; ok && j < count; ++j) {
    std::int64_t rest = j;
    for (std::size_t d = k; d-- > 0 && ok;) {
      ok = at(j, d) == lo[d] + rest % len[d];
      rest /= len[d];
    }
  }
  if (!ok)
    throw std::runtime_error(
        "ScatterND: the indices must name a box of consecutive positions in row-major order (a "
        "slice assignment) unless every input is a constant");
  return {lo, len};
}

// The kernel combining a box's data with its updates for ScatterND's `reduction` ("" for none).
std::string reduction_kernel(const onnx::NodeProto& n) {
  const auto* ra = find_attr(n, "reduction");
  const std::string red = ra ? ra->s() : "none";
  if (red == "none") return "";
  if (red == "add" || red == "mul") return red;
  if (red == "max" || red == "min") return red == "max" ? "maximum" : "minimum";
  throw std::runtime_error("ScatterND: reduction '" + red + "' is not supported");
}

}  // namespace

void Lowerer::scatter_nd(const onnx::NodeProto& n) {
  const Shape data = in(n, 0).shape;
  const HostTensor& ind = const_in(n, 1, "indices");
  const std::size_t k = scatter_nd_depth(data, ind.shape, in(n, 2).shape);
  const std::string kernel = reduction_kernel(n);
  auto [offset, shape] = index_box(ind, data);
  offset.resize(data.size(), 0);
  shape.insert(shape.end(), data.begin() + static_cast<std::ptrdiff_t>(k), data.end());
  const BlockedTensor* box = &reshaped(out(n, ":updates"), blocked(n, 2), shape);
  if (!kernel.empty())
    box = &map(out(n, ":combined"), kernel,
               {&select(out(n, ":box"), blocked(n, 0), offset, shape), box});
  define(n.output(0), around_box(out(n), blocked(n, 0), *box, offset));
}

// `data` with the region at `offset` of box's shape replaced by `box`: from the last dimension
// to the first, the box so far is concatenated with the data before and after it along that
// dimension (the data's whole extent in the dimensions after, the box's in those before).
const BlockedTensor& Lowerer::around_box(const std::string& name, const BlockedTensor& data,
                                         const BlockedTensor& box, const Shape& offset) {
  const BlockedTensor* t = &box;
  for (std::size_t d = data.shape.size(); d-- > 0;) {
    const std::int64_t lo = offset[d], hi = offset[d] + box.shape[d];
    if (lo == 0 && hi == data.shape[d]) continue;
    Shape off = offset, len = t->shape;
    for (std::size_t e = d + 1; e < off.size(); ++e) off[e] = 0;
    std::vector<const BlockedTensor*> parts;
    const std::string axis = fmt::format("{}:axis{}", name, d);
    if (lo > 0) {
      off[d] = 0, len[d] = lo;
      parts.push_back(&select(axis + ":before", data, off, len));
    }
    parts.push_back(t);
    if (hi < data.shape[d]) {
      off[d] = hi, len[d] = data.shape[d] - hi;
      parts.push_back(&select(axis + ":after", data, off, len));
    }
    t = &p_.concat(axis, parts, static_cast<int>(d));
  }
  return *t;
}

}  // namespace doppler::onnx_import
