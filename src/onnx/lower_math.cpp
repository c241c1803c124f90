// Lowering of the ONNX math ops: MatMul, Gemm, elementwise ops, Softmax, reductions,
// LayerNormalization and Where (docs/onnx.md lists the kernels and FLOPs of each).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "lowerer.hpp"

#include "doppler/workloads/layers.hpp"

namespace doppler::onnx_import {

namespace {

// Einsum labels of the batch dimensions, and of size-1 batch dimensions broadcast against a
// larger extent (summed over: an extent-1 contraction).
constexpr char kBatch[] = "abcdefgh";
constexpr char kSingle[] = "ijlopqrstuvwxyz";

bool scalar(const Value& v) {
  return v.constant && v.constant->numel() == 1;
}

// Einsum terms with each ellipsis replaced by labels of its own ('0'.. for the broadcast
// dimensions, right-aligned; a dimension of extent 1 broadcast against a larger one takes a
// label that appears nowhere else), the output's labels and every label's extent.
struct EinsumLabels {
  std::vector<std::string> terms;
  std::string out;
  std::map<char, std::int64_t> extent;
};

constexpr char kEllipsis[] = "0123456789";            // the broadcast dimensions, outermost first
constexpr char kBroadcastOne[] = "!#$%&*+<=>?@^_|~";  // extent-1 dimensions broadcast

// The number of dimensions the ellipsis of `term` stands for (-1: none), checked.
int ellipsis_dims(const std::string& term, std::size_t rank) {
  const auto dots = term.find("...");
  std::size_t letters = 0;
  for (std::size_t k = 0; k < term.size(); ++k) {
    const bool in_dots = dots != std::string::npos && k >= dots && k < dots + 3;
    if (in_dots) continue;
    if (!std::isalpha(static_cast<unsigned char>(term[k])) ||
        term.find(term[k]) != term.rfind(term[k]))
      throw std::runtime_error("Einsum term '" + term +
                               "': labels must be letters, each once (no diagonals), and one "
                               "ellipsis (...) at most");
    ++letters;
  }
  if (dots == std::string::npos) {
    if (letters != rank)
      throw std::runtime_error(fmt::format("Einsum term '{}' for a rank-{} operand", term, rank));
    return -1;
  }
  if (letters > rank)
    throw std::runtime_error(fmt::format("Einsum term '{}' for a rank-{} operand", term, rank));
  return static_cast<int>(rank - letters);
}

EinsumLabels einsum_labels(const std::vector<std::string>& terms, const std::vector<Shape>& shapes,
                           const std::optional<std::string>& rhs) {
  std::vector<int> dims;
  int e = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    dims.push_back(ellipsis_dims(terms[i], shapes[i].size()));
    e = std::max(e, dims.back());
  }
  if (e > 10) throw std::runtime_error("Einsum with an ellipsis of more than 10 dimensions");
  EinsumLabels r;
  std::map<char, std::int64_t> broadcast;  // each ellipsis dimension's broadcast extent
  for (std::size_t i = 0; i < terms.size(); ++i)
    for (int k = 0; k < dims[i]; ++k) {
      const char c = kEllipsis[e - dims[i] + k];
      broadcast[c] = std::max(broadcast[c], shapes[i][static_cast<std::size_t>(k)]);
    }
  std::size_t singles = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    std::string t;
    std::size_t d = 0;  // the operand's dimension
    for (std::size_t k = 0; k < terms[i].size(); ++k) {
      if (terms[i][k] != '.') {
        t += terms[i][k];
        ++d;
        continue;
      }
      for (int j = 0; j < dims[i]; ++j, ++d) {
        char c = kEllipsis[e - dims[i] + j];
        if (shapes[i][d] == 1 && broadcast[c] > 1) {
          if (singles + 1 >= sizeof(kBroadcastOne))
            throw std::runtime_error("Einsum with too many broadcast dimensions");
          c = kBroadcastOne[singles++];
        }
        t += c;
      }
      k += 2;
    }
    for (std::size_t k = 0; k < t.size(); ++k) {
      const std::int64_t x = shapes[i][k];
      const char* pos = std::strchr(kEllipsis, t[k]);
      if (r.extent.count(t[k]) && r.extent[t[k]] != x)
        throw std::runtime_error(
            pos ? fmt::format("Einsum: dimension {} of the ellipsis has extents {} and {} (they "
                              "must be equal, or 1)",
                              pos - kEllipsis, r.extent[t[k]], x)
                : fmt::format("Einsum label '{}' has extents {} and {}", t[k], r.extent[t[k]], x));
      r.extent[t[k]] = x;
    }
    r.terms.push_back(std::move(t));
  }
  const std::string all_dims(kEllipsis, static_cast<std::size_t>(e));
  if (rhs) {
    const auto dots = rhs->find("...");
    const std::string given =
        dots == std::string::npos ? *rhs : rhs->substr(0, dots) + all_dims + rhs->substr(dots + 3);
    for (char c : given)
      if (!r.extent.count(c) || given.find(c) != given.rfind(c) || c == '.')
        throw std::runtime_error("Einsum output '" + *rhs +
                                 "': each label once, from the operands");
    r.out = given;
  } else {
    std::map<char, int> count;
    for (const std::string& t : r.terms)
      for (char c : t) ++count[c];
    r.out = all_dims;
    for (const auto& [c, k] : count)
      if (k == 1 && std::isalpha(static_cast<unsigned char>(c))) r.out += c;
  }
  return r;
}

}  // namespace

