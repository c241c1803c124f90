// The workload registry: parameter parsing and validation (InputError naming the parameter),
// devices-derived partitioning with explicit overrides, metadata, determinism, the default
// workload, and the input-value function against the formula of docs/exec.md.
#include <set>

#include <gtest/gtest.h>

#include "block_eval.hpp"

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/kernels.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

using workloads::WorkloadSpec;

WorkloadSpec spec(const std::string& name, std::map<std::string, std::string> params = {}) {
  WorkloadSpec s;
  s.name = name;
  s.params = std::move(params);
  return s;
}

// The InputError message of generating `s` ("" when it succeeds).
std::string error_of(const WorkloadSpec& s) {
  try {
    workloads::generate_workload(s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Registry, ListsEveryWorkloadWithItsParameters) {
  std::map<std::string, std::set<std::string>> want = {
      {"chainmm", {"n"}},
      {"ffnn", {"batch", "dim", "hidden"}},
      {"llama-block", {"batch", "seq", "dim", "heads", "ffn"}},
      {"llama-layer", {"batch", "seq", "dim", "heads", "ffn", "vocab"}},
      {"llama", {"batch", "seq", "size", "dim", "heads", "ffn", "layers", "vocab"}},
      {"random-dag", {"ops", "width", "density", "ccr", "seed"}},
      {"planted", {"ops", "ratio", "density", "seed"}}};
  const auto all = workloads::list_workloads();
  ASSERT_EQ(all.size(), want.size());
  for (const auto& w : all) {
    ASSERT_TRUE(want.count(w.name)) << w.name;
    std::set<std::string> names;
    for (const auto& p : w.params) {
      names.insert(p.name);
      EXPECT_FALSE(p.help.empty());
      EXPECT_FALSE(p.default_value.empty());
    }
    for (const auto& p : want[w.name]) EXPECT_TRUE(names.count(p)) << w.name << " " << p;
    EXPECT_EQ(w.supports_training,
              w.name == "ffnn" || w.name == "llama-block" || w.name == "llama");
  }
}

TEST(Registry, BadInputIsAnInputErrorNamingTheProblem) {
  EXPECT_NE(error_of(spec("resnet")).find("unknown workload 'resnet'"), std::string::npos);
  EXPECT_NE(error_of(spec("chainmm", {{"m", "5"}})).find("unknown parameter 'm'"),
            std::string::npos);
  EXPECT_NE(error_of(spec("ffnn", {{"size", "5"}})).find("'size'"), std::string::npos);
  for (const char* bad : {"abc", "0", "-3", "1.5", "", "12x"})
    EXPECT_NE(error_of(spec("chainmm", {{"n", bad}})).find("parameter n"), std::string::npos)
        << bad;
  EXPECT_NE(error_of(spec("llama-block", {{"dim", "100"}, {"heads", "3"}})).find("heads"),
            std::string::npos);
  EXPECT_NE(error_of(spec("llama-block", {{"dim", "96"}, {"heads", "32"}})).find("even"),
            std::string::npos);  // head size 3
  EXPECT_NE(error_of(spec("chainmm", {{"n", "8"}, {"row_blocks", "9"}})).find("row_blocks"),
            std::string::npos);
  EXPECT_NE(
      error_of(spec("llama-layer", {{"heads", "32"}, {"head_blocks", "33"}})).find("head_blocks"),
      std::string::npos);
  EXPECT_NE(error_of(spec("random-dag", {{"density", "0"}})).find("density"), std::string::npos);
  EXPECT_NE(error_of(spec("random-dag", {{"density", "1.5"}})).find("density"), std::string::npos);
  EXPECT_NE(error_of(spec("random-dag", {{"ccr", "nan"}})).find("ccr"), std::string::npos);
  EXPECT_NE(error_of(spec("random-dag", {{"seed", "-1"}})).find("seed"), std::string::npos);
  EXPECT_NE(error_of(spec("random-dag", {{"width", "2000"}})).find("width"), std::string::npos);
  EXPECT_EQ(error_of(spec("random-dag", {{"seed", "0"}, {"ops", "50"}})), "");
  WorkloadSpec s = spec("chainmm", {{"n", "16"}});
  s.dtype = "f64";
  EXPECT_NE(error_of(s).find("dtype"), std::string::npos);
  s.dtype = "";
  s.devices = 0;
  EXPECT_NE(error_of(s).find("device"), std::string::npos);
  // Every message is one line.
  EXPECT_EQ(error_of(spec("chainmm", {{"n", "x"}})).find('\n'), std::string::npos);
}

TEST(Registry, DevicesSetThePartitioningAndParametersOverrideIt) {
  WorkloadSpec s =
      spec("llama-block", {{"seq", "64"}, {"dim", "64"}, {"heads", "8"}, {"ffn", "80"}});
  s.devices = 8;
  Graph g = workloads::generate_workload(s);
  EXPECT_EQ(g.meta().params.at("head_blocks"), "8");
  EXPECT_EQ(g.meta().params.at("token_blocks"), "8");
  EXPECT_EQ(g.meta().params.at("devices"), "8");
  s.params["head_blocks"] = "2";
  g = workloads::generate_workload(s);
  EXPECT_EQ(g.meta().params.at("head_blocks"), "2");
  EXPECT_EQ(g.meta().params.at("token_blocks"), "8");
  // Devices beyond a dimension are clamped: 4 heads cannot be cut in 16.
  s = spec("llama-block", {{"seq", "64"}, {"dim", "64"}, {"heads", "4"}, {"ffn", "80"}});
  s.devices = 16;
  EXPECT_EQ(workloads::generate_workload(s).meta().params.at("head_blocks"), "4");
  // chainmm: 2P = 6 for P = 3 gives a 3 x 2 output grid.
  s = spec("chainmm", {{"n", "30"}});
  s.devices = 3;
  g = workloads::generate_workload(s);
  EXPECT_EQ(g.meta().params.at("row_blocks"), "3");
  EXPECT_EQ(g.meta().params.at("col_blocks"), "2");
}

TEST(Registry, GenerationIsDeterministicAndDtypeDefaultsPerWorkload) {
  for (const char* name : {"chainmm", "ffnn", "llama-block", "llama-layer", "random-dag"}) {
    const Graph a = workloads::generate_workload(spec(name));
    const Graph b = workloads::generate_workload(spec(name));
    EXPECT_EQ(format_graph(a, GraphFormat::json), format_graph(b, GraphFormat::json)) << name;
    EXPECT_EQ(a.meta().name, name);
    EXPECT_EQ(a.meta().origin, "generated");
    EXPECT_TRUE(a.has_reference_costs());
  }
  EXPECT_EQ(workloads::generate_workload(spec("llama-block")).meta().params.at("dtype"), "f16");
  EXPECT_EQ(workloads::generate_workload(spec("chainmm")).meta().params.at("dtype"), "f32");
}

// bf16 (the CUDA engine's --gpu-dtype bf16) has f16's sizes: every byte count halves from f32.
TEST(Registry, Bf16GraphsHaveHalfTheBytesOfF32Ones) {
  WorkloadSpec s = spec("llama-block");
  s.dtype = "bf16";
  const Graph half = workloads::generate_workload(s);
  s.dtype = "f32";
  const Graph full = workloads::generate_workload(s);
  EXPECT_EQ(half.meta().params.at("dtype"), "bf16");
  ASSERT_EQ(half.num_nodes(), full.num_nodes());
  for (NodeId v = 0; v < half.num_nodes(); ++v) {
    EXPECT_EQ(2 * half.node(v).out_bytes, full.node(v).out_bytes) << half.node(v).name;
    EXPECT_EQ(half.node(v).flops, full.node(v).flops) << half.node(v).name;
  }
  s.dtype = "f8";
  EXPECT_THROW(workloads::generate_workload(s), InputError);
}

TEST(Registry, DefaultWorkloadIsTheFourDeviceLlamaLayer) {
  const Graph d = workloads::default_workload();
  WorkloadSpec s = spec("llama-layer");
  s.devices = 4;
  const Graph g = workloads::generate_workload(s);
  EXPECT_EQ(d.meta().name, "llama-layer");
  EXPECT_EQ(format_graph(d, GraphFormat::json), format_graph(g, GraphFormat::json));
}

TEST(Registry, DemoWorkloadIsTheReadmesCpuSizedLlamaLayer) {
  // docs/cli.md, doppler demo: seq 256, dim 256, 4 heads, FFN 512, vocabulary 1024, f32.
  for (int devices : {1, 2, 3}) {
    WorkloadSpec s =
        spec("llama-layer",
             {{"seq", "256"}, {"dim", "256"}, {"heads", "4"}, {"ffn", "512"}, {"vocab", "1024"}});
    s.dtype = "f32";
    s.devices = devices;
    const Graph d = workloads::generate_workload(workloads::demo_workload_spec(devices));
    EXPECT_EQ(d.meta().params.at("dtype"), "f32");
    EXPECT_EQ(d.meta().params.at("devices"), std::to_string(devices));
    EXPECT_EQ(format_graph(d, GraphFormat::json),
              format_graph(workloads::generate_workload(s), GraphFormat::json))
        << devices;
  }
}

TEST(Registry, InputValuesFollowTheDocumentedFormula) {
  // docs/exec.md: u = ((h >> 11) * 2^-52) - 1 with h a splitmix64 chain over seed and coords.
  const std::vector<std::vector<std::int64_t>> coords = {
      {}, {0}, {5}, {1, 2}, {4095, 4095, 31}, {123456789, 0, 7}};
  double sum = 0, lo = 1, hi = -1;
  for (std::uint64_t seed : {0ULL, 1ULL, 42ULL, (1ULL << 53) - 1}) {
    for (const auto& c : coords)
      EXPECT_EQ(workloads::input_unit_value(seed, c), test::doc_input_unit(seed, c));
    for (std::int64_t i = 0; i < 4000; ++i) {
      const double u = workloads::input_unit_value(seed, std::vector<std::int64_t>{i, 3});
      sum += u;
      lo = std::min(lo, u);
      hi = std::max(hi, u);
    }
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.99);
  EXPECT_GT(hi, 0.99);
  EXPECT_NEAR(sum / 16000, 0.0, 0.03);
}

TEST(Registry, EveryExecOpIsADocumentedKernelOfTheNodesKind) {
  std::set<std::string> used;
  for (const char* name : {"chainmm", "ffnn", "llama-block", "llama-layer"}) {
    WorkloadSpec s = spec(name);
    s.training = std::string(name) == "ffnn" || std::string(name) == "llama-block";
    const Graph g = workloads::generate_workload(s);
    for (const Node& n : g.nodes()) {
      ASSERT_TRUE(n.exec);
      const auto* k = workloads::find_kernel(n.exec->op);
      ASSERT_NE(k, nullptr) << n.exec->op;
      EXPECT_EQ(k->kind, n.kind) << n.name;
      if (k->arity >= 0) {
        EXPECT_EQ(static_cast<int>(n.exec->inputs.size()), k->arity) << n.name;
      }
      used.insert(n.exec->op);
    }
  }
  // Every kernel of the catalogue is used by some generator ("max" aggregates partial maxima,
  // which only a softmax over a cut axis has: see test_blocked_program.cpp), except those that
  // serve imported models (tests/workloads/test_import_kernels.cpp and, for the convolutional
  // ones, tests/engine/test_window_kernels.cpp, test_resize_kernel.cpp and
  // tests/onnx/test_import_conv.cpp).
  const std::set<std::string> imported = {
      "load",          "reshape",     "transpose",   "sqrt",       "sigmoid",
      "tanh",          "erf",         "gelu",        "neg",        "pow",
      "identity",      "clip",        "hardsigmoid", "hardswish",  "conv2d",
      "maxpool2d",     "avgpool2d",   "gather",      "leaky_relu", "elu",
      "softplus",      "abs",         "log",         "resize2d",   "conv_transpose2d",
      "not",           "less",        "greater",     "equal",      "less_equal",
      "greater_equal", "and",         "or",          "xor",        "where",
      "cumsum",        "expand",      "stride",      "topk",       "reduce_argmax",
      "lstm_cell",     "lstm_hidden", "gru_cell",    "reciprocal", "floor",
      "ceil",          "round",       "sign",        "sin",        "cos",
      "maximum",       "minimum",     "power",       "prelu",      "tan",
      "asin",          "acos",        "atan",        "sinh",       "cosh",
      "selu",          "celu",        "isnan",       "isinf",      "mod",
      "fmod",          "gather_along"};
  for (const auto& k : workloads::kernels())
    if (k.name != "max" && !imported.count(std::string(k.name))) {
      EXPECT_TRUE(used.count(std::string(k.name))) << k.name;
    }
}

}  // namespace
}  // namespace doppler
