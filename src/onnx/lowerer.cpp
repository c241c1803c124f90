// The lowering state: values, constants, the partition rule and the per-op dispatch.
#include "lowerer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "doppler/util/read_limits.hpp"

namespace doppler::onnx_import {

std::vector<std::int64_t> auto_parts(const Shape& shape, int devices) {
  std::vector<std::size_t> order(shape.size());
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return shape[a] > shape[b]; });
  std::vector<std::int64_t> parts(shape.size(), 1);
  std::int64_t have = 1;
  for (std::size_t d : order) {
    if (have >= devices) break;
    const auto need = (devices + have - 1) / have;
    parts[d] = std::min<std::int64_t>(shape[d], need);
    have *= parts[d];
  }
  return parts;
}

Lowerer::Lowerer(const ImportOptions& options, std::int64_t opset)
    : options_(options), opset_(opset), p_(options.dtype) {}

const std::map<std::string, Lowerer::Op>& Lowerer::ops() {
  static const std::map<std::string, Op> m = {{"MatMul", &Lowerer::matmul},
                                              {"Gemm", &Lowerer::gemm},
                                              {"Add", &Lowerer::binary},
                                              {"Sub", &Lowerer::binary},
                                              {"Mul", &Lowerer::binary},
                                              {"Div", &Lowerer::binary},
                                              {"Pow", &Lowerer::binary},
                                              {"PRelu", &Lowerer::binary},
                                              {"Max", &Lowerer::extremum},
                                              {"Min", &Lowerer::extremum},
                                              {"Reciprocal", &Lowerer::unary},
                                              {"Floor", &Lowerer::unary},
                                              {"Ceil", &Lowerer::unary},
                                              {"Round", &Lowerer::unary},
                                              {"Sign", &Lowerer::unary},
                                              {"Sin", &Lowerer::unary},
                                              {"Cos", &Lowerer::unary},
                                              {"Tan", &Lowerer::unary},
                                              {"Asin", &Lowerer::unary},
                                              {"Acos", &Lowerer::unary},
                                              {"Atan", &Lowerer::unary},
                                              {"Sinh", &Lowerer::unary},
                                              {"Cosh", &Lowerer::unary},
                                              {"Selu", &Lowerer::unary},
                                              {"Celu", &Lowerer::unary},
                                              {"IsNaN", &Lowerer::unary},
                                              {"IsInf", &Lowerer::unary},
                                              {"Mod", &Lowerer::binary},
                                              {"ReduceL1", &Lowerer::reduce},
                                              {"ReduceLogSumExp", &Lowerer::reduce},
                                              {"Relu", &Lowerer::unary},
                                              {"Sqrt", &Lowerer::unary},
                                              {"Neg", &Lowerer::unary},
                                              {"Sigmoid", &Lowerer::unary},
                                              {"Tanh", &Lowerer::unary},
                                              {"Erf", &Lowerer::unary},
                                              {"Gelu", &Lowerer::unary},
                                              {"Exp", &Lowerer::unary},
                                              {"LeakyRelu", &Lowerer::unary},
                                              {"Elu", &Lowerer::unary},
                                              {"Softplus", &Lowerer::unary},
                                              {"Abs", &Lowerer::unary},
                                              {"Log", &Lowerer::unary},
                                              {"LogSoftmax", &Lowerer::softmax},
                                              {"Softmax", &Lowerer::softmax},
                                              {"ReduceMean", &Lowerer::reduce},
                                              {"ReduceSum", &Lowerer::reduce},
                                              {"ReduceMax", &Lowerer::reduce},
                                              {"ReduceMin", &Lowerer::reduce},
                                              {"ReduceSumSquare", &Lowerer::reduce},
                                              {"ReduceL2", &Lowerer::reduce},
                                              {"ArgMax", &Lowerer::arg_reduce},
                                              {"ArgMin", &Lowerer::arg_reduce},
                                              {"LayerNormalization", &Lowerer::layer_norm},
                                              {"InstanceNormalization", &Lowerer::instance_norm},
                                              {"LRN", &Lowerer::lrn},
                                              {"Where", &Lowerer::where},
                                              {"Equal", &Lowerer::compare},
                                              {"Less", &Lowerer::compare},
                                              {"Greater", &Lowerer::compare},
                                              {"LessOrEqual", &Lowerer::compare},
                                              {"GreaterOrEqual", &Lowerer::compare},
                                              {"And", &Lowerer::compare},
                                              {"Or", &Lowerer::compare},
                                              {"Xor", &Lowerer::compare},
                                              {"Not", &Lowerer::compare},
                                              {"CumSum", &Lowerer::cumsum},
                                              {"Identity", &Lowerer::alias},
                                              {"Cast", &Lowerer::alias},
                                              {"Dropout", &Lowerer::alias},
                                              {"Shape", &Lowerer::shape_of},
                                              {"Transpose", &Lowerer::transpose},
                                              {"Expand", &Lowerer::expand},
                                              {"Reshape", &Lowerer::reshape},
                                              {"Flatten", &Lowerer::reshape},
                                              {"Squeeze", &Lowerer::reshape},
                                              {"Unsqueeze", &Lowerer::reshape},
                                              {"Concat", &Lowerer::concat},
                                              {"Split", &Lowerer::split},
                                              {"Slice", &Lowerer::slice},
                                              {"Tile", &Lowerer::tile},
                                              {"DepthToSpace", &Lowerer::depth_space},
                                              {"SpaceToDepth", &Lowerer::depth_space},
                                              {"Gather", &Lowerer::gather},
                                              {"Conv", &Lowerer::conv},
                                              {"Einsum", &Lowerer::einsum_op},
                                              {"ConvTranspose", &Lowerer::conv_transpose},
                                              {"MaxPool", &Lowerer::pool},
                                              {"AveragePool", &Lowerer::pool},
                                              {"GlobalAveragePool", &Lowerer::global_avg_pool},
                                              {"GlobalMaxPool", &Lowerer::global_avg_pool},
                                              {"BatchNormalization", &Lowerer::batch_norm},
                                              {"Clip", &Lowerer::clip},
                                              {"HardSigmoid", &Lowerer::hard_sigmoid},
                                              {"HardSwish", &Lowerer::hard_sigmoid},
                                              {"Pad", &Lowerer::pad},
                                              {"Trilu", &Lowerer::trilu},
                                              {"TopK", &Lowerer::topk},
                                              {"GatherElements", &Lowerer::gather_elements},
                                              {"ScatterND", &Lowerer::scatter_nd},
                                              {"Resize", &Lowerer::resize},
                                              {"Upsample", &Lowerer::resize},
                                              {"LSTM", &Lowerer::recurrent},
                                              {"GRU", &Lowerer::recurrent},
                                              {"RNN", &Lowerer::recurrent}};
  return m;
}