const BlockedTensor& Lowerer::map(const std::string& name, const std::string& kernel,
                                  const std::vector<const BlockedTensor*>& operands,
                                  workloads::Attrs attrs) {
  Shape shape;
  const BlockedTensor* like = nullptr;
  for (const auto* o : operands) shape = broadcast_shapes(shape, o->shape);
  for (const auto* o : operands)
    if (!like && o->shape == shape && !o->blocks.empty()) like = o;
  return p_.map(name, kernel, operands, cuts_for(name, shape, like), std::move(attrs));
}

const BlockedTensor& Lowerer::einsum(const std::string& name, const std::string& spec,
                                     const BlockedTensor& a, const BlockedTensor& b,
                                     const std::string& out_labels, const Shape& out_shape) {
  const auto cuts = cuts_for(name, out_shape, nullptr);
  workloads::LabelCuts lc;
  for (std::size_t d = 0; d < out_labels.size(); ++d) lc[out_labels[d]] = cuts[d];
  return p_.einsum(name, spec, {&a, &b}, lc);
}

void Lowerer::matmul(const onnx::NodeProto& n) {
  const Shape sa = in(n, 0).shape, sb = in(n, 1).shape;
  if (sa.empty() || sb.empty()) throw std::runtime_error("MatMul of a scalar");
  if (sa.size() == 1 && sb.size() == 1)
    throw std::runtime_error("MatMul of two vectors is not supported");
  if (sa.back() != sb[sb.size() >= 2 ? sb.size() - 2 : 0])
    throw std::runtime_error(
        fmt::format("MatMul of {} and {}: inner extents differ", shape_text(sa), shape_text(sb)));
  const Shape bb(sb.begin(), sb.end() - (sb.size() >= 2 ? 2 : 1));
  const Shape batch =
      broadcast_shapes(sa.size() >= 2 ? Shape(sa.begin(), sa.end() - 2) : Shape{}, bb);
  if (batch.size() > 6) throw std::runtime_error("MatMul with more than 6 batch dimensions");
  std::string la, lb, lo, single = kSingle;
  Shape out_shape;
  const auto batch_labels = [&](const Shape& s, std::size_t nb) {
    std::string l;
    for (std::size_t d = 0; d < nb; ++d) {
      const std::size_t bd = batch.size() - nb + d;
      if (s[d] == 1 && batch[bd] != 1) {
        l += single.front();
        single.erase(0, 1);
      } else {
        l += kBatch[bd];
      }
    }
    return l;
  };
  for (std::size_t d = 0; d < batch.size(); ++d) lo += kBatch[d];
  out_shape = batch;
  if (sa.size() >= 2) {
    la = batch_labels(sa, sa.size() - 2) + "mk";
    lo += 'm';
    out_shape.push_back(sa[sa.size() - 2]);
  } else {
    la = "k";
  }
  if (sb.size() >= 2) {
    lb = batch_labels(sb, sb.size() - 2) + "kn";
    lo += 'n';
    out_shape.push_back(sb.back());
  } else {
    lb = "k";
  }
  const auto& a = blocked(n, 0);
  const auto& b = blocked(n, 1);
  define(n.output(0), einsum(out(n), la + "," + lb + "->" + lo, a, b, lo, out_shape));
}

