// `doppler execute`, `doppler calibrate`, `doppler validate-sim`: outputs, files, bad input.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/validate/calibrate.hpp"

namespace doppler {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::string q(const std::filesystem::path& p) {
  return "'" + p.string() + "'";
}

// A small llama layer (f32) and a critical-path assignment for 4 devices in `dir`.
void small_layer(const test::TempDir& dir, const std::string& dtype = "f32") {
  auto r = test::run_cli(
      "generate llama-layer -p dim=64 -p heads=4 -p seq=32 -p ffn=96 -p vocab=100 --dtype " +
      dtype + " --devices 4 -o " + q(dir / "g.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli("place " + q(dir / "g.json") +
                    " --devices 4 --hardware cpu -m critical-path -o " + q(dir / "a.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliExecute, JsonReportTraceAndVerification) {
  test::TempDir dir;
  small_layer(dir);
  const auto r = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                               " --repeat 3 --verify --json --trace " + q(dir / "t.json") +
                               " --gantt " + q(dir / "g.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"], 4);
  EXPECT_EQ(j["kernels"], "real");
  EXPECT_EQ(j["link_emulation"], "off");
  ASSERT_EQ(j["makespans"].size(), 3u);
  EXPECT_GT(j["makespan_median"].get<double>(), 0);
  EXPECT_LE(j["makespan_min"].get<double>(), j["makespan_median"].get<double>());
  EXPECT_LE(j["makespan_median"].get<double>(), j["makespan_max"].get<double>());
  // Three runs cannot give a 95% interval: it is the whole range, covering 1 - 2 / 2^3 = 75%.
  EXPECT_EQ(j["makespan_median_interval"]["low"], j["makespan_min"]);
  EXPECT_EQ(j["makespan_median_interval"]["high"], j["makespan_max"]);
  EXPECT_DOUBLE_EQ(j["makespan_median_interval"]["coverage"].get<double>(), 0.75);
  EXPECT_EQ(j["verify"]["identical"], j["ops"]);
  int ops = 0;
  for (const auto& d : j["per_device"]) {
    ops += d["ops"].get<int>();
    EXPECT_GE(d["utilization"].get<double>(), 0);
    EXPECT_LE(d["utilization"].get<double>(), 1);
  }
  EXPECT_EQ(ops, j["ops"]);
  const auto t = nlohmann::json::parse(slurp(dir / "t.json"));
  int events = 0;
  for (const auto& e : t["traceEvents"]) events += e["ph"] == "X" && e["pid"] == 0;
  EXPECT_EQ(events, j["ops"]);
  EXPECT_EQ(t["otherData"]["unit"], "seconds (trace in us)");
  EXPECT_NE(slurp(dir / "g.svg").find("<svg"), std::string::npos);
}

TEST(CliExecute, TextReportAndLinkEmulation) {
  test::TempDir dir;
  small_layer(dir);
  auto r = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                         " --repeat 2 --order priority --link-bandwidth 1e9 --link-latency 1e-5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"makespan", "median", "busy %", "copies", "link emulation 1e-05 s"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  r = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                    " --repeat 1 --link-profile p100 --kernels empty --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernels"], "empty");
  EXPECT_NE(j["link_emulation"].get<std::string>().find("4xP100-PCIe"), std::string::npos);
}

TEST(CliExecute, ReferenceGraphRunsSyntheticKernels) {
  DOPPLER_REQUIRE_REFERENCE_GRAPHS(refs);
  test::TempDir dir;
  const std::string g = q(refs / "gdp_chain_mm_112nodes.txt");
  auto r = test::run_cli("place " + g + " --devices 4 -o " + q(dir / "a.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli("execute " + g + " -a " + q(dir / "a.json") +
                    " --repeat 2 --scale 1e-6 --verify --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernels"], "synthetic");
  EXPECT_EQ(j["verify"]["identical"], 76);
  EXPECT_GT(j["total_flops"].get<double>(), 0);
  EXPECT_GT(j["bytes_copied"].get<double>(), 0);
  r = test::run_cli("execute " + g + " -a " + q(dir / "a.json") + " --kernels real");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no exec description"), std::string::npos) << r.err;
}

TEST(CliExecute, BadInputExitsWithCode2) {
  test::TempDir dir;
  small_layer(dir);
  const std::string base = "execute " + q(dir / "g.json") + " ";
  std::string bare = "[0";
  for (int i = 1; i < 267; ++i) bare += ",1";
  write(dir / "bare.json", bare + "]");
  for (const std::string& args :
       {base + "-a " + q(dir / "missing.json"), base + "-a " + q(dir / "a.json") + " --devices 3",
        base + "-a " + q(dir / "bare.json") + " --order priority",
        base + "-a " + q(dir / "a.json") + " --link-profile nowhere",
        base + "-a " + q(dir / "a.json") + " --inject-fault fail:99999",
        base + "-a " + q(dir / "a.json") + " --repeat 0"}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty());
  }
}

TEST(CliExecute, FailingKernelIsAnInternalError) {
  test::TempDir dir;
  small_layer(dir);
  for (const char* kind : {"fail", "trap"}) {  // trap: a faulting device kernel, a throw here
    const auto r = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                                 " --inject-fault " + kind + ":100 --trace " + q(dir / "t.json"));
    EXPECT_EQ(r.exit_code, 1) << kind;
    EXPECT_NE(r.err.find(std::string(kind) == "fail" ? "injected fault" : "injected device fault"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("kernel of op 100"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "t.json")) << "no output file after a failure";
  }
}

TEST(CliCalibrate, WritesAProfileTheSimulatorAcceptsAndValidateSimUsesIt) {
  test::TempDir dir;
  small_layer(dir);
  auto r = test::run_cli("calibrate --devices 4 --repeat 1 -o " + q(dir / "hw.json") +
                         " --json --kernels-of " + q(dir / "g.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto c = nlohmann::json::parse(r.out);
  EXPECT_GT(c["peak_flops"].get<double>(), 0);
  EXPECT_GT(c["bandwidth"].get<double>(), 0);
  EXPECT_GE(c["launch_overhead"].get<double>(), 0);
  EXPECT_FALSE(c["kernels"].empty());
  // Three device-speed rounds of 4 devices; a device slower than 1 + kDeviceSlowdownNoise in
  // every round is written at its middle reading, any other at 1.
  ASSERT_EQ(c["device_slowdown_rounds"].size(), 3u);
  for (std::size_t d = 0; d < 4; ++d) {
    std::vector<double> r;
    for (const auto& round : c["device_slowdown_rounds"]) {
      ASSERT_EQ(round.size(), 4u);
      EXPECT_GE(round[d].get<double>(), 1.0);
      r.push_back(round[d].get<double>());
    }
    std::sort(r.begin(), r.end());
    EXPECT_EQ(c["device_slowdown"][d].get<double>(), r[0] > 1 + kDeviceSlowdownNoise ? r[1] : 1.0)
        << "device " << d;
  }
  const auto profile = nlohmann::json::parse(slurp(dir / "hw.json"));
  EXPECT_EQ(profile["format"], "doppler-hardware");
  // 4 devices on this machine's cores: identical devices, or per-device speeds when the cores
  // are shared unevenly (docs/engine.md, calibration step 3).
  EXPECT_EQ(
      profile.contains("count") ? profile["count"].get<std::size_t>() : profile["devices"].size(),
      4u);
  // --kernels-of: the layer's kernels have a measured cost (the GEMMs' einsum among them), and
  // no other kernel (every kernel's benchmark: CalibrateFakeEngine.EveryKernelTheGeneratorsEmit..).
  std::set<std::string> layer, priced, benchmarked;
  const Graph g = load_graph((dir / "g.json").string());
  for (const Node& n : g.nodes())
    if (n.exec) layer.insert(n.exec->op);
  layer.insert("einsum");
  for (const auto& [name, cost] : profile["kernels"].items()) priced.insert(name);
  for (const auto& k : profile["calibration_source"]["benchmarked_kernels"])
    benchmarked.insert(k.get<std::string>());
  EXPECT_EQ(priced, layer);
  EXPECT_EQ(benchmarked, layer);
  EXPECT_EQ(c["benchmarked_kernels"].size(), layer.size());
  r = test::run_cli("simulate " + q(dir / "g.json") + " -a " + q(dir / "a.json") + " --hardware " +
                    q(dir / "hw.json") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["makespan"].get<double>(), 0);
  EXPECT_EQ(r.err.find("calibrated without"), std::string::npos) << r.err;
  // Another graph's kernels the profile left out (ffnn's relu and softmax pieces) are named.
  r = test::run_cli("generate ffnn -p batch=64 -p hidden=64 -p dim=8 --devices 4 -o " +
                    q(dir / "ffnn.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli("place " + q(dir / "ffnn.json") + " --devices 4 --hardware " +
                    q(dir / "hw.json") + " -m critical-path -o " + q(dir / "fa.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("was calibrated without kernels of graph"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("relu ("), std::string::npos) << r.err;
  r = test::run_cli(
      "validate-sim " + q(dir / "g.json") + " --hardware " + q(dir / "hw.json") +
      " --assignments 10 --repeat 1 --warmup 0 --budget 50 --json --save-assignments " +
      q(dir / "as.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = nlohmann::json::parse(r.out);
  ASSERT_EQ(v["cases"].size(), 10u);
  for (const auto& k : v["cases"]) {
    EXPECT_GT(k["simulated"].get<double>(), 0);
    EXPECT_GT(k["measured"].get<double>(), 0);
  }
  // The saved assignments, re-simulated by `simulate --assignments` with the same profile, give
  // the table's simulated makespans in its order, and name their methods.
  r = test::run_cli("simulate " + q(dir / "g.json") + " --assignments " + q(dir / "as.jsonl") +
                    " --hardware " + q(dir / "hw.json") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out), saved(slurp(dir / "as.jsonl"));
  std::string line, doc;
  for (const auto& k : v["cases"]) {
    ASSERT_TRUE(std::getline(lines, line));
    ASSERT_TRUE(std::getline(saved, doc));
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(line)["makespan"].get<double>(),
                     k["simulated"].get<double>());
    EXPECT_EQ(nlohmann::json::parse(doc)["method"], k["method"]);
  }
  EXPECT_FALSE(std::getline(lines, line));
  EXPECT_GE(v["mape"].get<double>(), 0);
  if (v["spearman"].is_number()) {
    EXPECT_GE(v["spearman"].get<double>(), -1);
    EXPECT_LE(v["spearman"].get<double>(), 1);
  }
  r = test::run_cli("validate-sim " + q(dir / "g.json") + " --hardware " + q(dir / "hw.json") +
                    " --assignments 9 --repeat 1 --budget 50 --csv " + q(dir / "v.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("spearman"), std::string::npos);
  EXPECT_NE(slurp(dir / "v.csv").find("assignment,simulated,measured"), std::string::npos);
}

// A graph whose element size differs from what the engine stores (the CPU engine: f32) is
// simulated with bytes the engine does not move: validate-sim says so, naming both and the fix.
TEST(CliValidateSim, WarnsWhenTheGraphsElementSizeIsNotTheEngines) {
  test::TempDir dir;
  const std::string validate = "validate-sim " + q(dir / "g.json") +
                               " --hardware cpu --assignments 9 --repeat 1 --warmup 0 --budget 20";
  small_layer(dir, "bf16");
  auto r = test::run_cli(validate);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("graph dtype is bf16: the simulator charges 2 bytes per element, the "
                       "engine stores f32 (4 bytes; generate with --dtype f32"),
            std::string::npos)
      << r.err;
  small_layer(dir);  // f32: no warning
  r = test::run_cli(validate);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("graph dtype"), std::string::npos) << r.err;
}

TEST(CliCalibrate, BadInput) {
  test::TempDir dir;
  EXPECT_EQ(test::run_cli("calibrate --devices 2").exit_code, 2);  // no -o
  EXPECT_EQ(test::run_cli("calibrate -o " + q(dir / "x.json") + " --topology ring").exit_code, 2);
  EXPECT_EQ(
      test::run_cli("calibrate -o " + q(dir / "no/such/dir/x.json") + " --repeat 1").exit_code, 2);
  small_layer(dir);
  EXPECT_EQ(test::run_cli("validate-sim " + q(dir / "g.json")).exit_code, 2);  // no --hardware
  EXPECT_EQ(test::run_cli("validate-sim " + q(dir / "g.json") + " --hardware nowhere").exit_code,
            2);
}

}  // namespace
}  // namespace doppler
