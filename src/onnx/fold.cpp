// Constant folding of ONNX nodes whose inputs are all constants: the shape subgraphs PyTorch
// exports (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), masks and scalar arithmetic.
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "host_tensor.hpp"

namespace doppler::onnx_import {

namespace {

template <class F>
HostTensor binary(const HostTensor& a, const HostTensor& b, F f, bool integer) {
  const Shape s = broadcast_shapes(a.shape, b.shape);
  HostTensor x = broadcast_to(a, s), y = broadcast_to(b, s);
  for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = f(x.data[i], y.data[i]);
  x.integer = integer;
  return x;
}

template <class F>
HostTensor unary(HostTensor a, F f) {
  for (double& v : a.data) v = f(v);
  return a;
}

HostTensor constant_value(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") return decode_tensor(a.t());
    if (a.name() == "value_float") return {{}, {static_cast<double>(a.f())}, false};
    if (a.name() == "value_int") return {{}, {static_cast<double>(a.i())}, true};
    if (a.name() == "value_floats")
      return {{a.floats_size()}, {a.floats().begin(), a.floats().end()}, false};
    if (a.name() == "value_ints") {
      HostTensor t{{a.ints_size()}, {}, true};
      for (auto v : a.ints()) t.data.push_back(static_cast<double>(v));
      return t;
    }
  }
  throw std::runtime_error("Constant without a supported value attribute");
}

HostTensor gather(const HostTensor& a, const HostTensor& ind, std::int64_t axis) {
  const auto ax =
      static_cast<std::size_t>(normalize_axis(axis, static_cast<std::int64_t>(a.shape.size())));
  Shape shape(a.shape.begin(), a.shape.begin() + static_cast<std::ptrdiff_t>(ax));
  shape.insert(shape.end(), ind.shape.begin(), ind.shape.end());
  shape.insert(shape.end(), a.shape.begin() + static_cast<std::ptrdiff_t>(ax) + 1, a.shape.end());
  const Shape st = strides_of(a.shape), ist = strides_of(ind.shape);
  const auto q = ind.shape.size();
  return remap(a, shape, [&](const Shape& idx) {
    std::int64_t off = 0, k = 0;
    for (std::size_t d = 0; d < q; ++d) k += idx[ax + d] * ist[d];
    const double raw = ind.data[static_cast<std::size_t>(k)];
    if (!(std::abs(raw) < 0x1p62)) throw std::runtime_error("gather index out of range");
    auto i = static_cast<std::int64_t>(raw);
    if (i < 0) i += a.shape[ax];
    if (i < 0 || i >= a.shape[ax]) throw std::runtime_error("gather index out of range");
    for (std::size_t d = 0; d < ax; ++d) off += idx[d] * st[d];
    off += i * st[ax];
    for (std::size_t d = ax + 1; d < a.shape.size(); ++d) off += idx[d + q - 1] * st[d];
    return off;
  });
}

HostTensor concat(const std::vector<HostTensor>& in, std::int64_t axis) {
  if (in.empty()) throw std::runtime_error("concat of nothing");
  const auto ax =
      static_cast<std::size_t>(normalize_axis(axis, static_cast<std::int64_t>(in[0].shape.size())));
  Shape shape = in[0].shape;
  shape[ax] = 0;
  for (const auto& t : in) {
    if (t.shape.size() != shape.size()) throw std::runtime_error("concat: ranks differ");
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (d != ax && t.shape[d] != in[0].shape[d])
        throw std::runtime_error("concat: shapes differ");
    shape[ax] += t.shape[ax];
  }
  HostTensor out{shape, {}, in[0].integer};
  const auto outer =
      numel_of(Shape(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(ax)));
  for (std::int64_t o = 0; o < outer; ++o)
    for (const auto& t : in) {
      const auto chunk = t.numel() / std::max<std::int64_t>(outer, 1);
      const auto* p = t.data.data() + o * chunk;
      out.data.insert(out.data.end(), p, p + chunk);
    }
  return out;
}

HostTensor transpose(const HostTensor& a, std::vector<std::int64_t> perm) {
  const auto r = a.shape.size();
  if (perm.empty())
    for (std::size_t d = 0; d < r; ++d) perm.push_back(static_cast<std::int64_t>(r - 1 - d));
  if (perm.size() != r) throw std::runtime_error("transpose: bad perm");
  Shape shape;
  for (auto p : perm) shape.push_back(a.shape.at(static_cast<std::size_t>(p)));
  const Shape st = strides_of(a.shape);
  return remap(a, shape, [&](const Shape& idx) {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < r; ++k) off += idx[k] * st[static_cast<std::size_t>(perm[k])];
    return off;
  });
}