// Einsum without a label repeated within an operand: the labels renamed to distinct lower-case
// letters, the output's labels cut by the partition rule (contracted ones never), kernel einsum
// (2 FLOPs per iteration point). An ellipsis stands for the operand's leading dimensions left
// unlabelled, right-aligned and broadcast across operands (an extent-1 dimension against a larger
// one is summed over alone). Without "->" the output is the ellipsis dimensions, then the labels
// that appear once, in alphabetical order (ONNX's implicit form).
void Lowerer::einsum_op(const onnx::NodeProto& n) {
  const auto* attr = find_attr(n, "equation");
  std::string eq;
  for (char c : attr ? attr->s() : std::string()) eq += c == ' ' ? "" : std::string(1, c);
  const auto arrow = eq.find("->");
  std::vector<std::string> terms(1);
  for (char c : eq.substr(0, arrow)) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back().push_back(c);
  }
  if (static_cast<int>(terms.size()) != n.input_size())
    throw std::runtime_error(fmt::format("Einsum equation '{}' has {} operands, the node {}", eq,
                                         terms.size(), n.input_size()));
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < terms.size(); ++i) shapes.push_back(in(n, i).shape);
  std::optional<std::string> rhs;
  if (arrow != std::string::npos) rhs = eq.substr(arrow + 2);
  const EinsumLabels el = einsum_labels(terms, shapes, rhs);
  std::map<char, char> rename;  // distinct lower-case letters, in order of appearance
  for (const std::string& t : el.terms)
    for (char c : t)
      if (!rename.count(c)) rename[c] = static_cast<char>('a' + rename.size());
  if (rename.size() > 26) throw std::runtime_error("Einsum with more than 26 labels");
  Shape out_shape;
  std::string spec, lo;
  for (char c : el.out) {
    out_shape.push_back(el.extent.at(c));
    lo += rename[c];
  }
  std::vector<const BlockedTensor*> ops;
  for (std::size_t i = 0; i < el.terms.size(); ++i) {
    for (char c : el.terms[i]) spec += rename[c];
    spec += i + 1 < el.terms.size() ? "," : "->";
    ops.push_back(&blocked(n, i));
  }
  const auto cuts = cuts_for(out(n), out_shape, nullptr);
  workloads::LabelCuts lc;
  for (std::size_t d = 0; d < lo.size(); ++d) lc[lo[d]] = cuts[d];
  define(n.output(0), p_.einsum(out(n), spec + lo, ops, lc));
}

void Lowerer::gemm(const onnx::NodeProto& n) {
  const bool ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
  const double alpha = attr_float(n, "alpha", 1), beta = attr_float(n, "beta", 1);
  const Shape sa = in(n, 0).shape, sb = in(n, 1).shape;
  if (sa.size() != 2 || sb.size() != 2) throw std::runtime_error("Gemm operands must be matrices");
  const auto m = ta ? sa[1] : sa[0], k = ta ? sa[0] : sa[1];
  const auto kb = tb ? sb[1] : sb[0], nn = tb ? sb[0] : sb[1];
  if (k != kb)
    throw std::runtime_error(
        fmt::format("Gemm of {} and {}: inner extents differ", shape_text(sa), shape_text(sb)));
  const std::string spec = std::string(ta ? "km" : "mk") + "," + (tb ? "nk" : "kn") + "->mn";
  const bool bias = has_in(n, 2);
  const bool scaled = alpha != 1;
  const std::string mm_name = bias || scaled ? out(n, ".mm") : out(n);
  const BlockedTensor* y = &einsum(mm_name, spec, blocked(n, 0), blocked(n, 1), "mn", {m, nn});
  if (scaled) y = &map(bias ? out(n, ".alpha") : out(n), "scale", {y}, {{"scale", alpha}});
  if (bias) {
    const Value& c = in(n, 2);
    const BlockedTensor* cb;
    if (c.constant && beta != 1) {
      HostTensor s = *c.constant;
      for (double& v : s.data) v *= beta;
      cb = &load(n.input(2) + ".beta", s);
    } else {
      cb = &blocked(n, 2);
      if (beta != 1) cb = &map(out(n, ".beta"), "scale", {cb}, {{"scale", beta}});
    }
    y = &map(out(n), "add", {y, cb});
  }
  define(n.output(0), *y);
}

