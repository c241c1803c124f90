// Optional components (DOPPLER_WITH_TORCH, _ONNX, _MPI, _GRAPHVIZ, _CUDA): `--version` lists them,
// and in a build without one, every command or option that needs it fails with exit 2 and one
// line naming the library and the CMake option. The expected lines are written out here.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/support.hpp"

namespace doppler {
namespace {

std::string q(const std::filesystem::path& p) {
  return "'" + p.string() + "'";
}

// "doppler: error: WHAT needs LIBRARY, which this build of doppler does not include (configure
// with -DDOPPLER_WITH_NAME=on)\n": the whole of stderr.
std::string absent_line(const std::string& what, const std::string& library,
                        const std::string& option) {
  return "doppler: error: " + what + " needs " + library +
         ", which this build of doppler does not include (configure with -DDOPPLER_WITH_" + option +
         "=on)\n";
}

TEST(CliComponents, VersionListsEveryComponentOnce) {
  const auto r = test::run_cli("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out.rfind("doppler 0.1.0\ncomponents: ", 0), 0u) << r.out;
  for (const std::string name : {"torch", "onnx", "mpi", "graphviz", "cuda"}) {
    const auto first = r.out.find(" " + name);
    ASSERT_NE(first, std::string::npos) << name << " missing from: " << r.out;
    EXPECT_EQ(r.out.find(" " + name + " ", first + 1), std::string::npos) << r.out;
  }
}

struct AbsentCommand {
  std::string command;
  Component component;
  std::string library, option;
};

TEST(CliComponents, CommandsOfAbsentComponentsSaySoInOneLine) {
  const std::vector<AbsentCommand> commands = {
      {"train", Component::torch, "libtorch", "TORCH"},
      {"pretrain", Component::torch, "libtorch", "TORCH"},
      {"demo", Component::torch, "libtorch", "TORCH"},
      {"import", Component::onnx, "libonnx", "ONNX"},
      {"gpus", Component::cuda, "CUDA", "CUDA"},
  };
  int checked = 0;
  for (const AbsentCommand& c : commands) {
    if (test::cli_has(c.component)) continue;
    ++checked;
    // Whatever the arguments: the same line, exit 2, nothing on stdout.
    for (const std::string args : {"", " model.onnx --devices 4 -o out", " -x"}) {
      const auto r = test::run_cli(c.command + args);
      EXPECT_EQ(r.exit_code, 2) << c.command << args;
      EXPECT_EQ(r.err, absent_line("doppler " + c.command, c.library, c.option)) << c.command;
      EXPECT_EQ(r.out, "");
    }
    // Its help and the command list say so too.
    for (const std::string& help : {std::string("--help"), c.command + " --help"}) {
      const auto h = test::run_cli(help);
      EXPECT_EQ(h.exit_code, 0) << help;
      EXPECT_NE(h.out.find("[not in this build: needs " + c.library + "]"), std::string::npos)
          << help << ": " << h.out;
    }
  }
  if (checked == 0) GTEST_SKIP() << "every component is built: no absent command to check";
}

// A tiny JSON graph and an assignment for 2 devices in `dir`.
void tiny_graph(const test::TempDir& dir) {
  auto r = test::run_cli("generate chainmm -p n=64 --devices 2 -o " + q(dir / "g.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli("place " + q(dir / "g.json") + " --devices 2 --method critical-path -o " +
                    q(dir / "a.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliComponents, LearnedMethodsWithoutTorchSaySo) {
  if (test::cli_has(Component::torch)) GTEST_SKIP() << "built with torch";
  test::TempDir dir;
  tiny_graph(dir);
  for (const std::string method : {"doppler-sim", "doppler", "gdp", "placeto:calls=10"}) {
    const auto r = test::run_cli("place " + q(dir / "g.json") + " --devices 2 --method " + method);
    EXPECT_EQ(r.exit_code, 2) << method;
    const std::string name = method.substr(0, method.find(':'));
    EXPECT_EQ(r.err, absent_line("method '" + name + "'", "libtorch", "TORCH")) << method;
  }
  // The other methods are all there: `--methods all` runs without the learned ones.
  const auto all =
      test::run_cli("compare " + q(dir / "g.json") + " --devices 2 --methods all --json");
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out.find("doppler-sim"), std::string::npos);
}

TEST(CliComponents, MpiBackendWithoutMpiSaysSo) {
  if (test::cli_has(Component::mpi)) GTEST_SKIP() << "built with MPI";
  test::TempDir dir;
  tiny_graph(dir);
  const auto r =
      test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") + " --backend mpi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, absent_line("--backend mpi", "MPI", "MPI"));
}

// Without CUDA, --backend cuda is the absent component's line; with it but without a GPU (CI),
// the driver's one line and exit 1 (not the input's fault).
TEST(CliComponents, CudaBackendSaysWhatIsMissing) {
  test::TempDir dir;
  tiny_graph(dir);
  const auto r = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                               " --backend cuda --repeat 1");
  if (!test::cli_has(Component::cuda)) {
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, absent_line("--backend cuda", "CUDA", "CUDA"));
    return;
  }
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is present: the run succeeded";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("doppler: error: no CUDA driver or GPU: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_EQ(r.out, "");
  // Bad requests, GPU or not: `flags` on the tiny graph exit 2 with `line` alone.
  const auto bad_request = [&](const std::string& flags, const std::string& line) {
    const auto bad = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                                   " " + flags);
    EXPECT_EQ(bad.exit_code, 2) << flags;
    EXPECT_EQ(bad.err, "doppler: error: " + line + "\n") << flags;
    EXPECT_EQ(bad.out, "") << flags;
  };
  // The GPU flags without the CUDA backend.
  const std::string need =
      "--gpu-partitions, --gpus, --gpu-math, --gpu-dtype and --gpu-link need --backend cuda";
  bad_request("--gpu-partitions 2", need);
  bad_request("--gpu-dtype bf16", need);
  // bf16 tensors take bf16 GEMMs: tf32 math with them, before any GPU is asked.
  bad_request("--backend cuda --gpu-dtype bf16 --gpu-math tf32",
              "bf16 tensors (--gpu-dtype bf16) take bf16 GEMMs: tf32 math (--gpu-math tf32) does "
              "not apply");
  // --gpu-link nvlink|pcie paces the copies: it excludes the link flags.
  bad_request("--backend cuda --gpu-link pcie --link-bandwidth 1e9",
              "--gpu-link pcie paces the copies itself: leave out --link-bandwidth, "
              "--link-latency and --link-profile");
}

TEST(CliComponents, DotWithoutGraphvizNamesTheFile) {
  if (test::cli_has(Component::graphviz)) GTEST_SKIP() << "built with Graphviz";
  test::TempDir dir;
  std::ofstream(dir / "g.dot") << "digraph g { a [Weight=1]; b [Weight=2]; a -> b [Weight=1]; }\n";
  const auto r = test::run_cli("info " + q(dir / "g.dot"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "doppler: error: " + (dir / "g.dot").string() +
                       ": reading a DOT graph needs Graphviz's cgraph, which this build of "
                       "doppler does not include (configure with -DDOPPLER_WITH_GRAPHVIZ=on)\n");
}

}  // namespace
}  // namespace doppler