const HostTensor* opt(const std::vector<HostTensor>& in, std::size_t i) {
  return i < in.size() && (!in[i].shape.empty() || !in[i].data.empty()) ? &in[i] : nullptr;
}

bool fold_shape_op(const onnx::NodeProto& n, std::int64_t opset, const std::vector<HostTensor>& in,
                   HostTensor& r) {
  const std::string& op = n.op_type();
  if (op == "Reshape") {
    r = in.at(0);
    r.shape = reshape_target(in[0].shape, in.at(1).ints(), attr_int(n, "allowzero", 0) != 0);
  } else if (op == "Flatten") {
    r = in.at(0);
    r.shape = flatten_shape(r.shape, attr_int(n, "axis", 1));
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    const auto axes = axes_of(n, opset >= 13 ? opt(in, 1) : nullptr);
    r = in.at(0);
    r.shape = op == "Squeeze" ? squeeze_shape(r.shape, axes) : unsqueeze_shape(r.shape, axes);
  } else if (op == "Slice") {
    SliceBox b = opset >= 10 ? slice_box(in.at(0).shape, in.at(1).bounds(), in.at(2).bounds(),
                                         opt(in, 3) ? in[3].ints() : std::vector<std::int64_t>{},
                                         opt(in, 4) ? in[4].ints() : std::vector<std::int64_t>{})
                             : slice_box(in.at(0).shape, attr_ints(n, "starts"),
                                         attr_ints(n, "ends"), attr_ints(n, "axes"), {});
    const Shape st = strides_of(in[0].shape);
    r = remap(in[0], b.length, [&](const Shape& idx) {
      std::int64_t off = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) off += (b.first(d) + idx[d] * b.step[d]) * st[d];
      return off;
    });
  } else if (op == "Gather") {
    r = gather(in.at(0), in.at(1), attr_int(n, "axis", 0));
  } else if (op == "Concat") {
    r = concat(in, attr_int(n, "axis", 0));
  } else if (op == "Transpose") {
    r = transpose(in.at(0), attr_ints(n, "perm"));
  } else if (op == "Expand") {
    r = broadcast_to(in.at(0), broadcast_shapes(in[0].shape, in.at(1).ints()));
  } else if (op == "ConstantOfShape") {
    const auto* v = find_attr(n, "value");
    HostTensor val = v ? decode_tensor(v->t()) : HostTensor{{1}, {0.0}, false};
    const Shape s = in.at(0).ints();
    check_foldable(s);
    r = {s, std::vector<double>(static_cast<std::size_t>(numel_of(s)), val.data.at(0)),
         val.integer};
  } else if (op == "Range") {
    const double s = in.at(0).data.at(0), l = in.at(1).data.at(0), d = in.at(2).data.at(0);
    if (d == 0) throw std::runtime_error("range with delta 0");
    const double steps = std::ceil((l - s) / d);
    if (!(steps < static_cast<double>(kMaxFoldElements)))
      throw std::runtime_error("range too long");
    const auto count = std::max<std::int64_t>(static_cast<std::int64_t>(steps), 0);
    r = {{count}, {}, in[0].integer};
    for (std::int64_t i = 0; i < count; ++i) r.data.push_back(s + static_cast<double>(i) * d);
  } else {
    return false;
  }
  return true;
}