void Lowerer::binary(const onnx::NodeProto& n) {
  static const std::map<std::string, std::string> kernels = {
      {"Add", "add"},   {"Sub", "sub"},     {"Mul", "mul"}, {"Div", "div"},
      {"Pow", "power"}, {"PRelu", "prelu"}, {"Mod", "mod"}};
  const std::string& op = n.op_type();
  const Value &a = in(n, 0), &b = in(n, 1);
  if (op == "Mod" && attr_int(n, "fmod", 0) != 0) {  // C's fmod: the dividend's sign
    define(n.output(0), map(out(n), "fmod", {&blocked(n, 0), &blocked(n, 1)}));
    return;
  }
  if (op == "Pow" && scalar(b)) {  // a constant scalar exponent: kernel pow
    define(n.output(0), map(out(n), "pow", {&blocked(n, 0)}, {{"exponent", b.constant->data[0]}}));
    return;
  }
  // Scaling by a constant scalar: one "scale" kernel (1 FLOP per element, like mul / div).
  if ((op == "Mul" || op == "Div") && scalar(b) && !a.constant) {
    const double c = b.constant->data[0];
    define(n.output(0),
           map(out(n), "scale", {&blocked(n, 0)}, {{"scale", op == "Mul" ? c : 1 / c}}));
    return;
  }
  if (op == "Mul" && scalar(a) && !b.constant) {
    define(n.output(0), map(out(n), "scale", {&blocked(n, 1)}, {{"scale", a.constant->data[0]}}));
    return;
  }
  define(n.output(0), map(out(n), kernels.at(op), {&blocked(n, 0), &blocked(n, 1)}));
}

// Max and Min of computed tensors (variadic, broadcasting): a chain of maximum / minimum kernels
// (1 FLOP per output element each); NaN wins, as in PyTorch.
void Lowerer::extremum(const onnx::NodeProto& n) {
  const std::string k = n.op_type() == "Max" ? "maximum" : "minimum";
  const BlockedTensor* y = &blocked(n, 0);
  for (int i = 1; i < n.input_size(); ++i)
    y = &map(i + 1 == n.input_size() ? out(n) : out(n, fmt::format(".{}", i)), k,
             {y, &blocked(n, static_cast<std::size_t>(i))});
  define(n.output(0), *y);
}

void Lowerer::unary(const onnx::NodeProto& n) {
  static const std::map<std::string, std::string> kernels = {{"Relu", "relu"},
                                                             {"Sqrt", "sqrt"},
                                                             {"Neg", "neg"},
                                                             {"Sigmoid", "sigmoid"},
                                                             {"Tanh", "tanh"},
                                                             {"Erf", "erf"},
                                                             {"Gelu", "gelu"},
                                                             {"Exp", "exp"},
                                                             {"LeakyRelu", "leaky_relu"},
                                                             {"Elu", "elu"},
                                                             {"Softplus", "softplus"},
                                                             {"Abs", "abs"},
                                                             {"Log", "log"},
                                                             {"Reciprocal", "reciprocal"},
                                                             {"Floor", "floor"},
                                                             {"Ceil", "ceil"},
                                                             {"Round", "round"},
                                                             {"Sign", "sign"},
                                                             {"Sin", "sin"},
                                                             {"Cos", "cos"},
                                                             {"Tan", "tan"},
                                                             {"Asin", "asin"},
                                                             {"Acos", "acos"},
                                                             {"Atan", "atan"},
                                                             {"Sinh", "sinh"},
                                                             {"Cosh", "cosh"},
                                                             {"IsNaN", "isnan"},
                                                             {"Selu", "selu"},
                                                             {"Celu", "celu"},
                                                             {"IsInf", "isinf"}};
  const std::string& op = n.op_type();
  if (op == "LeakyRelu" || op == "Elu") {
    const double alpha = attr_float(n, "alpha", op == "Elu" ? 1.0 : 0.01);
    define(n.output(0), map(out(n), kernels.at(op), {&blocked(n, 0)}, {{"alpha", alpha}}));
    return;
  }
  if (op == "Selu" || op == "Celu") {
    workloads::Attrs a = {
        {"alpha", attr_float(n, "alpha", op == "Selu" ? 1.67326319217681884765625 : 1.0)}};
    if (op == "Selu") a.push_back({"gamma", attr_float(n, "gamma", 1.05070102214813232421875)});
    define(n.output(0), map(out(n), kernels.at(op), {&blocked(n, 0)}, std::move(a)));
    return;
  }
  if (op == "IsInf") {
    define(n.output(0), map(out(n), "isinf", {&blocked(n, 0)},
                            {{"positive", attr_int(n, "detect_positive", 1) != 0 ? 1.0 : 0.0},
                             {"negative", attr_int(n, "detect_negative", 1) != 0 ? 1.0 : 0.0}}));
    return;
  }
  if (op == "Gelu") {
    const auto* a = find_attr(n, "approximate");
    if (a && a->s() != "none")
      throw std::runtime_error("Gelu with approximate='" + a->s() + "' is not supported");
  }
  define(n.output(0), map(out(n), kernels.at(op), {&blocked(n, 0)}));
}

