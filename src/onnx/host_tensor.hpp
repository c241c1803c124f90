#pragma once
// Internal: constant tensors evaluated at import time (initializers, Constant nodes and folded
// shape subgraphs), and the ONNX decoding of tensors and attributes.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace doppler::onnx_import {

using Shape = std::vector<std::int64_t>;

/// A dense row-major constant. Values are doubles (exact for integers below 2^53); `integer`
/// records an integer or boolean ONNX type.
struct HostTensor {
  Shape shape;
  std::vector<double> data;
  bool integer = false;

  /// Number of elements.
  std::int64_t numel() const;
  /// The values as int64 (shape vectors, axes, indices).
  std::vector<std::int64_t> ints() const;
  /// The values as int64, those beyond +-2^62 held there: Slice's starts and ends, where
  /// INT64_MIN and INT64_MAX (as exporters write them) mean "past either end".
  std::vector<std::int64_t> bounds() const;
};

/// Elements of `s` (1 for a scalar); throws std::runtime_error for a negative extent or more
/// than 2^62 elements.
std::int64_t numel_of(const Shape& s);

/// Largest constant the importer evaluates (elements).
inline constexpr std::int64_t kMaxFoldElements = std::int64_t{1} << 26;

/// Throws std::runtime_error when a constant of shape `s` exceeds kMaxFoldElements.
void check_foldable(const Shape& s);

/// Row-major strides of `s`.
Shape strides_of(const Shape& s);

/// "2x3x4" ("scalar" for rank 0).
std::string shape_text(const Shape& s);

/// Decodes an ONNX tensor (raw or typed fields; float, double, float16, int8/16/32/64, uint8,
/// bool). Throws std::runtime_error with the problem (external data, unknown type, size
/// mismatch); the caller adds the file and node.
HostTensor decode_tensor(const onnx::TensorProto& t);

/// NumPy broadcast of two shapes; throws std::runtime_error when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

/// `a` broadcast to `shape` (NumPy rules; a constant of at most kMaxFoldElements elements).
HostTensor broadcast_to(const HostTensor& a, const Shape& shape);

/// Shape of Squeeze(s, axes): every listed axis (each of extent 1), or every extent-1 axis when
/// `axes` is empty.
Shape squeeze_shape(const Shape& s, const std::vector<std::int64_t>& axes);

/// Shape of Unsqueeze(s, axes): extent-1 axes inserted at `axes` (of the output's rank).
Shape unsqueeze_shape(const Shape& s, const std::vector<std::int64_t>& axes);

/// Shape of Flatten(s, axis): [product of s[:axis], product of s[axis:]].
Shape flatten_shape(const Shape& s, std::int64_t axis);

/// out[idx] = a[src(idx)] for every multi-index of `shape` (src returns a flat offset into a).
template <class Src>
HostTensor remap(const HostTensor& a, const Shape& shape, Src src);

/// Axis `axis` of a rank-`rank` tensor normalised to [0, rank); throws when out of range.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank);

/// Evaluates node `n` (of opset `opset`) on constant inputs (an empty tensor for a missing
/// optional input). Returns false when the op cannot be folded here; throws std::runtime_error
/// on inconsistent inputs.
bool fold_node(const onnx::NodeProto& n, std::int64_t opset, const std::vector<HostTensor>& in,
               std::vector<HostTensor>& out);

/// ScatterND's shapes: indices of rank >= 1 whose last extent k is at most data's rank, updates
/// of shape indices[:-1] + data[k:]. Returns k; std::runtime_error naming what is wrong.
std::size_t scatter_nd_depth(const Shape& data, const Shape& indices, const Shape& updates);

/// ScatterND's index `raw` along an axis of `extent` (negative: from the end), or a
/// std::runtime_error when it is not a whole number inside the axis.
std::int64_t scatter_nd_index(double raw, std::int64_t extent);

/// Reads every initializer of `g` stored as external data (ONNX's location, offset and length,
/// the location relative to the directory of `model_file` and inside it) into its raw data.
/// std::runtime_error naming the tensor and file when one cannot be read.
void load_external_data(onnx::GraphProto& g, const std::string& model_file);

/// Attribute `name` of `n`, or nullptr.
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name);
/// Integer attribute `name`, or `fallback`.
std::int64_t attr_int(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback);
/// Float attribute `name`, or `fallback`.
double attr_float(const onnx::NodeProto& n, const std::string& name, double fallback);
/// Integer-list attribute `name` (empty when absent).
std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name);

/// The target shape of Reshape(data of shape `in`, `spec`): 0 copies the input extent (unless
/// `allowzero`), one -1 is inferred. Throws when the element counts differ.
Shape reshape_target(const Shape& in, const std::vector<std::int64_t>& spec, bool allowzero);

/// Slice parameters per dimension of a rank-`rank` tensor: offset and length (step 1 only).
/// What Slice takes of each dimension: `length` elements `step` apart (negative: downwards), the
/// lowest of them at `offset`.
struct SliceBox {
  Shape offset, length, step;
  /// The index of the d-th dimension's first element taken (its highest when step[d] < 0).
  std::int64_t first(std::size_t d) const {
    return step[d] > 0 ? offset[d] : offset[d] + (length[d] - 1) * -step[d];
  }
};

/// The elements of Slice(in, starts, ends, axes, steps) (ONNX clamping rules, any nonzero step);
/// throws for a zero step, repeated or bad axes.
SliceBox slice_box(const Shape& in, const std::vector<std::int64_t>& starts,
                   const std::vector<std::int64_t>& ends, std::vector<std::int64_t> axes,
                   const std::vector<std::int64_t>& steps);

/// The axes of Squeeze / Unsqueeze / Reduce*: from the attribute `axes` (older opsets) or the
/// constant input `axes_input` (newer ones, nullptr when absent); empty when neither is given.
std::vector<std::int64_t> axes_of(const onnx::NodeProto& n, const HostTensor* axes_input);

/// Whether Reduce* `op` takes its axes as input 1 at `opset` (ReduceSum from 13, the others
/// from 18; an attribute before).
bool reduce_axes_are_input(const std::string& op, std::int64_t opset);

/// The axes Reduce* node `n` reduces of a rank-`rank` input, given its axes input (nullptr when
/// absent or an attribute): every axis when none are named, std::nullopt (nothing: the input
/// as it is) when none are named and noop_with_empty_axes is set.
std::optional<std::vector<bool>> reduced_axes(const onnx::NodeProto& n,
                                              const HostTensor* axes_input, std::int64_t rank);

/// Trilu's diagonal offset k from its optional input (0 when absent; one value), held within
/// +-2^40 (any larger offset keeps all or nothing of a tensor of extents below 2^31).
std::int64_t trilu_diagonal(const HostTensor* k);

template <class Src>
HostTensor remap(const HostTensor& a, const Shape& shape, Src src) {
  check_foldable(shape);
  HostTensor out{shape, {}, a.integer};
  const auto n = numel_of(shape);
  out.data.resize(static_cast<std::size_t>(n));
  Shape idx(shape.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    out.data[static_cast<std::size_t>(i)] = a.data[static_cast<std::size_t>(src(idx))];
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace doppler::onnx_import
