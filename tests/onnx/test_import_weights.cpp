// Where an imported model's weights come from, and how many blocks its ops get: initializers
// stored as ONNX external data (read from the file beside the model, the same values as stored
// inside), the refusals of external data that cannot be read, generated weights (--weights
// generated: no constants for the weights, the same blocks and FLOPs, values with each weight's
// mean and spread), and whole ops (--partition whole).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "onnx/import_eval.hpp"
#include "onnx/model_builder.hpp"
#include "support/support.hpp"
#include "workloads/block_eval.hpp"

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/onnx/import.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

using test::Dense;
using test::ModelBuilder;

// y = relu(x W + b), x [8, 64], W [64, 32] (2,048 values, a weight), b [32]; W's values i / 1000
// - 1, b's 0.1 i.
ModelBuilder dense_layer() {
  std::vector<float> w(64 * 32), b(32);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) / 1000 - 1;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * static_cast<float>(i);
  ModelBuilder m(14);
  m.input("x", {8, 64}).output("y", {8, 32}).weight("W", {64, 32}, w).weight("b", {32}, b);
  m.node("MatMul", {"x", "W"}, {"xw"}).node("Add", {"xw", "b"}, {"z"}).node("Relu", {"z"}, {"y"});
  return m;
}

// `m` with initializer `name` moved to external data `location` (its float values as raw bytes
// at `offset` of a file in `dir`, after `offset` bytes of padding), written as dir/m.onnx.
std::filesystem::path with_external(ModelBuilder m, const std::string& name,
                                    const std::filesystem::path& dir, const std::string& location,
                                    std::uint64_t offset) {
  for (auto& t : *m.proto().mutable_graph()->mutable_initializer()) {
    if (t.name() != name) continue;
    std::string raw(offset, 'x');
    for (float v : t.float_data()) raw.append(reinterpret_cast<const char*>(&v), sizeof v);
    std::ofstream(dir / "data.bin", std::ios::binary) << raw;
    t.clear_float_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    const std::pair<const char*, std::string> entries[] = {
        {"location", location},
        {"offset", std::to_string(offset)},
        {"length", std::to_string(raw.size() - offset)}};
    for (const auto& [key, value] : entries) {
      auto* e = t.add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
  }
  const auto path = dir / "m.onnx";
  std::ofstream(path, std::ios::binary) << m.bytes();
  return path;
}

std::string import_error_of(const std::filesystem::path& path) {
  onnx_import::ImportOptions o;
  o.devices = 2;
  try {
    onnx_import::import_onnx(path.string(), o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(OnnxWeights, ExternalDataGivesTheValuesStoredInside) {
  test::TempDir dir;
  const auto path = with_external(dense_layer(), "W", dir.path(), "data.bin", 24);
  onnx_import::ImportOptions o;
  o.devices = 2;
  const auto inside = onnx_import::import_onnx_bytes(dense_layer().bytes(), "inside.onnx", o);
  const auto outside = onnx_import::import_onnx(path.string(), o);
  ASSERT_EQ(inside.graph.constants().size(), outside.graph.constants().size());
  for (std::size_t i = 0; i < inside.graph.constants().size(); ++i)
    EXPECT_EQ(inside.graph.constants()[i].values, outside.graph.constants()[i].values) << i;
  // and the values are the model's: y = relu(x W + b) by loops
  const auto values = test::evaluate_blocks(outside.graph, false);
  const Dense x = test::assemble_tensor(outside.graph, values, "x");
  const Dense y = test::assemble_tensor(outside.graph, values, "y");
  for (std::int64_t r = 0; r < 8; ++r)
    for (std::int64_t c = 0; c < 32; ++c) {
      double s = 0.1 * static_cast<double>(c);
      for (std::int64_t k = 0; k < 64; ++k)
        s += x(r, k) * (static_cast<double>(static_cast<float>(k * 32 + c) / 1000 - 1));
      EXPECT_NEAR(y(r, c), std::max(0.0, s), 1e-4) << r << " " << c;
    }
}

TEST(OnnxWeights, UnreadableExternalDataIsAOneLineError) {
  test::TempDir dir;
  const auto inside_dir = [&](const std::string& location, std::uint64_t offset) {
    return import_error_of(with_external(dense_layer(), "W", dir.path(), location, offset));
  };
  std::string e = inside_dir("../data.bin", 0);
  EXPECT_NE(e.find("relative to the model's directory, inside it"), std::string::npos) << e;
  e = inside_dir("missing.bin", 0);
  EXPECT_NE(e.find("cannot read its external data"), std::string::npos) << e;
  EXPECT_NE(e.find("missing.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("m.onnx"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // a length past the file's end
  const auto path = with_external(dense_layer(), "W", dir.path(), "data.bin", 0);
  std::filesystem::resize_file(dir.path() / "data.bin", 100);
  e = import_error_of(path);
  EXPECT_NE(e.find("holds 100 bytes, 8192 wanted from offset 0"), std::string::npos) << e;
}

// --weights generated: the weight W becomes an "input" block (no constant), the bias (32 values)
// keeps its values; blocks and FLOPs are the embedded import's; W's generated values have its
// mean and standard deviation within 10% of the spread, and are not W's.
TEST(OnnxWeights, GeneratedWeightsKeepTheGraphAndTheSpread) {
  onnx_import::ImportOptions o;
  o.devices = 2;
  const auto embedded = onnx_import::import_onnx_bytes(dense_layer().bytes(), "m.onnx", o);
  o.generated_weights = true;
  const auto generated = onnx_import::import_onnx_bytes(dense_layer().bytes(), "m.onnx", o);
  ASSERT_EQ(embedded.graph.constants().size(), 2u);  // W and b
  ASSERT_EQ(generated.graph.constants().size(), 1u);
  EXPECT_EQ(generated.graph.constants()[0].values.size(), 32u);
  EXPECT_EQ(generated.graph.num_nodes(), embedded.graph.num_nodes());
  EXPECT_EQ(generated.report.total_flops, embedded.report.total_flops);
  EXPECT_EQ(generated.report.parameters, embedded.report.parameters);
  const Dense w =
      test::assemble_tensor(generated.graph, test::evaluate_blocks(generated.graph, false), "W");
  double sum = 0, sumsq = 0, same = 0;
  for (std::size_t i = 0; i < w.data.size(); ++i) {
    sum += w.data[i], sumsq += w.data[i] * w.data[i];
    same += std::abs(w.data[i] - (static_cast<double>(i) / 1000 - 1)) < 1e-6;
  }
  const double n = static_cast<double>(w.data.size()), mean = sum / n;
  const double sd = std::sqrt(sumsq / n - mean * mean);
  const double want_mean = 2047.0 / 2000 - 1, want_sd = std::sqrt((2048.0 * 2048 - 1) / 12) / 1000;
  EXPECT_NEAR(mean, want_mean, 0.1 * want_sd);
  EXPECT_NEAR(sd, want_sd, 0.1 * want_sd);
  EXPECT_LT(same, 10);
}

// --partition whole (library whole_ops): every op one block, as an import for one device, while
// the graph records the P devices it is placed on (what place and compare default to); the
// values are the model's.
TEST(OnnxWeights, WholeOpsAreOneBlockEachAndTheGraphKeepsItsDevices) {
  onnx_import::ImportOptions o;
  o.devices = 1;
  const auto one = onnx_import::import_onnx_bytes(dense_layer().bytes(), "m.onnx", o);
  o.devices = 4;
  const auto cut = onnx_import::import_onnx_bytes(dense_layer().bytes(), "m.onnx", o);
  o.whole_ops = true;
  const auto whole = onnx_import::import_onnx_bytes(dense_layer().bytes(), "m.onnx", o);
  EXPECT_EQ(whole.graph.num_nodes(), one.graph.num_nodes());
  EXPECT_GT(cut.graph.num_nodes(), whole.graph.num_nodes());
  EXPECT_EQ(whole.graph.meta().params.at("devices"), "4");
  EXPECT_EQ(whole.report.total_flops, cut.report.total_flops);
  const auto values = test::evaluate_blocks(whole.graph, false);
  const Dense y = test::assemble_tensor(whole.graph, values, "y");
  const Dense want = test::assemble_tensor(one.graph, test::evaluate_blocks(one.graph, false), "y");
  EXPECT_EQ(test::max_abs_diff(y, want), 0);
  // the command line: whole, then an override for one tensor
  test::TempDir dir;
  std::ofstream(dir / "m.onnx", std::ios::binary) << dense_layer().bytes();
  const auto r = test::run_cli("import " + (dir / "m.onnx").string() + " --devices 4 -o " +
                               (dir / "g.json").string() + " --partition whole,z=2x1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Graph g = load_graph((dir / "g.json").string());
  int z_blocks = 0;  // z's blocks are z[0,0] and z[1,0]
  for (NodeId v = 0; v < g.num_nodes(); ++v) z_blocks += g.node(v).name.rfind("z[", 0) == 0;
  EXPECT_EQ(z_blocks, 2);
  EXPECT_EQ(g.meta().params.at("devices"), "4");
}

// The command line: --weights generated says so (text and JSON) and writes a graph without the
// weight; another value is a usage error (exit 2).
TEST(OnnxWeights, TheCommandLineSaysTheWeightsAreGenerated) {
  test::TempDir dir;
  std::ofstream(dir / "m.onnx", std::ios::binary) << dense_layer().bytes();
  const std::string base = "import " + (dir / "m.onnx").string() + " --devices 2 -o ";
  auto r = test::run_cli(base + (dir / "g.json").string() + " --weights generated");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("generated (seeded, each with its weight's mean and spread)"),
            std::string::npos)
      << r.out;
  r = test::run_cli(base + (dir / "g.json").string() + " --weights generated --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"weights\": \"generated\""), std::string::npos) << r.out;
  EXPECT_EQ(load_graph((dir / "g.json").string()).constants().size(), 1u);  // the bias
  r = test::run_cli(base + (dir / "h.json").string() + " --weights random");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "h.json"));
}

}  // namespace
}  // namespace doppler