const BlockedTensor& Lowerer::last_axis_whole(const BlockedTensor& t) {
  std::vector<std::optional<Cuts>> req(t.shape.size());
  if (t.blocks.empty()) {  // a loaded constant or input: take the partition rule's layout
    auto cuts = cuts_for(t.name, t.shape, nullptr);
    for (std::size_t d = 0; d < req.size(); ++d) req[d] = cuts[d];
  }
  if (!req.empty()) req.back() = Cuts{0, t.shape.back()};
  return p_.ensure_layout(t, req);
}

// Softmax and LogSoftmax (the log of the softmax). From opset 13 along `axis` (another axis is
// swapped with the last, as CumSum's); before 13 over the input coerced to 2-D at `axis`: every
// axis from `axis` on, merged by a reshape.
void Lowerer::softmax(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto rank = static_cast<std::int64_t>(s.size());
  if (rank == 0) throw std::runtime_error(n.op_type() + " of a scalar");
  const auto axis = normalize_axis(attr_int(n, "axis", opset_ >= 13 ? -1 : 1), rank);
  const bool log = n.op_type() == "LogSoftmax";
  const LastAxisOp rows = [&](const BlockedTensor& x,
                              const std::string& y) -> const BlockedTensor& {
    if (!log) return workloads::softmax(p_, y, x);
    return map(y, "log", {&workloads::softmax(p_, y + ".softmax", x)});
  };
  if (opset_ >= 13 || axis == rank - 1) {
    define(n.output(0), along_axis(n, axis, rows));
    return;
  }
  const auto& x = last_axis_whole(reshaped(out(n, ":2d"), blocked(n, 0), merged_from(s, axis)));
  define(n.output(0), reshaped(out(n), rows(x, out(n, ":rows")), s));
}

const BlockedTensor& Lowerer::along_axis(const onnx::NodeProto& n, std::int64_t axis,
                                         const LastAxisOp& f) {
  const auto rank = static_cast<int>(in(n, 0).shape.size());
  const int last = rank - 1;
  if (axis == last) return f(last_axis_whole(blocked(n, 0)), out(n));
  std::vector<int> perm(static_cast<std::size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<std::size_t>(axis)], perm[static_cast<std::size_t>(last)]);
  const auto& t = p_.transpose(out(n, ":t"), blocked(n, 0), perm);
  return p_.transpose(out(n), f(last_axis_whole(t), out(n, ":along")), perm);
}

Shape merged_from(const Shape& s, std::int64_t axis) {
  Shape rows(s.begin(), s.begin() + axis);
  if (rows.empty()) rows.push_back(1);
  rows.push_back(std::accumulate(s.begin() + axis, s.end(), std::int64_t{1}, std::multiplies<>()));
  return rows;
}

// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare and ReduceL2 over any axes: the
// reduced axes moved last (a transpose when they are not already), merged into one (a reshape),
// reduced by the last-axis kernels (made whole), then shaped as keepdims says. Min is -max(-x),
// L2 the square root of the sum of squares, Mean the sum scaled.
void Lowerer::reduce(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto rank = static_cast<std::int64_t>(s.size());
  const std::string& op = n.op_type();
  const HostTensor* axes_in =
      reduce_axes_are_input(op, opset_) && has_in(n, 1) ? &const_in(n, 1, "axes") : nullptr;
  const auto reduced = reduced_axes(n, axes_in, rank);
  if (!reduced) {  // noop_with_empty_axes
    define(n.output(0), blocked(n, 0));
    return;
  }
  const ReducedRows rr = reduced_rows(n, *reduced);
  const BlockedTensor* x = rr.rows;
  const std::int64_t len = x->shape.back();
  const std::string y = out(n, ":r");
  const BlockedTensor* r = nullptr;
  if (op == "ReduceMax") {
    r = &p_.reduce(y, "reduce_max", *x);
  } else if (op == "ReduceMin") {
    const auto& neg = p_.map(y + ".neg", "neg", {x}, x->cuts);
    r = &map(y, "neg", {&p_.reduce(y + ".max", "reduce_max", neg)});
  } else if (op == "ReduceSumSquare" || op == "ReduceL2") {
    r = &p_.reduce(y, "reduce_sumsq", *x);
    if (op == "ReduceL2") r = &map(y + ".sqrt", "sqrt", {r});
  } else if (op == "ReduceL1") {
    r = &p_.reduce(y, "reduce_sum", p_.map(y + ".abs", "abs", {x}, x->cuts));
  } else if (op == "ReduceLogSumExp") {  // m + log(sum(exp(x - m))), m the max: no overflow
    const auto& m = p_.reduce(y + ".max", "reduce_max", *x);
    const auto& e =
        p_.map(y + ".exp", "exp", {&p_.map(y + ".sub", "sub", {x, &m}, x->cuts)}, x->cuts);
    r = &map(y, "add", {&map(y + ".log", "log", {&p_.reduce(y + ".sum", "reduce_sum", e)}), &m});
  } else {
    r = &p_.reduce(y, "reduce_sum", *x);
    if (op == "ReduceMean")
      r = &map(y + ".mean", "scale", {r}, {{"scale", 1.0 / static_cast<double>(len)}});
  }
  define(n.output(0),
         reshaped(out(n), *r, attr_int(n, "keepdims", 1) != 0 ? rr.keep_shape : rr.kept));
}

