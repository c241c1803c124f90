// ONNX import errors: every malformed or unsupported case gives one InputError naming the file
// and the problem (and the node where one is involved).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "onnx/model_builder.hpp"
#include "support/support.hpp"
#include "util/env_guard.hpp"

#include "doppler/onnx/import.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

using onnx_import::ImportOptions;
using test::ModelBuilder;

std::string import_error(const std::string& bytes, ImportOptions o = {}) {
  return test::error_of([&] { onnx_import::import_onnx_bytes(bytes, "m.onnx", o); });
}

ModelBuilder linear() {
  ModelBuilder m;
  m.input("x", {4, 8}).output("y", {4, 6}).weight("w", {8, 6}, std::vector<float>(48, 0.5f));
  m.node("MatMul", {"x", "w"}, {"y"});
  return m;
}

void expect_has(const std::string& e, const std::string& part) {
  EXPECT_NE(e.find(part), std::string::npos) << "error: " << e << "\nexpected: " << part;
}

TEST(OnnxImportErrors, ListsEveryUnsupportedOpWithCounts) {
  ModelBuilder m = linear();
  m.node("NonZero", {"y"}, {"c1"})
      .node("NonZero", {"c1"}, {"c2"})
      .node("NonMaxSuppression", {"c2"}, {"c3"});
  const auto e = import_error(m.bytes());
  expect_has(e, "m.onnx: unsupported ONNX ops: NonMaxSuppression (1), NonZero (2)");
}

TEST(OnnxImportErrors, CustomDomainOpsAreUnsupported) {
  ModelBuilder m = linear();
  m.node("Relu", {"y"}, {"r"});
  m.proto().mutable_graph()->mutable_node(1)->set_domain("com.example");
  expect_has(import_error(m.bytes()), "com.example.Relu (1)");
}

TEST(OnnxImportErrors, TruncatedOrGarbageProtobuf) {
  const std::string b = linear().bytes();
  expect_has(import_error(b.substr(0, b.size() / 2)), "m.onnx: not a readable ONNX protobuf");
  expect_has(import_error("definitely not a model"), "m.onnx:");
  expect_has(import_error(""), "m.onnx: the model has no graph");
}

TEST(OnnxImportErrors, NamesMustBeUtf8) {
  ModelBuilder m = linear();
  m.proto().mutable_graph()->mutable_node(0)->set_output(0, "y\xF9");
  expect_has(import_error(m.bytes()), "m.onnx: an output name of node #0 is not valid UTF-8");
}

TEST(OnnxImportErrors, UnsupportedOpset) {
  ModelBuilder m(3);
  m.input("x", {2}).output("y", {2}).node("Relu", {"x"}, {"y"});
  expect_has(import_error(m.bytes()), "m.onnx: unsupported opset 3");
  ModelBuilder none;
  none.proto().clear_opset_import();
  expect_has(import_error(none.bytes()), "no default-domain");
}

TEST(OnnxImportErrors, DynamicDimsNeedAnOverride) {
  ModelBuilder m;
  m.input("x", {std::string("batch"), 8}).output("y", {std::string("batch"), 6});
  m.weight("w", {8, 6}, std::vector<float>(48, 0.5f)).node("MatMul", {"x", "w"}, {"y"});
  const auto e = import_error(m.bytes());
  expect_has(e, "graph input 'x': dimension 0 ('batch') is dynamic");
  try {  // the library names the remedy as a concept; the CLI and Python word it
    onnx_import::import_onnx_bytes(m.bytes(), "m.onnx", ImportOptions{});
    ADD_FAILURE() << "no error";
  } catch (const InputError& err) {
    EXPECT_EQ(err.remedy(), Remedy::input_shape);
    EXPECT_EQ(err.remedy_subject(), "x");
    EXPECT_EQ(std::string(err.what()).find("--input"), std::string::npos) << err.what();
  }
  ImportOptions o;
  o.input_shapes["x"] = {5, 8};
  const auto r = onnx_import::import_onnx_bytes(m.bytes(), "m.onnx", o);
  EXPECT_DOUBLE_EQ(r.report.total_flops, 2.0 * 5 * 8 * 6);
  o.input_shapes["z"] = {1};
  expect_has(import_error(m.bytes(), o),
             "a shape is given for input 'z': the model has no such graph input");
}

TEST(OnnxImportErrors, ShapesThatDoNotAgree) {
  ModelBuilder m;
  m.input("x", {4, 8}).output("y", {4, 6}).weight("w", {7, 6}, std::vector<float>(42, 0.5f));
  m.node("MatMul", {"x", "w"}, {"y"});
  expect_has(import_error(m.bytes()), "m.onnx: shape inference:");
  ModelBuilder a;
  a.input("x", {4, 8}).output("y", {4, 6}).weight("w", {8, 6}, std::vector<float>(48, 0.5f));
  a.node("Relu", {"x"}, {"h"}).node("MatMul", {"h", "w"}, {"y"}).annotate("h", {4, 5});
  expect_has(import_error(a.bytes()), "m.onnx: shape inference:");
}