std::vector<std::string> supported_ops() {
  // Ops evaluated at import only (their inputs must be constants).
  std::vector<std::string> v = {"Constant", "ConstantOfShape", "Range", "ReduceProd"};
  for (const auto& [name, fn] : Lowerer::ops()) v.push_back(name);
  std::sort(v.begin(), v.end());
  return v;
}

void Lowerer::set_constant(const std::string& name, HostTensor t) {
  Value v;
  v.shape = t.shape;
  v.constant = std::move(t);
  values_[name] = std::move(v);
}

void Lowerer::set_input(const std::string& name, const Shape& shape,
                        std::optional<std::uint64_t> seed, std::optional<std::int64_t> index_rows) {
  const double half = index_rows ? static_cast<double>(*index_rows) / 2 : 0;
  const double scale = index_rows ? half : 1;
  define(name, seed ? p_.input_seeded(name, shape, *seed, scale, half)
                    : p_.input(name, shape, scale, half));
}

void Lowerer::set_loaded_input(const std::string& name, const HostTensor& t) {
  define(name, load_values(name, t));
  parameters_ -= static_cast<std::int64_t>(constants_.back().values.size());  // not a weight
}

const Value* Lowerer::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

bool Lowerer::has_in(const onnx::NodeProto& n, std::size_t i) const {
  return static_cast<int>(i) < n.input_size() && !n.input(static_cast<int>(i)).empty();
}

const Value& Lowerer::in(const onnx::NodeProto& n, std::size_t i) const {
  if (!has_in(n, i)) throw std::runtime_error(fmt::format("input {} is missing", i));
  const Value* v = find(n.input(static_cast<int>(i)));
  if (!v) throw std::runtime_error("reads undefined tensor '" + n.input(static_cast<int>(i)) + "'");
  return *v;
}

const HostTensor& Lowerer::const_in(const onnx::NodeProto& n, std::size_t i,
                                    const char* what) const {
  const Value& v = in(n, i);
  if (!v.constant) throw std::runtime_error(fmt::format("{} must be a constant", what));
  return *v.constant;
}

namespace {

// Whether `t` is a weight that --weights generated replaces: more than 1,024 values, not integer,
// finite, more than two distinct values (a mask, a fill or a small constant keeps its values).
bool generated_weight(const HostTensor& t) {
  if (t.integer || t.data.size() <= 1024) return false;
  double first = t.data.front(), other = first;
  bool third = false;
  for (double x : t.data) {
    if (!std::isfinite(x)) return false;
    if (x != first && other == first) other = x;
    third = third || (x != first && x != other);
  }
  return third;
}

}  // namespace