Lowerer::ReducedRows Lowerer::reduced_rows(const onnx::NodeProto& n,
                                           const std::vector<bool>& reduced) {
  const Shape s = in(n, 0).shape;
  const auto rank = static_cast<int>(s.size());
  ReducedRows rr;
  std::vector<int> perm;  // kept axes in order, then the reduced ones
  std::int64_t len = 1;
  for (int d = 0; d < rank; ++d)
    if (!reduced[static_cast<std::size_t>(d)]) perm.push_back(d), rr.kept.push_back(s[d]);
  for (int d = 0; d < rank; ++d)
    if (reduced[static_cast<std::size_t>(d)]) perm.push_back(d), len *= s[d];
  for (int d = 0; d < rank; ++d)
    rr.keep_shape.push_back(reduced[static_cast<std::size_t>(d)] ? 1 : s[d]);
  const BlockedTensor* x = &blocked(n, 0);
  if (!std::is_sorted(perm.begin(), perm.end())) x = &p_.transpose(out(n, ":moved"), *x, perm);
  Shape rows = rr.kept;
  rows.push_back(len);
  rr.rows = &last_axis_whole(reshaped(out(n, ":rows"), *x, rows));
  return rr;
}

// ArgMax / ArgMin along `axis` (keepdims, select_last_index): the axis moved last by a
// transpose when it is not, made whole, kernel reduce_argmax (ArgMin: of the negation); the
// indices are whole numbers held as floats.
void Lowerer::arg_reduce(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto rank = static_cast<std::int64_t>(s.size());
  if (rank == 0) throw std::runtime_error(n.op_type() + " of a scalar");
  std::vector<bool> reduced(s.size(), false);
  reduced[static_cast<std::size_t>(normalize_axis(attr_int(n, "axis", 0), rank))] = true;
  const ReducedRows rr = reduced_rows(n, reduced);
  const BlockedTensor* x = rr.rows;
  if (n.op_type() == "ArgMin") x = &p_.map(out(n, ":neg"), "neg", {x}, x->cuts);
  const auto& r = p_.reduce(out(n, ":r"), "reduce_argmax", *x,
                            {{"last", attr_int(n, "select_last_index", 0) != 0}});
  define(n.output(0),
         reshaped(out(n), r, attr_int(n, "keepdims", 1) != 0 ? rr.keep_shape : rr.kept));
}

// LayerNormalization over the axes from `axis` on (merged by a reshape, then reshaped back),
// then times Scale and plus B (both broadcast against the input); the optional outputs Mean and
// InvStdDev are the normalization's row statistics, reshaped.
void Lowerer::layer_norm(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto rank = static_cast<std::int64_t>(s.size());
  if (rank == 0) throw std::runtime_error("LayerNormalization of a scalar");
  const auto axis = normalize_axis(attr_int(n, "axis", -1), rank);
  const std::string y = out(n);
  const auto& flat = reshaped(y + ":rows", blocked(n, 0), merged_from(s, axis));
  const Normalized nz = normalized(y, flat, attr_float(n, "epsilon", 1e-5));
  const auto& xn = reshaped(y + ":norm", *nz.y, s);
  const bool bias = has_in(n, 2);
  const auto& g = p_.map(bias ? y + ".gain" : y, "mul", {&xn, &blocked(n, 1)}, xn.cuts);
  define(n.output(0), bias ? p_.map(y, "add", {&g, &blocked(n, 2)}, xn.cuts) : g);
  // Mean and InvStdDev (optional outputs): X's shape with 1 from `axis` on.
  Shape stat = s;
  std::fill(stat.begin() + axis, stat.end(), 1);
  const BlockedTensor* stats[] = {nz.mean, nz.inv_std};
  for (int i : {1, 2})
    if (n.output_size() > i && !n.output(i).empty())
      define(n.output(i), reshaped(n.output(i), *stats[i - 1], stat));
}

