// doppler pretrain on the command line: data-parallel over two MPI ranks (the replicas' weights
// are checked to agree at every checkpoint, and rank 1's gradients change the result), bad specs
// are one-line errors naming file and line with exit 2, the pretrained run directory places
// zero-shot on a graph and device count it never saw, and `train --init` fine-tunes it.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"

namespace doppler {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int line_count_of(const fs::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

void write_spec(const fs::path& path) {
  std::ofstream(path) << R"({"pool": 6, "seed": 2, "families": [{"workload": "random-dag",
      "params": {"ops": {"min": 12, "max": 24, "int": true}, "width": [3, 5],
                 "seed": {"min": 0, "max": 999, "int": true}}, "devices": [2, 3]}]})";
}

std::string small_run(const fs::path& spec) {
  return "pretrain --spec '" + spec.string() +
         "' --il-updates 4 --updates 8 --batch 2 --rollouts 3 --hidden 8 --edge-hidden 4 "
         "--mp-steps 1 --checkpoint-every 2 --seed 5";
}

TEST(CliPretrain, TwoMpiRanksTrainDataParallel) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  DOPPLER_REQUIRE_CLI_COMPONENT(mpi);
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  test::TempDir dir;
  write_spec(dir / "spec.json");
  const std::string mpi =
      "cd '" + dir.path().string() + "' && mpirun --allow-run-as-root --oversubscribe -np 2 '" +
      test::cli_path() + "' " + small_run(dir / "spec.json") + " -o two > two.out 2>&1";
  ASSERT_EQ(std::system(mpi.c_str()), 0) << slurp(dir / "two.out");
  const auto one =
      test::run_cli(small_run(dir / "spec.json") + " -o '" + (dir / "one").string() + "'");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  std::ifstream log(dir / "two" / "log.jsonl");
  int lines = 0;
  for (std::string line; std::getline(log, line); ++lines)
    EXPECT_EQ(nlohmann::json::parse(line).value("ranks", 1), 2) << line;
  EXPECT_EQ(lines, 12);
  // Rank 0 drew the same problems as the single process (the draws depend on the rank only), so
  // different weights can only come from rank 1's averaged gradients.
  std::ifstream a(dir / "one" / "log.jsonl"), b(dir / "two" / "log.jsonl");
  std::string la, lb;
  std::getline(a, la);
  std::getline(b, lb);
  EXPECT_EQ(nlohmann::json::parse(la)["problems"], nlohmann::json::parse(lb)["problems"]);
  EXPECT_NE(slurp(dir / "one" / "ckpt.pt"), slurp(dir / "two" / "ckpt.pt"));
}

// Distillation over two ranks: every rank searches its share of the pool's labels and the shares
// are exchanged, so the labels of round 0 (local-search, seeded per problem) are those of a
// single process, and both ranks train on them (the checkpoints' weight check passes).
TEST(CliPretrain, TwoMpiRanksSearchTheLabelsOfASingleProcess) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  DOPPLER_REQUIRE_CLI_COMPONENT(mpi);
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  test::TempDir dir;
  write_spec(dir / "spec.json");
  const std::string run = "pretrain --spec '" + (dir / "spec.json").string() +
                          "' --il-updates 2 --distill doppler-search --rounds 2 --round-updates 2 "
                          "--label-budget 300 --batch 2 --rollouts 2 --hidden 8 --edge-hidden 4 "
                          "--mp-steps 1 --eval-pool 2 --eval-samples 2 --seed 5";
  const std::string mpi = "cd '" + dir.path().string() +
                          "' && mpirun --allow-run-as-root --oversubscribe -np 2 '" +
                          test::cli_path() + "' " + run + " -o two > two.out 2>&1";
  ASSERT_EQ(std::system(mpi.c_str()), 0) << slurp(dir / "two.out");
  const auto one = test::run_cli(run + " -o '" + (dir / "one").string() + "'");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto round0 = [](const fs::path& p) {
    std::vector<nlohmann::json> out;
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);)
      if (auto j = nlohmann::json::parse(line); j["round"] == 0) out.push_back(j);
    return out;
  };
  const auto a = round0(dir / "one" / "labels.jsonl"), b = round0(dir / "two" / "labels.jsonl");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i], a[i]) << "problem " << i;
  EXPECT_EQ(line_count_of(dir / "two" / "labels.jsonl"), 12);
}