bool fold_math_op(const onnx::NodeProto& n, const std::vector<HostTensor>& in, HostTensor& r) {
  static const std::map<std::string, double (*)(double, double)> bin = {
      {"Add", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"Pow", [](double a, double b) { return std::pow(a, b); }},
      {"Equal", [](double a, double b) { return a == b ? 1.0 : 0.0; }},
      {"Less", [](double a, double b) { return a < b ? 1.0 : 0.0; }},
      {"Greater", [](double a, double b) { return a > b ? 1.0 : 0.0; }},
      {"And", [](double a, double b) { return a != 0 && b != 0 ? 1.0 : 0.0; }},
      {"Or", [](double a, double b) { return a != 0 || b != 0 ? 1.0 : 0.0; }},
      {"Xor", [](double a, double b) { return (a != 0) != (b != 0) ? 1.0 : 0.0; }},
      {"LessOrEqual", [](double a, double b) { return a <= b ? 1.0 : 0.0; }},
      {"GreaterOrEqual", [](double a, double b) { return a >= b ? 1.0 : 0.0; }}};
  static const std::map<std::string, double (*)(double)> un = {
      {"Sqrt", [](double a) { return std::sqrt(a); }},
      {"Neg", [](double a) { return -a; }},
      {"Relu", [](double a) { return a > 0 ? a : 0.0; }},
      {"Erf", [](double a) { return std::erf(a); }},
      {"Tanh", [](double a) { return std::tanh(a); }},
      {"Sigmoid", [](double a) { return 1 / (1 + std::exp(-a)); }},
      {"Not", [](double a) { return a == 0 ? 1.0 : 0.0; }},
      {"Abs", [](double a) { return std::abs(a); }},
      {"Exp", [](double a) { return std::exp(a); }},
      {"Log", [](double a) { return std::log(a); }},
      {"Floor", [](double a) { return std::floor(a); }},
      {"Ceil", [](double a) { return std::ceil(a); }},
      {"Reciprocal", [](double a) { return 1 / a; }},
      {"Round", [](double a) { return std::nearbyint(a); }},  // halves to even
      {"Sin", [](double a) { return std::sin(a); }},
      {"Cos", [](double a) { return std::cos(a); }},
      {"Tan", [](double a) { return std::tan(a); }},
      {"Asin", [](double a) { return std::asin(a); }},
      {"Acos", [](double a) { return std::acos(a); }},
      {"Atan", [](double a) { return std::atan(a); }},
      {"Sinh", [](double a) { return std::sinh(a); }},
      {"Cosh", [](double a) { return std::cosh(a); }},
      {"IsNaN", [](double a) { return std::isnan(a) ? 1.0 : 0.0; }},
      {"Sign", [](double a) { return a > 0   ? 1.0
                                     : a < 0 ? -1.0
                                             : 0.0; }}};
  const std::string& op = n.op_type();
  if (op == "Div") {
    const bool integer = in.at(0).integer && in.at(1).integer;
    r = binary(
        in[0], in[1],
        [integer](double a, double b) {
          if (integer && b == 0) throw std::runtime_error("integer division by zero");
          return integer ? std::trunc(a / b) : a / b;
        },
        integer);
  } else if (auto b = bin.find(op); b != bin.end()) {
    const bool logical = op == "Equal" || op == "Less" || op == "Greater" || op == "And" ||
                         op == "Or" || op == "Xor" || op == "LessOrEqual" || op == "GreaterOrEqual";
    r = binary(in.at(0), in.at(1), b->second, logical || (in[0].integer && in[1].integer));
  } else if (auto u = un.find(op); u != un.end()) {
    r = unary(in.at(0), u->second);
  } else if (op == "Min" || op == "Max") {  // variadic, broadcasting
    const bool is_min = op == "Min";
    r = in.at(0);
    for (std::size_t i = 1; i < in.size(); ++i)
      r = binary(
          r, in[i],
          [is_min](double a, double b) { return is_min ? std::min(a, b) : std::max(a, b); },
          r.integer && in[i].integer);
  } else if (op == "Mod") {  // fmod = 0: the divisor's sign (Python); 1: the dividend's (C)
    const bool c_style = attr_int(n, "fmod", 0) != 0;
    const bool integer = in.at(0).integer && in.at(1).integer;
    r = binary(
        in[0], in[1],
        [c_style, integer](double a, double b) {
          if (integer && b == 0) throw std::runtime_error("integer modulo by zero");
          const double m = std::fmod(a, b);
          return c_style || m == 0 || (m < 0) == (b < 0) ? m : m + b;
        },
        integer);
  } else if (op == "Where") {
    const Shape s =
        broadcast_shapes(broadcast_shapes(in.at(0).shape, in.at(1).shape), in.at(2).shape);
    const HostTensor c = broadcast_to(in[0], s), x = broadcast_to(in[1], s),
                     y = broadcast_to(in[2], s);
    r = x;
    for (std::size_t i = 0; i < r.data.size(); ++i)
      r.data[i] = c.data[i] != 0 ? x.data[i] : y.data[i];
    r.integer = in[1].integer && in[2].integer;
  } else if (op == "Trilu") {
    r = in.at(0);
    const std::size_t rank = r.shape.size();
    if (rank < 2) throw std::runtime_error("Trilu of a tensor of rank below 2");
    const std::int64_t k = trilu_diagonal(opt(in, 1)), rows = r.shape[rank - 2],
                       cols = r.shape[rank - 1];
    const bool upper = attr_int(n, "upper", 1) != 0;
    for (std::size_t i = 0; i < r.data.size(); ++i) {
      const auto at = static_cast<std::int64_t>(i) % (rows * cols);
      const std::int64_t off = at % cols - at / cols;  // column - row
      if (upper ? off < k : off > k) r.data[i] = 0;
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::size_t scatter_nd_depth(const Shape& data, const Shape& indices, const Shape& updates) {
  if (indices.empty()) throw std::runtime_error("ScatterND: indices of rank 0");
  const auto k = static_cast<std::size_t>(indices.back());
  if (k > data.size()) throw std::runtime_error("ScatterND: index longer than the rank");
  Shape want(indices.begin(), indices.end() - 1);
  want.insert(want.end(), data.begin() + static_cast<std::ptrdiff_t>(k), data.end());
  if (updates != want) throw std::runtime_error("ScatterND: updates of the wrong shape");
  return k;
}

std::int64_t scatter_nd_index(double raw, std::int64_t extent) {
  auto i = static_cast<std::int64_t>(raw);
  if (i < 0) i += extent;
  if (raw != std::trunc(raw) || i < 0 || i >= extent)
    throw std::runtime_error("ScatterND: index out of range");
  return i;
}

namespace {

// ScatterND of constants (a mask built by slice assignment, as Swin's shifted windows build
// theirs): data with the slices named by the last axis of `indices` replaced by (or, with
// reduction add / mul, combined with) the matching slices of `updates`.
HostTensor scatter_nd(const onnx::NodeProto& n, const std::vector<HostTensor>& in) {
  const HostTensor &data = in.at(0), &ind = in.at(1), &upd = in.at(2);
  const auto* ra = find_attr(n, "reduction");
  const std::string red = ra ? ra->s() : "none";
  if (red != "none" && red != "add" && red != "mul")
    throw std::runtime_error("ScatterND: reduction '" + red + "' is not supported");
  const std::size_t k = scatter_nd_depth(data.shape, ind.shape, upd.shape);
  const Shape st = strides_of(data.shape);
  const std::int64_t piece =  // elements per scattered slice
      numel_of(Shape(data.shape.begin() + static_cast<std::ptrdiff_t>(k), data.shape.end()));
  HostTensor r = data;
  r.integer = data.integer && upd.integer;
  const std::int64_t count = ind.numel() / std::max<std::int64_t>(static_cast<std::int64_t>(k), 1);
  for (std::int64_t j = 0; j < count; ++j) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < k; ++d) {
      at += scatter_nd_index(ind.data[static_cast<std::size_t>(j) * k + d], data.shape[d]) * st[d];
    }
    for (std::int64_t e = 0; e < piece; ++e) {
      double& dst = r.data[static_cast<std::size_t>(at + e)];
      const double u = upd.data[static_cast<std::size_t>(j * piece + e)];
      dst = red == "add" ? dst + u : red == "mul" ? dst * u : u;
    }
  }
  return r;
}

// ReduceProd, ReduceSum, ReduceMean, ReduceMax and ReduceMin of a constant (the element count
// torch.var computes from a Shape, for one): axes from the attribute, or the input from opset 13
// (ReduceSum) or 18 (the others); none means all, or nothing with noop_with_empty_axes.
bool fold_reduce(const onnx::NodeProto& n, std::int64_t opset, const std::vector<HostTensor>& in,
                 HostTensor& r) {
  const std::string& op = n.op_type();
  if (op != "ReduceProd" && op != "ReduceSum" && op != "ReduceMean" && op != "ReduceMax" &&
      op != "ReduceMin")
    return false;
  const HostTensor& a = in.at(0);
  const auto axes = reduced_axes(n, reduce_axes_are_input(op, opset) ? opt(in, 1) : nullptr,
                                 static_cast<std::int64_t>(a.shape.size()));
  if (!axes) {  // noop_with_empty_axes
    r = a;
    return true;
  }
  const std::vector<bool>& reduced = *axes;
  const bool keep = attr_int(n, "keepdims", 1) != 0;
  Shape kept;  // the output's extents, reduced ones as 1 (then dropped without keepdims)
  for (std::size_t d = 0; d < a.shape.size(); ++d) kept.push_back(reduced[d] ? 1 : a.shape[d]);
  const double init = op == "ReduceProd"  ? 1.0
                      : op == "ReduceMax" ? -INFINITY
                      : op == "ReduceMin" ? INFINITY
                                          : 0.0;
  std::vector<double> acc(static_cast<std::size_t>(numel_of(kept)), init);
  const Shape ost = strides_of(kept);
  Shape idx(a.shape.size(), 0);
  for (double v : a.data) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) o += reduced[d] ? 0 : idx[d] * ost[d];
    double& s = acc[static_cast<std::size_t>(o)];
    s = op == "ReduceProd"  ? s * v
        : op == "ReduceMax" ? std::max(s, v)
        : op == "ReduceMin" ? std::min(s, v)
                            : s + v;
    for (std::size_t d = idx.size(); d-- > 0;) {  // the next index, row-major
      if (++idx[d] < a.shape[d]) break;
      idx[d] = 0;
    }
  }
  if (op == "ReduceMean") {
    const double count = static_cast<double>(a.numel()) / static_cast<double>(acc.size());
    for (double& s : acc) s /= count;
  }
  r = HostTensor{kept, std::move(acc), a.integer && op != "ReduceMean"};
  if (!keep) {
    Shape dropped;
    for (std::size_t d = 0; d < kept.size(); ++d)
      if (!reduced[d]) dropped.push_back(kept[d]);
    r.shape = dropped;
  }
  return true;
}

}  // namespace

