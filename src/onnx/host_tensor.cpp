// Constant tensors of the ONNX importer: decoding, shapes, attributes and shape arithmetic.
#include "host_tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace doppler::onnx_import {

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  double approx = 1;
  for (auto e : s) {
    if (e < 0) throw std::runtime_error(fmt::format("negative extent {}", e));
    approx *= static_cast<double>(e);
    if (approx > 0x1p62) throw std::runtime_error("tensor of more than 2^62 elements");
    n *= e;
  }
  return n;
}

void check_foldable(const Shape& s) {
  if (numel_of(s) > kMaxFoldElements)
    throw std::runtime_error(fmt::format("constant of {} elements is too large to fold (limit {})",
                                         numel_of(s), kMaxFoldElements));
}

std::int64_t HostTensor::numel() const {
  return numel_of(shape);
}

std::vector<std::int64_t> HostTensor::ints() const {
  std::vector<std::int64_t> v;
  v.reserve(data.size());
  for (double x : data) {
    if (!(x >= -0x1p62 && x <= 0x1p62))
      throw std::runtime_error(fmt::format("integer value {} out of range", x));
    v.push_back(static_cast<std::int64_t>(x));
  }
  return v;
}

std::vector<std::int64_t> HostTensor::bounds() const {
  std::vector<std::int64_t> v;
  v.reserve(data.size());
  for (double x : data) {
    if (std::isnan(x)) throw std::runtime_error("a slice bound is NaN");
    v.push_back(static_cast<std::int64_t>(std::clamp(x, -0x1p62, 0x1p62)));
  }
  return v;
}

Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (std::size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

std::string shape_text(const Shape& s) {
  if (s.empty()) return "scalar";
  return fmt::format("{}", fmt::join(s, "x"));
}

namespace {

// IEEE half to double.
double half_to_double(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return sign * std::ldexp(m, -24);
  if (e == 31) return m ? NAN : sign * INFINITY;
  return sign * std::ldexp(m + 1024, e - 25);
}

template <class T>
void decode_raw(const std::string& raw, std::int64_t n, std::vector<double>& out) {
  if (raw.size() != static_cast<std::size_t>(n) * sizeof(T))
    throw std::runtime_error(fmt::format("raw data holds {} bytes, {} expected", raw.size(),
                                         static_cast<std::size_t>(n) * sizeof(T)));
  out.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, raw.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, std::uint16_t>)
      out[static_cast<std::size_t>(i)] = half_to_double(x);
    else
      out[static_cast<std::size_t>(i)] = static_cast<double>(x);
  }
}

template <class Field>
void decode_field(const Field& f, std::int64_t n, std::vector<double>& out, bool half = false) {
  if (f.size() != n)
    throw std::runtime_error(fmt::format("holds {} values, {} expected", f.size(), n));
  out.clear();
  for (const auto& x : f)
    out.push_back(half ? half_to_double(static_cast<std::uint16_t>(x)) : static_cast<double>(x));
}

}  // namespace

