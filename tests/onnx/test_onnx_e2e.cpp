// End to end: ONNX models exported by PyTorch (tests/onnx/models.py: an MLP, a
// TransformerEncoderLayer, a GPT block, a whole small language model from token ids, a masked
// attention, a speech encoder, an LSTM language model and a bidirectional GRU, each at two sizes)
// are imported by `doppler import` for 1, 2 and 4 devices; the FLOPs it reports must equal the
// independent counts of models.py (onnx-flops: onnx's shape inference and the conventions of its
// docstring; einsum FLOPs from the module's sizes) and, for the small sizes, the model output
// computed by the engine after a HEFT placement must equal PyTorch's, and every block must give the
// same output through the GPU backend's steps run on the host (tests/engine/device_ops_check.hpp).
// Skipped when /usr/bin/python3 cannot import torch and onnx.
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "device_ops_check.hpp"
#include "support/support.hpp"

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/npy.hpp"

namespace doppler {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

std::string q(const std::filesystem::path& p) {
  return "'" + p.string() + "'";
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command in the source directory; exit code, stdout and stderr.
test::CliResult run_shell(const std::string& command) {
  test::TempDir dir;
  const std::string cmd = "cd '" + test::source_dir().string() + "' && " + command + " >'" +
                          (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int status = std::system(cmd.c_str());
  test::CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

// models.py with arguments.
test::CliResult models_py(const std::string& args) {
  return run_shell(std::string(kPython) + " tests/onnx/models.py " + args);
}

// Why the Python side cannot run ("" when it can), checked once.
const std::string& python_missing() {
  static const std::string why = [] {
    const auto r = run_shell(std::string(kPython) + " -c 'import numpy, onnx, torch'");
    if (r.exit_code == 0) return std::string();
    return std::string(kPython) + " cannot import numpy, onnx and torch (Debian packages " +
           "python3-numpy, python3-onnx, python3-torch): " + r.err.substr(0, 200);
  }();
  return why;
}

// A number printed alone on stdout.
double number_of(const std::string& out) {
  std::size_t used = 0;
  const double x = std::stod(out, &used);
  EXPECT_TRUE(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(used), out.end(), [](char c) {
    return std::isspace(static_cast<unsigned char>(c));
  })) << out;
  return x;
}

class OnnxEndToEnd : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(OnnxEndToEnd, ImportFlopsAndOutputMatchPyTorch) {
  if (!python_missing().empty()) GTEST_SKIP() << python_missing();
  const auto& [model, size] = GetParam();
  test::TempDir dir;
  const std::filesystem::path m = dir / "model";
  auto r = models_py("export " + model + " " + size + " " + q(m));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto expected = nlohmann::json::parse(slurp(m / "flops.json"));
  const double einsum_flops = expected["einsum_flops"].get<double>();
  r = models_py("onnx-flops " + q(m / "model.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double total_flops = number_of(r.out);
  EXPECT_GT(total_flops, einsum_flops);
  r = models_py("op-types " + q(m / "model.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int onnx_nodes = 0;
  {
    std::istringstream lines(r.out);
    std::string op;
    int count = 0;
    while (lines >> op >> count) onnx_nodes += count;
  }
  ASSERT_GT(onnx_nodes, 0) << r.out;
  const NpyArray want = read_npy((m / "y.npy").string());
  double scale = 1;
  for (const float y : want.values) scale = std::max(scale, std::abs(static_cast<double>(y)));

  for (const int devices : {1, 2, 4}) {
    SCOPED_TRACE(model + " " + size + " on " + std::to_string(devices) + " devices");
    const std::string p = std::to_string(devices);
    const auto graph = dir / ("g" + p + ".json");
    r = test::run_cli("import " + q(m / "model.onnx") + " --devices " + p +
                      " --inputs x=" + q(m / "x.npy") + " -o " + q(graph) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["total_flops"].get<double>(), total_flops);
    EXPECT_EQ(j["einsum_flops"].get<double>(), einsum_flops);
    EXPECT_EQ(j["ops_before"].get<int>(), onnx_nodes);
    EXPECT_GE(j["blocks"].get<int>(), 1);
    if (size != "small") continue;  // the large sizes: import and FLOPs only
    // The GPU backend's steps for every block, run on the host (device_ops_check.hpp).
    test::expect_device_path_agrees(load_graph(graph), KernelMode::real, model + " " + p);

    const auto assignment = dir / ("a" + p + ".json");
    r = test::run_cli("place " + q(graph) + " --devices " + p +
                      " --hardware cpu --method heft -o " + q(assignment));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto got_file = dir / ("got" + p + ".npy");
    r = test::run_cli("execute " + q(graph) + " --assignment " + q(assignment) +
                      " --repeat 1 --warmup 0 --save y=" + q(got_file));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const NpyArray got = read_npy(got_file.string());
    ASSERT_EQ(got.shape, want.shape);
    ASSERT_EQ(got.values.size(), want.values.size());
    double err = 0;
    std::size_t worst = 0;
    for (std::size_t i = 0; i < want.values.size(); ++i) {
      const double e =
          std::abs(static_cast<double>(got.values[i]) - static_cast<double>(want.values[i]));
      if (!(e <= err)) {  // NaN counts as the worst
        err = std::isnan(e) ? INFINITY : e;
        worst = i;
      }
    }
    EXPECT_LE(err, 1e-4 * scale) << "element " << worst << ": got " << got.values[worst]
                                 << ", PyTorch " << want.values[worst];
  }
}

INSTANTIATE_TEST_SUITE_P(Models, OnnxEndToEnd,
                         ::testing::Combine(::testing::Values("mlp", "encoder", "gpt", "lm",
                                                              "masked", "speech", "lstm", "gru",
                                                              "detect"),
                                            ::testing::Values("small", "large")),
                         [](const ::testing::TestParamInfo<OnnxEndToEnd::ParamType>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

// Largest absolute difference between two arrays of the same shape (NaN counts as infinite).
double max_abs_error(const NpyArray& got, const NpyArray& want, std::size_t& worst) {
  double err = 0;
  worst = 0;
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    const double e =
        std::abs(static_cast<double>(got.values[i]) - static_cast<double>(want.values[i]));
    if (!(e <= err)) {
      err = std::isnan(e) ? INFINITY : e;
      worst = i;
    }
  }
  return err;
}

// The imported `graph` (4 devices) of the model exported to `m`: placed by HEFT on the cpu
// profile for 2 devices (here rather than by `doppler place`, checked elsewhere, whose load of
// the graph took 9 s of ViT-B/16's check) and executed with --verify (every block against a
// single-device run); its output must equal PyTorch's within 1e-4 of the output's scale.
void expect_engine_output_matches_pytorch(const Graph& g, const std::filesystem::path& m,
                                          const std::filesystem::path& graph,
                                          const test::TempDir& dir) {
  const auto assignment = dir / "a.json";
  const Problem problem(g, Platform::hardware(load_hardware_profile("cpu"), 2));
  write_file_atomic(assignment,
                    format_assignment_json(make_placer("heft")->place(problem, {}).assignment));
  const auto got_file = dir / "got.npy";
  const auto r = test::run_cli("execute " + q(graph) + " --assignment " + q(assignment) +
                               " --repeat 1 --warmup 0 --verify --save y=" + q(got_file));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const NpyArray want = read_npy((m / "y.npy").string()), got = read_npy(got_file.string());
  ASSERT_EQ(got.shape, want.shape);
  double scale = 1;
  for (const float y : want.values) scale = std::max(scale, std::abs(static_cast<double>(y)));
  std::size_t worst = 0;
  EXPECT_LE(max_abs_error(got, want, worst), 1e-4 * scale)
      << "element " << worst << ": got " << got.values[worst] << ", PyTorch " << want.values[worst];
}

// torchvision models (seeded random weights; classifiers and segmentation models, whose decoders
// Resize), a U-Net (ConvTranspose, Resize), a 3-D CNN on video clips and a 3-D U-Net
// (ConvTranspose3d) at a small input size: the import's FLOPs equal the independent count of the
// ONNX file (total and Conv), the Conv FLOPs are the module's 2 x multiply-adds plus at most one
// bias addition per output element, and on 2 devices (HEFT on the cpu profile) the engine's output
// equals PyTorch's, every block verified against a single-device run.
class OnnxVision : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxVision, ImportFlopsAndOutputMatchPyTorch) {
  if (!python_missing().empty()) GTEST_SKIP() << python_missing();
  const std::string model = GetParam();
  if (run_shell(std::string(kPython) + " -c 'import torchvision'").exit_code != 0)
    GTEST_SKIP() << kPython << " cannot import torchvision (Debian python3-torchvision)";
  test::TempDir dir;
  const std::filesystem::path m = dir / "model";
  auto r = models_py("export " + model + " small " + q(m));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto expected = nlohmann::json::parse(slurp(m / "flops.json"));
  r = models_py("onnx-flops " + q(m / "model.onnx") + " all Conv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double total_flops = 0, conv_flops = 0;
  std::istringstream lines(r.out);
  ASSERT_TRUE(lines >> total_flops >> conv_flops) << r.out;
  ASSERT_TRUE((lines >> std::ws).eof()) << r.out;  // two numbers and nothing else
  ASSERT_GT(conv_flops, 0) << r.out;
  const double module_conv = expected["conv_flops"].get<double>();
  const auto graph = dir / "g.json";
  // The FLOPs are the same whatever the device count: checked on the two small models (the
  // large ones' imports take 4-12 s each here, most of it their weights' text), the rest at 4.
  const bool small =
      model == "resnet18" || model == "mobilenet_v3_small" || model == "unet" || model == "video";
  for (const int devices : small ? std::vector<int>{1, 2, 4} : std::vector<int>{4}) {
    r = test::run_cli("import " + q(m / "model.onnx") + " --devices " + std::to_string(devices) +
                      " --inputs x=" + q(m / "x.npy") + " -o " + q(graph) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["total_flops"].get<double>(), total_flops) << devices;
    EXPECT_EQ(j["conv_flops"].get<double>(), conv_flops) << devices;
  }
  const Graph g = load_graph(graph);
  test::expect_device_path_agrees(g, KernelMode::real, model);  // 4 devices
  // and with bf16 tensors on two models: depthwise (direct) convolutions, hardswish, pools;
  // transposed convolutions and resizes
  if (model == "mobilenet_v3_small" || model == "unet")
    test::expect_bf16_device_path_agrees(g, KernelMode::real, model + " bf16");
  EXPECT_GE(conv_flops, module_conv);
  EXPECT_LE(conv_flops, module_conv * 1.06);  // a bias adds 1 per output, >= 18 per MAC term
  expect_engine_output_matches_pytorch(g, m, graph, dir);
}

INSTANTIATE_TEST_SUITE_P(Models, OnnxVision,
                         ::testing::Values("resnet18", "mobilenet_v3_small", "inception_v3",
                                           "vit_b_16", "resnet50", "lraspp_mobilenet_v3_large",
                                           "unet", "focus", "video", "unet3d"));

// torchvision's Swin-T (shifted windows: its attention masks are built by slice assignment,
// ScatterND of constants, folded at import), whose reshapes ONNX's shape inference cannot follow,
// so the independent counter cannot count it: its einsum FLOPs equal PyTorch's profiler's count
// of the forward pass's matrix products, its Conv FLOPs the patch embedding's (hooks); the
// engine's output equals PyTorch's.
TEST(OnnxVisionSwin, ImportAndOutputMatchPyTorch) {
  if (!python_missing().empty()) GTEST_SKIP() << python_missing();
  if (run_shell(std::string(kPython) + " -c 'import torchvision'").exit_code != 0)
    GTEST_SKIP() << kPython << " cannot import torchvision (Debian python3-torchvision)";
  test::TempDir dir;
  const std::filesystem::path m = dir / "model";
  auto r = models_py("export swin_t small " + q(m));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto expected = nlohmann::json::parse(slurp(m / "flops.json"));
  const double matmuls = expected["einsum_flops"].get<double>();
  const double module_conv = expected["conv_flops"].get<double>();
  const auto graph = dir / "g.json";
  r = test::run_cli("import " + q(m / "model.onnx") + " --devices 4 --inputs x=" + q(m / "x.npy") +
                    " -o " + q(graph) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["einsum_flops"].get<double>(), matmuls);
  EXPECT_GE(j["conv_flops"].get<double>(), module_conv);
  EXPECT_LE(j["conv_flops"].get<double>(), module_conv * 1.06);
  expect_engine_output_matches_pytorch(load_graph(graph), m, graph, dir);
}

// The independent counter on a hand-checkable model: the small MLP's FLOPs are its three
// matmuls, bias additions and ReLUs, 64 x (128 -> 256 -> 256 -> 64).
TEST(OnnxModels, FlopCounterAgreesWithAHandCount) {
  if (!python_missing().empty()) GTEST_SKIP() << python_missing();
  test::TempDir dir;
  auto r = models_py("export mlp small " + q(dir / "m"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double matmuls = 2.0 * 64 * (128 * 256 + 256 * 256 + 256 * 64);
  const double biases = 64.0 * (256 + 256 + 64), relus = 64.0 * (256 + 256);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "m" / "flops.json"))["einsum_flops"], matmuls);
  r = models_py("onnx-flops " + q(dir / "m" / "model.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number_of(r.out), matmuls + biases + relus);
  const NpyArray x = read_npy((dir / "m" / "x.npy").string());
  const NpyArray y = read_npy((dir / "m" / "y.npy").string());
  EXPECT_EQ(x.shape, (std::vector<std::int64_t>{64, 128}));
  EXPECT_EQ(y.shape, (std::vector<std::int64_t>{64, 64}));
}

}  // namespace
}  // namespace doppler