bool fold_node(const onnx::NodeProto& n, std::int64_t opset, const std::vector<HostTensor>& in,
               std::vector<HostTensor>& out) {
  const std::string& op = n.op_type();
  HostTensor r;
  if (op == "Constant") {
    r = constant_value(n);
  } else if (op == "Identity") {
    r = in.at(0);
  } else if (op == "Cast") {
    r = in.at(0);
    const auto to = attr_int(n, "to", onnx::TensorProto::FLOAT);
    using TP = onnx::TensorProto;
    r.integer = !(to == TP::FLOAT || to == TP::DOUBLE || to == TP::FLOAT16 || to == TP::BFLOAT16);
    if (r.integer)
      for (double& v : r.data) v = to == TP::BOOL ? (v != 0 ? 1.0 : 0.0) : std::trunc(v);
    else if (to == TP::FLOAT)
      for (double& v : r.data) v = static_cast<float>(v);
  } else if (op == "Split") {
    return false;  // several outputs: lowered (cheap) even when constant
  } else if (op == "ScatterND") {
    r = scatter_nd(n, in);
  } else if (!fold_shape_op(n, opset, in, r) && !fold_math_op(n, in, r) &&
             !fold_reduce(n, opset, in, r)) {
    return false;
  }
  out.assign(1, std::move(r));
  return true;
}

}  // namespace doppler::onnx_import