HostTensor decode_tensor(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)  // not an initializer (those are read)
    throw std::runtime_error("external tensor data is supported for initializers only");
  HostTensor h;
  for (auto d : t.dims()) {
    if (d < 0 || d > (std::int64_t{1} << 31)) throw std::runtime_error("bad tensor dimension");
    h.shape.push_back(d);
  }
  if (static_cast<double>(numel_of(h.shape)) > 0x1p31) throw std::runtime_error("tensor too large");
  const std::int64_t n = numel_of(h.shape);
  const bool raw = t.has_raw_data();
  using TP = onnx::TensorProto;
  switch (t.data_type()) {
    case TP::FLOAT:
      raw ? decode_raw<float>(t.raw_data(), n, h.data) : decode_field(t.float_data(), n, h.data);
      break;
    case TP::DOUBLE:
      raw ? decode_raw<double>(t.raw_data(), n, h.data) : decode_field(t.double_data(), n, h.data);
      break;
    case TP::FLOAT16:
      raw ? decode_raw<std::uint16_t>(t.raw_data(), n, h.data)
          : decode_field(t.int32_data(), n, h.data, true);
      break;
    case TP::INT64:
      h.integer = true;
      raw ? decode_raw<std::int64_t>(t.raw_data(), n, h.data)
          : decode_field(t.int64_data(), n, h.data);
      break;
    case TP::INT32:
      h.integer = true;
      raw ? decode_raw<std::int32_t>(t.raw_data(), n, h.data)
          : decode_field(t.int32_data(), n, h.data);
      break;
    case TP::INT16:
      h.integer = true;
      raw ? decode_raw<std::int16_t>(t.raw_data(), n, h.data)
          : decode_field(t.int32_data(), n, h.data);
      break;
    case TP::INT8:
      h.integer = true;
      raw ? decode_raw<std::int8_t>(t.raw_data(), n, h.data)
          : decode_field(t.int32_data(), n, h.data);
      break;
    case TP::UINT8:
    case TP::BOOL:
      h.integer = true;
      raw ? decode_raw<std::uint8_t>(t.raw_data(), n, h.data)
          : decode_field(t.int32_data(), n, h.data);
      break;
    default:
      throw std::runtime_error(
          fmt::format("tensor element type {} is not supported",
                      TP::DataType_Name(static_cast<TP::DataType>(t.data_type()))));
  }
  return h;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape s(r, 1);
  for (std::size_t d = 0; d < r; ++d) {
    const auto x = d + a.size() >= r ? a[d + a.size() - r] : 1;
    const auto y = d + b.size() >= r ? b[d + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1)
      throw std::runtime_error(
          fmt::format("shapes {} and {} do not broadcast", shape_text(a), shape_text(b)));
    s[d] = x == 1 ? y : x;
  }
  return s;
}

namespace {

// Flat offset in a tensor of shape `s` read with broadcasting at output index `idx`.
std::int64_t bcast_offset(const Shape& s, const Shape& st, const Shape& idx) {
  std::int64_t off = 0;
  const std::size_t lead = idx.size() - s.size();
  for (std::size_t d = 0; d < s.size(); ++d)
    if (s[d] != 1) off += idx[lead + d] * st[d];
  return off;
}

}  // namespace

HostTensor broadcast_to(const HostTensor& a, const Shape& shape) {
  const Shape st = strides_of(a.shape);
  return remap(a, shape, [&](const Shape& idx) { return bcast_offset(a.shape, st, idx); });
}

Shape squeeze_shape(const Shape& s, const std::vector<std::int64_t>& axes) {
  std::vector<bool> drop(s.size(), axes.empty());
  for (auto a : axes)
    drop[static_cast<std::size_t>(normalize_axis(a, static_cast<std::int64_t>(s.size())))] = true;
  Shape out;
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (drop[d] && s[d] == 1) continue;
    if (drop[d] && !axes.empty()) throw std::runtime_error("squeeze of a dimension above 1");
    out.push_back(s[d]);
  }
  return out;
}

Shape unsqueeze_shape(const Shape& s, const std::vector<std::int64_t>& axes) {
  const auto r = static_cast<std::int64_t>(s.size() + axes.size());
  std::vector<bool> ins(static_cast<std::size_t>(r), false);
  for (auto a : axes) ins[static_cast<std::size_t>(normalize_axis(a, r))] = true;
  Shape out;
  std::size_t k = 0;
  for (std::int64_t d = 0; d < r; ++d)
    out.push_back(ins[static_cast<std::size_t>(d)] ? 1 : s.at(k++));
  return out;
}

Shape flatten_shape(const Shape& s, std::int64_t axis) {
  const auto rank = static_cast<std::int64_t>(s.size());
  const auto a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a > rank) throw std::runtime_error("Flatten: axis out of range");
  return {numel_of(Shape(s.begin(), s.begin() + a)), numel_of(Shape(s.begin() + a, s.end()))};
}

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank) {
  const auto a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw std::runtime_error(fmt::format("axis {} out of range for rank {}", axis, rank));
  return a;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::int64_t attr_int(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : fallback;
}

double attr_float(const onnx::NodeProto& n, const std::string& name, double fallback) {
  const auto* a = find_attr(n, name);
  return a ? static_cast<double>(a->f()) : fallback;
}

std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

Shape reshape_target(const Shape& in, const std::vector<std::int64_t>& spec, bool allowzero) {
  Shape out(spec.size());
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t d = 0; d < spec.size(); ++d) {
    auto e = spec[d];
    if (e == 0 && !allowzero) {
      if (d >= in.size()) throw std::runtime_error("reshape: 0 refers to a missing dimension");
      e = in[d];
    }
    if (e == -1) {
      if (infer >= 0) throw std::runtime_error("reshape: more than one -1");
      infer = static_cast<int>(d);
      continue;
    }
    if (e < 0) throw std::runtime_error(fmt::format("reshape: bad extent {}", e));
    out[d] = e;
    if (__builtin_mul_overflow(known, e, &known) || known > (std::int64_t{1} << 62))
      throw std::runtime_error("reshape: target of more than 2^62 elements");
  }
  const auto total = numel_of(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      throw std::runtime_error("reshape: -1 cannot be inferred");
    out[static_cast<std::size_t>(infer)] = total / known;
  }
  if (numel_of(out) != total)
    throw std::runtime_error(fmt::format("reshape of {} elements to {}", total, shape_text(out)));
  return out;
}