// (x - mean) / sqrt(var + eps) along the last axis (made whole), the steps named after y:
// 5 FLOPs per element and 4 per row.
Lowerer::Normalized Lowerer::normalized(const std::string& y, const BlockedTensor& x0, double eps) {
  const auto& x = last_axis_whole(x0);
  const double inv_d = 1.0 / static_cast<double>(x.shape.back());
  const auto& sum = p_.reduce(y + ".sum", "reduce_sum", x);
  const auto& mean = map(y + ".mean", "scale", {&sum}, {{"scale", inv_d}});
  const auto& xc = p_.map(y + ".center", "sub", {&x, &mean}, x.cuts);
  const auto& ss = p_.reduce(y + ".sumsq", "reduce_sumsq", xc);
  const auto& r = map(y + ".rstd", "rsqrt", {&ss}, {{"scale", inv_d}, {"eps", eps}});
  return {&p_.map(y + ".norm", "mul", {&xc, &r}, x.cuts), &mean, &r};
}

// InstanceNormalization of x [N, C, D...]: each (n, c) normalized over D... (viewed as [N, C,
// prod D]), then scale[c] x + B[c]. PyTorch's GroupNorm exports as one over [N, G, C / G ...].
void Lowerer::instance_norm(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  if (s.size() < 3) throw std::runtime_error("InstanceNormalization of a tensor of rank below 3");
  for (std::size_t i : {1, 2})
    if (in(n, i).shape != Shape{s[1]})
      throw std::runtime_error(
          fmt::format("{} must have one value per channel ({})", i == 1 ? "scale" : "B", s[1]));
  std::int64_t d = 1;
  for (std::size_t i = 2; i < s.size(); ++i) d *= s[i];
  const std::string y = out(n);
  const auto& flat = reshaped(y + ":rows", blocked(n, 0), {s[0], s[1], d});
  const auto& xn = reshaped(y + ":norm", *normalized(y, flat, attr_float(n, "epsilon", 1e-5)).y, s);
  Shape per_channel(s.size() - 1, 1);
  per_channel[0] = s[1];
  const auto& scale = reshaped(y + ":scale", blocked(n, 1), per_channel);
  const auto& bias = reshaped(y + ":bias", blocked(n, 2), per_channel);
  const auto& g = map(y + ".gain", "mul", {&xn, &scale});
  define(n.output(0), map(y, "add", {&g, &bias}));
}

// Comparisons and logical connectives of computed tensors: 0 / 1 values (kernels less ..
// xor, not), 1 FLOP per element.
void Lowerer::compare(const onnx::NodeProto& n) {
  static const std::map<std::string, std::string> kernels = {{"Equal", "equal"},
                                                             {"Less", "less"},
                                                             {"Greater", "greater"},
                                                             {"LessOrEqual", "less_equal"},
                                                             {"GreaterOrEqual", "greater_equal"},
                                                             {"And", "and"},
                                                             {"Or", "or"},
                                                             {"Xor", "xor"},
                                                             {"Not", "not"}};
  const std::string& k = kernels.at(n.op_type());
  if (k == "not") {
    define(n.output(0), map(out(n), k, {&blocked(n, 0)}));
    return;
  }
  define(n.output(0), map(out(n), k, {&blocked(n, 0), &blocked(n, 1)}));
}

// Trilu of a computed tensor [..., N, M]: times a triangular 0 / 1 mask [N, M] (kernel fill with
// causal, diagonal k and lower for upper = 0; cut like the input's last two dimensions), 1 FLOP
// per element. k must be a constant.
void Lowerer::trilu(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const std::size_t r = s.size();
  if (r < 2) throw std::runtime_error("Trilu of a tensor of rank below 2");
  const std::int64_t k = trilu_diagonal(has_in(n, 1) ? &const_in(n, 1, "Trilu's k") : nullptr);
  const BlockedTensor& x = blocked(n, 0);
  std::vector<Cuts> cuts = {{0, s[r - 2]}, {0, s[r - 1]}};
  if (!x.blocks.empty()) cuts = {x.cuts[r - 2], x.cuts[r - 1]};
  const workloads::Attrs attrs = {{"value", 1},
                                  {"causal", 1},
                                  {"diagonal", static_cast<double>(k)},
                                  {"lower", attr_int(n, "upper", 1) != 0 ? 0.0 : 1.0}};
  const auto& mask = p_.fill(out(n, ".mask"), {s[r - 2], s[r - 1]}, std::move(cuts), attrs);
  define(n.output(0), map(out(n), "mul", {&x, &mask}));
}