TEST(OnnxImportErrors, UnsupportedUsesNameTheNode) {
  ModelBuilder s(13);
  s.input("x", {1, 2, 4, 4}).output("y", {1, 2, 2, 2});  // the Indices used by no other node
  s.node("MaxPool", {"x"}, {"y", "idx"}, {}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
  expect_has(import_error(s.bytes()),
             "MaxPool's Indices output is not supported (node MaxPool_1 (MaxPool))");
  ModelBuilder p;
  p.input("x", {4, 8}).output("y", {4});
  p.node("ReduceProd", {"x"}, {"y"}, {{"keepdims", 0}}, {{"axes", {1}}});
  expect_has(import_error(p.bytes()),
             "ReduceProd is only supported on constant inputs (node ReduceProd_1 (ReduceProd))");
  ModelBuilder r;
  r.input("x", {4, 8}).input("a", {}, onnx::TensorProto::INT64).output("y", {4, 8});
  r.node("CumSum", {"x", "a"}, {"y"});
  expect_has(import_error(r.bytes()), "axis must be a constant (node CumSum_1 (CumSum))");
}

// A graph file holds finite numbers only: an infinite Clip bound is no bound (the f32 extreme,
// as when absent), any other attribute or scalar that is not finite is refused with its node
// (found by fuzz_onnx: the written graph did not parse back).
TEST(OnnxImportErrors, NonFiniteAttributesAreRefusedOrBounded) {
  const auto clip = [](float lo, float hi) {
    ModelBuilder m;
    m.input("x", {4, 8}).output("y", {4, 8}).weight("lo", {}, {lo}).weight("hi", {}, {hi});
    m.node("Clip", {"x", "lo", "hi"}, {"y"});
    return m;
  };
  const float inf = std::numeric_limits<float>::infinity();
  onnx_import::ImportOptions o;
  o.devices = 2;
  const auto res = onnx_import::import_onnx_bytes(clip(-inf, inf).bytes(), "m.onnx", o);
  for (const Node& n : res.graph.nodes()) {
    if (!n.exec || n.exec->op != "clip") continue;
    EXPECT_EQ(n.exec->attr("min", 0), -static_cast<double>(std::numeric_limits<float>::max()));
    EXPECT_EQ(n.exec->attr("max", 0), static_cast<double>(std::numeric_limits<float>::max()));
  }
  expect_has(import_error(clip(std::nanf(""), 1).bytes()),
             "m.onnx: Clip with a NaN bound (node Clip_1 (Clip))");
  ModelBuilder s;
  s.input("x", {4, 8}).output("y", {4, 8}).weight("k", {}, {inf});
  s.node("Mul", {"x", "k"}, {"y"});
  expect_has(import_error(s.bytes()),
             "m.onnx: kernel attribute 'scale' of block y[0,0] is inf (node Mul_1 (Mul))");
}

// A zero stride, dilation or kernel extent of a window op is refused before libonnx's shape
// inference, which divides by it (found by fuzz_onnx: SIGFPE on an AveragePool stride of 0).
TEST(OnnxImportErrors, ZeroWindowStridesAreRefusedBeforeShapeInference) {
  for (const char* attr : {"strides", "dilations", "kernel_shape"}) {
    ModelBuilder m;
    m.input("x", {1, 2, 8, 8}).output("y", {"n", "c", "h", "w"});
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> ints = {
        {"kernel_shape", {2, 2}}};
    if (std::string(attr) == "kernel_shape")
      ints[0].second = {2, 0};
    else
      ints.push_back({attr, {2, 0}});
    m.node(std::string(attr) == "dilations" ? "MaxPool" : "AveragePool", {"x"}, {"y"}, {}, ints);
    const std::string op = std::string(attr) == "dilations" ? "MaxPool" : "AveragePool";
    EXPECT_EQ(import_error(m.bytes()), "m.onnx: " + std::string(attr) +
                                           " [2, 0]: every entry must be positive (node " + op +
                                           "_1 (" + op + "))");
  }
}

TEST(OnnxImportErrors, ConstantBytesAreLimited) {
  // linear() loads 48 weights = 192 bytes; the generated input x is not a constant.
  test::EnvGuard limit("DOPPLER_MAX_CONSTANT_BYTES", "191");
  expect_has(import_error(linear().bytes()), "constants exceed 191 bytes");
  test::EnvGuard enough("DOPPLER_MAX_CONSTANT_BYTES", "192");
  EXPECT_EQ(import_error(linear().bytes()), "");
}

TEST(OnnxImportErrors, BadPartitionSpecs) {
  for (const char* bad : {"y", "=2", "y=", "y=0", "y=2xx3", "y=-1", "y=2,z"})
    expect_has(test::error_of([&] { onnx_import::parse_partition(bad); }), "--partition");
  EXPECT_TRUE(onnx_import::parse_partition("auto").empty());
  EXPECT_EQ(onnx_import::parse_partition("a=2x1,b:c=4").at("b:c"), std::vector<std::int64_t>{4});
}

TEST(OnnxImportErrors, CliExitsTwoAndWritesNothing) {
  const auto dir = std::filesystem::temp_directory_path() / "doppler_onnx_cli_errors";
  std::filesystem::create_directories(dir);
  ModelBuilder m = linear();
  m.node("NonZero", {"y"}, {"c"});
  {
    std::ofstream f(dir / "bad.onnx", std::ios::binary);
    f << m.bytes();
  }
  const auto out = dir / "g.json";
  std::filesystem::remove(out);
  const auto r =
      test::run_cli("import " + (dir / "bad.onnx").string() + " --devices 2 -o " + out.string());
  EXPECT_EQ(r.exit_code, 2);
  expect_has(r.err, "bad.onnx: unsupported ONNX ops: NonZero (1)");
  EXPECT_FALSE(std::filesystem::exists(out));
  {
    std::ofstream f(dir / "good.onnx", std::ios::binary);
    f << linear().bytes();
  }
  const auto ok = test::run_cli("import " + (dir / "good.onnx").string() + " --devices 2 -o " +
                                out.string() + " --json");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  expect_has(ok.out, "\"total_flops\": 384.0");
  EXPECT_TRUE(std::filesystem::exists(out));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace doppler