const BlockedTensor& Lowerer::load(const std::string& name, const HostTensor& t) {
  if (!options_.generated_weights || !generated_weight(t)) return load_values(name, t);
  double sum = 0, sumsq = 0;
  for (double x : t.data) sum += x, sumsq += x * x;
  const double n = static_cast<double>(t.data.size());
  const double mean = sum / n, var = std::max(0.0, sumsq / n - mean * mean);
  parameters_ += static_cast<std::int64_t>(t.data.size());
  // u in [-1, 1) has variance 1/3: scale sqrt(3) sigma keeps the weight's spread
  return p_.input(name, t.shape.empty() ? Shape{1} : t.shape, std::sqrt(3 * var), mean);
}

const BlockedTensor& Lowerer::load_values(const std::string& name, const HostTensor& t) {
  ConstantTensor c;
  c.name = name;
  c.shape = t.shape.empty() ? Shape{1} : t.shape;
  c.values.reserve(t.data.size());
  for (double x : t.data) c.values.push_back(static_cast<float>(x));
  parameters_ += static_cast<std::int64_t>(c.values.size());
  if (static_cast<std::uint64_t>(parameters_) * sizeof(float) > read_limits().max_constant_bytes)
    throw std::runtime_error(
        fmt::format("the model's constants exceed {} bytes (DOPPLER_MAX_CONSTANT_BYTES)",
                    read_limits().max_constant_bytes));
  const Shape shape = c.shape;
  constants_.push_back(std::move(c));
  return p_.constant(name, shape, static_cast<int>(constants_.size()) - 1);
}

const BlockedTensor& Lowerer::blocked(const onnx::NodeProto& n, std::size_t i) {
  in(n, i);
  Value& v = values_.at(n.input(static_cast<int>(i)));
  if (!v.blocked) {
    // An Identity of a constant loads the constant it names, once for all its names.
    Value& src = v.alias_of.empty() ? v : values_.at(v.alias_of);
    if (!src.blocked)
      src.blocked =
          &load(v.alias_of.empty() ? n.input(static_cast<int>(i)) : v.alias_of, *src.constant);
    v.blocked = src.blocked;
  }
  return *v.blocked;
}

void Lowerer::define(const std::string& name, const BlockedTensor& t) {
  Value v;
  v.shape = t.shape;
  v.blocked = &t;
  values_[name] = std::move(v);
}

std::string Lowerer::out(const onnx::NodeProto& n, const std::string& suffix) const {
  return (n.output_size() > 0 && !n.output(0).empty() ? n.output(0) : n.name()) + suffix;
}

std::vector<Cuts> Lowerer::cuts_for(const std::string& tensor, const Shape& shape,
                                    const BlockedTensor* like) const {
  if (auto it = options_.partition.find(tensor); it != options_.partition.end()) {
    if (it->second.size() != shape.size())
      throw std::runtime_error(fmt::format("--partition {}: {} block counts for a rank-{} tensor",
                                           tensor, it->second.size(), shape.size()));
    return workloads::even_grid(shape, it->second);
  }
  if (like && like->shape == shape && !like->blocks.empty()) return like->cuts;
  return workloads::even_grid(shape, auto_parts(shape, options_.devices));
}

bool Lowerer::lower(const onnx::NodeProto& n) {
  std::vector<HostTensor> consts;
  bool all_const = true;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      consts.emplace_back();
      continue;
    }
    const Value& v = in(n, static_cast<std::size_t>(i));
    if (v.constant)
      consts.push_back(*v.constant);
    else
      all_const = false;
  }
  const std::string& op = n.op_type();
  if (op == "Shape") {
    shape_of(n);
    return true;
  }
  if (all_const && op == "Identity") {  // PyTorch shares tied or equal weights this way
    Value alias = in(n, 0);
    if (alias.alias_of.empty() && !alias.blocked) alias.alias_of = n.input(0);
    values_[n.output(0)] = std::move(alias);
    return true;
  }
  if (all_const) {
    std::vector<HostTensor> outs;
    if (fold_node(n, opset_, consts, outs)) {
      for (std::size_t i = 0; i < outs.size() && static_cast<int>(i) < n.output_size(); ++i)
        set_constant(n.output(static_cast<int>(i)), std::move(outs[i]));
      return true;
    }
  }
  auto it = ops().find(op);
  if (it == ops().end()) throw std::runtime_error(op + " is only supported on constant inputs");
  (this->*it->second)(n);
  return false;
}

Graph Lowerer::finish(const std::vector<std::string>& outputs, GraphMeta meta) {
  for (const std::string& name : outputs) {
    const Value* v = find(name);
    if (!v) throw std::runtime_error("graph output '" + name + "' is never computed");
    const BlockedTensor* t = v->blocked;
    if (!t) t = &load(name + ".value", *v->constant);
    if (t->name != name) {
      const auto cuts = t->blocks.empty() ? cuts_for(name, t->shape, nullptr) : t->cuts;
      t = &p_.map(name, "identity", {t}, cuts);
    }
    define(name, *t);
  }
  Graph g = p_.build(std::move(meta));
  g.set_constants(std::move(constants_));
  constants_.clear();
  return g;
}

}  // namespace doppler::onnx_import