// TopK along `axis` (K a constant): kernel topk on the last axis, made whole (another axis is
// swapped with the last one, once for both outputs, and each output swapped back). Values and
// Indices (whole-number floats) are each a topk of the input; the order is always sorted, which
// sorted = 0 allows.
void Lowerer::topk(const onnx::NodeProto& n) {
  const Shape s = in(n, 0).shape;
  const auto rank = static_cast<std::int64_t>(s.size());
  if (rank == 0) throw std::runtime_error("TopK of a scalar");
  const auto axis = normalize_axis(attr_int(n, "axis", -1), rank);
  const std::vector<std::int64_t> ks =
      opset_ >= 10 ? const_in(n, 1, "TopK's K").ints() : std::vector{attr_int(n, "k", 0)};
  const std::int64_t k = ks.size() == 1 ? ks[0] : -1, extent = s[static_cast<std::size_t>(axis)];
  if (k < 1 || k > extent)
    throw std::runtime_error(fmt::format("TopK: K must be one value in 1..{}", extent));
  const bool largest = attr_int(n, "largest", 1) != 0;
  std::vector<int> perm(static_cast<std::size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<std::size_t>(axis)], perm.back());
  const bool moved = axis != rank - 1;
  const BlockedTensor& x =
      last_axis_whole(moved ? p_.transpose(out(n, ":t"), blocked(n, 0), perm) : blocked(n, 0));
  for (int i : {0, 1}) {
    if (n.output_size() <= i || n.output(i).empty()) continue;
    const std::string& y = n.output(i);
    const auto& t = p_.topk(moved ? y + ":along" : y, x, k, largest, i == 1);
    define(y, moved ? p_.transpose(y, t, perm) : t);
  }
}

// CumSum along `axis` (a constant): kernel cumsum on the last axis, made whole (another axis is
// swapped with the last one by two transposes around it).
void Lowerer::cumsum(const onnx::NodeProto& n) {
  const auto rank = static_cast<std::int64_t>(in(n, 0).shape.size());
  if (rank == 0) throw std::runtime_error("CumSum of a scalar");
  const auto axis = normalize_axis(const_in(n, 1, "axis").ints().at(0), rank);
  const workloads::Attrs attrs = {{"exclusive", attr_int(n, "exclusive", 0) != 0 ? 1.0 : 0.0},
                                  {"reverse", attr_int(n, "reverse", 0) != 0 ? 1.0 : 0.0}};
  define(n.output(0),
         along_axis(n, axis,
                    [&](const BlockedTensor& x, const std::string& y) -> const BlockedTensor& {
                      return p_.map(y, "cumsum", {&x}, x.cuts, attrs);
                    }));
}

void Lowerer::where(const onnx::NodeProto& n) {
  if (!in(n, 0).constant) {  // a computed condition: kernel where (1 FLOP per element)
    define(n.output(0), map(out(n), "where", {&blocked(n, 0), &blocked(n, 1), &blocked(n, 2)}));
    return;
  }
  const HostTensor& c = const_in(n, 0, "condition");
  const Value &x = in(n, 1), &y = in(n, 2);
  const auto pick = [&](const HostTensor& t, bool when) {  // t where c == when, else 0
    const Shape s = broadcast_shapes(c.shape, t.shape);
    const HostTensor cb = broadcast_to(c, s);
    HostTensor r = broadcast_to(t, s);
    r.integer = false;
    for (std::size_t i = 0; i < r.data.size(); ++i)
      if ((cb.data[i] != 0) != when) r.data[i] = 0;
    return r;
  };
  const HostTensor ones{{}, {1.0}, false};
  if (x.constant || y.constant) {
    const bool xc = x.constant.has_value();
    // out = other * keep + fixed: keep is 1 where the computed branch is taken, fixed holds the
    // constant branch's values elsewhere (2 FLOPs per element).
    const auto& keep = load(out(n, ".keep"), pick(ones, !xc));
    const auto& fixed = load(out(n, ".fixed"), pick(xc ? *x.constant : *y.constant, xc));
    const auto& kept = map(out(n, ".kept"), "mul", {&blocked(n, xc ? 2 : 1), &keep});
    define(n.output(0), map(out(n), "add", {&kept, &fixed}));
    return;
  }
  const auto& on = load(out(n, ".on"), pick(ones, true));
  const auto& off = load(out(n, ".off"), pick(ones, false));
  const auto& a = map(out(n, ".x"), "mul", {&blocked(n, 1), &on});
  const auto& b = map(out(n, ".y"), "mul", {&blocked(n, 2), &off});
  define(n.output(0), map(out(n), "add", {&a, &b}));
}

}  // namespace doppler::onnx_import