TEST(CliPretrain, BadSpecsAreOneLineErrorsNamingFileAndLine) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  std::ofstream(dir / "bad.json") << "{\n  \"pool\": 4,\n  \"families\": [{\"workload\": "
                                     "\"random-dag\", \"devices\": [0]}]\n}\n";
  const auto r = test::run_cli("pretrain --spec '" + (dir / "bad.json").string() + "' -o '" +
                               (dir / "run").string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.json:3"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(dir / "run" / "ckpt.pt"));
  const auto both = test::run_cli("pretrain -o a --resume b");
  EXPECT_EQ(both.exit_code, 2) << both.err;
}

TEST(CliPretrain, ARunDirectoryPlacesAnUnseenGraphZeroShot) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  write_spec(dir / "spec.json");
  const auto r = test::run_cli(small_run(dir / "spec.json") + " -o '" + (dir / "run").string() +
                               "' --export '" + (dir / "policy.pt").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::mt19937_64 rng(3);
  save_graph(dir / "g.txt", test::random_dag(rng, {40, 0.2, 9, 9, true}),
             GraphFormat::reference_text);
  for (const std::string& policy : {(dir / "run").string(), (dir / "policy.pt").string()}) {
    const fs::path out = dir / "a.json";
    const auto p = test::run_cli("place '" + (dir / "g.txt").string() +
                                 "' --devices 5 --method 'doppler:policy=" + policy +
                                 ",samples=4' -o '" + out.string() + "'");
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const auto j = nlohmann::json::parse(slurp(out));
    EXPECT_EQ(j["devices"], 5);
    ASSERT_EQ(j["device_of"].size(), 40u);
    for (const auto& d : j["device_of"]) EXPECT_TRUE(d.get<int>() >= 0 && d.get<int>() < 5);
  }
}

TEST(CliPretrain, TrainInitFineTunesWithThePretrainedArchitectureAndFeatures) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  write_spec(dir / "spec.json");
  ASSERT_EQ(test::run_cli(small_run(dir / "spec.json") + " -o '" + (dir / "run").string() + "'")
                .exit_code,
            0);
  std::mt19937_64 rng(4);
  save_graph(dir / "g.txt", test::random_dag(rng, {30, 0.2, 9, 9, true}),
             GraphFormat::reference_text);
  const auto r =
      test::run_cli("train '" + (dir / "g.txt").string() +
                    "' --devices 4 --stage sim --episodes 16 --rollouts 8 --init '" +
                    (dir / "run").string() + "' -o '" + (dir / "ft").string() + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto config = nlohmann::json::parse(slurp(dir / "ft" / "config.json"));
  EXPECT_EQ(config["policy"]["features"], "scaled");
  EXPECT_EQ(config["policy"]["hidden"], 8);  // the checkpoint's, not train's default 128
  EXPECT_EQ(nlohmann::json::parse(r.out)["episodes"], 16);
}

TEST(CliPretrain, TheShippedModelIsTheDefaultPolicyOfDoppler) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  const fs::path model = test::source_dir() / "models" / "doppler-pretrained.pt";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is absent";
  test::TempDir dir;
  std::mt19937_64 rng(6);
  save_graph(dir / "g.txt", test::random_dag(rng, {25, 0.2, 9, 9, true}),
             GraphFormat::reference_text);
  const auto r = test::run_cli("place '" + (dir / "g.txt").string() +
                               "' --devices 3 --method doppler:samples=1 -o '" +
                               (dir / "a.json").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(dir / "a.json"));
  EXPECT_EQ(j["method"], "doppler:samples=1");
  EXPECT_EQ(j["device_of"].size(), 25u);
}

}  // namespace
}  // namespace doppler
