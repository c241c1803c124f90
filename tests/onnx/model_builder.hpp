#pragma once
// Test-only: small ONNX models built with the protobuf API, serialised for import_onnx_bytes.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace doppler::test {

/// A dimension: an extent or a symbolic name (dynamic).
using Dim = std::variant<std::int64_t, std::string>;

/// Builds a ModelProto step by step.
class ModelBuilder {
public:
  /// An empty graph importing the default domain at `opset`.
  explicit ModelBuilder(std::int64_t opset = 14) {
    model_.set_ir_version(8);
    model_.set_producer_name("doppler-test");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  /// A graph input (float unless `elem_type` says otherwise).
  ModelBuilder& input(const std::string& name, const std::vector<Dim>& dims,
                      int elem_type = onnx::TensorProto::FLOAT) {
    value_info(model_.mutable_graph()->add_input(), name, dims, false, elem_type);
    return *this;
  }
  /// A graph output (shape optional; float unless `elem_type` says otherwise).
  ModelBuilder& output(const std::string& name, const std::vector<Dim>& dims = {},
                       int elem_type = onnx::TensorProto::FLOAT) {
    value_info(model_.mutable_graph()->add_output(), name, dims, dims.empty(), elem_type);
    return *this;
  }
  /// A shape annotation of an intermediate tensor.
  ModelBuilder& annotate(const std::string& name, const std::vector<Dim>& dims) {
    value_info(model_.mutable_graph()->add_value_info(), name, dims);
    return *this;
  }
  /// A float initializer.
  ModelBuilder& weight(const std::string& name, const std::vector<std::int64_t>& dims,
                       const std::vector<float>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  /// An int64 initializer.
  ModelBuilder& ints(const std::string& name, const std::vector<std::int64_t>& dims,
                     const std::vector<std::int64_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }
  /// A node; `int_attrs` and `ints_attrs` are integer and integer-list attributes.
  ModelBuilder& node(
      const std::string& op, const std::vector<std::string>& in,
      const std::vector<std::string>& out,
      const std::vector<std::pair<std::string, std::int64_t>>& int_attrs = {},
      const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& ints_attrs = {},
      const std::vector<std::pair<std::string, float>>& float_attrs = {}) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(model_.graph().node_size()));
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    for (const auto& [k, v] : int_attrs) {
      auto* a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(v);
    }
    for (const auto& [k, v] : ints_attrs) {
      auto* a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::INTS);
      for (auto x : v) a->add_ints(x);
    }
    for (const auto& [k, v] : float_attrs) {
      auto* a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(v);
    }
    return *this;
  }
  /// A string attribute of the last node added.
  ModelBuilder& attr(const std::string& name, const std::string& value) {
    auto* a = model_.mutable_graph()->mutable_node(model_.graph().node_size() - 1)->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
    return *this;
  }
  /// A string-list attribute of the last node added.
  ModelBuilder& attr(const std::string& name, const std::vector<std::string>& values) {
    auto* a = model_.mutable_graph()->mutable_node(model_.graph().node_size() - 1)->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const auto& v : values) a->add_strings(v);
    return *this;
  }
  /// A float-list attribute of the last node added.
  ModelBuilder& floats(const std::string& name, const std::vector<float>& values) {
    auto* a = model_.mutable_graph()->mutable_node(model_.graph().node_size() - 1)->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float v : values) a->add_floats(v);
    return *this;
  }
  /// The serialised model.
  std::string bytes() const { return model_.SerializeAsString(); }
  /// The model itself, for edits.
  onnx::ModelProto& proto() { return model_; }

private:
  static void value_info(onnx::ValueInfoProto* vi, const std::string& name,
                         const std::vector<Dim>& dims, bool no_shape = false,
                         int elem_type = onnx::TensorProto::FLOAT) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    if (no_shape) return;
    auto* s = tt->mutable_shape();
    for (const auto& d : dims) {
      auto* x = s->add_dim();
      if (std::holds_alternative<std::int64_t>(d))
        x->set_dim_value(std::get<std::int64_t>(d));
      else
        x->set_dim_param(std::get<std::string>(d));
    }
  }
  onnx::ModelProto model_;
};

}  // namespace doppler::test