SliceBox slice_box(const Shape& in, const std::vector<std::int64_t>& starts,
                   const std::vector<std::int64_t>& ends, std::vector<std::int64_t> axes,
                   const std::vector<std::int64_t>& steps) {
  if (starts.size() != ends.size())
    throw std::runtime_error("slice: starts and ends differ in length");
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  if (axes.size() != starts.size())
    throw std::runtime_error("slice: axes and starts differ in length");
  if (!steps.empty() && steps.size() != starts.size())
    throw std::runtime_error("slice: steps and starts differ in length");
  SliceBox b{Shape(in.size(), 0), in, Shape(in.size(), 1)};
  std::vector<bool> seen(in.size(), false);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto ax =
        static_cast<std::size_t>(normalize_axis(axes[i], static_cast<std::int64_t>(in.size())));
    if (seen[ax]) throw std::runtime_error("slice: an axis repeated");
    seen[ax] = true;
    const std::int64_t n = in[ax], raw = steps.empty() ? 1 : steps[i];
    if (raw == 0) throw std::runtime_error("slice: a step of 0");
    // A step of n or more takes one element at most, as a step of n does (no overflow below).
    const std::int64_t cap = std::max<std::int64_t>(n, 1);
    const std::int64_t step = raw > 0 ? std::min(raw, cap) : std::max(raw, -cap);
    // Negative starts and ends count from the end; then clamped to [0, n] (step > 0) or to
    // [0, n - 1] and [-1, n - 1] (step < 0, which walks down from start to above end).
    auto s = starts[i] < 0 ? starts[i] + n : starts[i];
    auto e = ends[i] < 0 ? ends[i] + n : ends[i];
    const bool up = step > 0;
    s = std::clamp<std::int64_t>(s, 0, up ? n : n - 1);
    e = std::clamp<std::int64_t>(e, up ? 0 : -1, up ? n : n - 1);
    const std::int64_t span = up ? e - s : s - e, k = up ? step : -step;
    const std::int64_t count = span > 0 ? (span - 1) / k + 1 : 0;
    b.step[ax] = step;
    b.length[ax] = count;
    b.offset[ax] = up || count == 0 ? s : s - (count - 1) * k;
  }
  return b;
}

bool reduce_axes_are_input(const std::string& op, std::int64_t opset) {
  return op == "ReduceSum" ? opset >= 13 : opset >= 18;
}

std::optional<std::vector<bool>> reduced_axes(const onnx::NodeProto& n,
                                              const HostTensor* axes_input, std::int64_t rank) {
  const auto axes = axes_of(n, axes_input);
  if (axes.empty() && attr_int(n, "noop_with_empty_axes", 0) != 0) return std::nullopt;
  std::vector<bool> reduced(static_cast<std::size_t>(rank), axes.empty());
  for (auto a : axes) reduced[static_cast<std::size_t>(normalize_axis(a, rank))] = true;
  return reduced;
}

std::int64_t trilu_diagonal(const HostTensor* k) {
  if (!k) return 0;
  if (k->data.size() != 1) throw std::runtime_error("Trilu: k must hold one value");
  const double v = k->data[0];
  if (std::isnan(v)) throw std::runtime_error("Trilu: k is NaN");
  return static_cast<std::int64_t>(std::clamp(v, -0x1p40, 0x1p40));
}

std::vector<std::int64_t> axes_of(const onnx::NodeProto& n, const HostTensor* axes_input) {
  if (axes_input) return axes_input->ints();
  return attr_ints(n, "axes");
}

}  // namespace doppler::onnx_import
