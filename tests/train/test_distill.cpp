// Distillation from search (pretrain --distill): on a pool of small graphs whose optimum the
// exhaustive search finds (64 random DAGs of 8-10 ops, 2-3 devices), the labels are those
// optima, and imitating them on the policy's own rollouts gives a greedy policy within 5% of
// optimal on the pool on average that also beats a policy trained as long on the critical-path
// teacher, on the pool and on 12 unseen graphs of the same family.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/policy/doppler_policy.hpp"
#include "doppler/train/pretrain.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

namespace fs = std::filesystem;

const char* kSmallSpec = R"({
  "pool": 64, "seed": 5,
  "families": [{"workload": "random-dag",
                "params": {"ops": {"min": 8, "max": 10, "int": true},
                           "width": {"min": 2, "max": 4, "int": true},
                           "ccr": {"min": 0.5, "max": 2, "log": true},
                           "seed": {"min": 0, "max": 100000, "int": true}},
                "devices": [2, 3]}]
})";

PretrainConfig small_config() {
  PretrainConfig c;
  c.batch = 3;
  c.rollouts = 4;
  c.temperature = 1;
  c.lr = 2e-3;
  c.lr_end = 2e-4;
  c.eval_every = 0;
  c.checkpoint_every = 1000;
  c.policy.hidden = 32;
  c.policy.edge_hidden = 8;
  c.policy.steps = 2;
  c.policy.mlp_hidden = 16;
  c.seed = 2;
  return c;
}

double exhaustive_optimum(const Problem& p) {
  PlaceOptions o;
  return p.simulator().makespan(make_placer("exhaustive")->place(p, o).assignment.device_of);
}

// The final label makespan of every pool problem, from RUN/labels.jsonl.
std::map<int, double> final_labels(const fs::path& file) {
  std::map<int, double> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["improved"].get<bool>()) out[j["problem"].get<int>()] = j["makespan"].get<double>();
  }
  return out;
}

// Mean over `problems` of greedy makespan / reference.
double mean_ratio(DopplerPolicy& policy, const std::vector<const Problem*>& problems,
                  const std::vector<double>& reference) {
  double s = 0;
  for (std::size_t i = 0; i < problems.size(); ++i)
    s += problems[i]->simulator().makespan(policy.place(*problems[i]).device_of) / reference[i];
  return s / static_cast<double>(problems.size());
}

TEST(Distill, OptimalLabelsMakeAGreedyPolicyNearOptimalAndBetterThanTheTeachersImitation) {
  test::TempDir dir;
  const PretrainSpec spec = parse_pretrain_spec(kSmallSpec, "small", ".");
  PretrainConfig distilled = small_config();
  distilled.il_updates = 40;
  distilled.distill = "local-search";
  distilled.label_budget = 10000;
  distilled.rounds = 3;
  distilled.round_updates = 300;
  distilled.eval_pool = 0;
  Pretrainer a(spec, distilled);
  a.set_run_dir(dir / "distilled");
  a.run();
  a.export_policy(dir / "distilled.pt");
  PretrainConfig imitated = small_config();  // as many updates, all on the critical-path teacher
  imitated.il_updates = 940;
  imitated.updates = 0;
  Pretrainer b(spec, imitated);
  b.run();
  b.export_policy(dir / "imitated.pt");

  // The pool (drawn again: deterministic) and its optima; the labels are the optima.
  const auto pool = draw_pool(spec, {});
  const auto labels = final_labels(dir / "distilled" / "labels.jsonl");
  std::vector<const Problem*> problems;
  std::vector<double> optimum;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    problems.push_back(pool[i].problem.get());
    optimum.push_back(exhaustive_optimum(*pool[i].problem));
    ASSERT_TRUE(labels.count(static_cast<int>(i)));
    EXPECT_NEAR(labels.at(static_cast<int>(i)), optimum.back(), 1e-9 * optimum.back())
        << pool[i].name;
  }
  DopplerPolicy pa = DopplerPolicy::load(dir / "distilled.pt");
  DopplerPolicy pb = DopplerPolicy::load(dir / "imitated.pt");
  const double ra = mean_ratio(pa, problems, optimum), rb = mean_ratio(pb, problems, optimum);
  // Measured 1.029 (critical-path imitation 1.071): within 5% of the optima on average.
  EXPECT_LE(ra, 1.05) << "distilled greedy / optimum on the pool";
  EXPECT_LT(ra, rb) << "critical-path imitation: " << rb;

  // Unseen graphs of the same family.
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<std::unique_ptr<Problem>> unseen;
  std::vector<const Problem*> up;
  std::vector<double> uopt;
  for (int seed = 0; seed < 12; ++seed) {
    workloads::RandomDagParams rp;
    rp.ops = 9;
    rp.width = 3;
    rp.ccr = 1;
    rp.seed = static_cast<std::uint64_t>(200001 + seed);
    graphs.push_back(std::make_unique<Graph>(workloads::generate_random_dag(rp)));
    unseen.push_back(std::make_unique<Problem>(*graphs.back(), Platform::reference(2 + seed % 2)));
    up.push_back(unseen.back().get());
    uopt.push_back(exhaustive_optimum(*unseen.back()));
  }
  const double ua = mean_ratio(pa, up, uopt), ub = mean_ratio(pb, up, uopt);
  // Measured 1.086 against 1.095.
  EXPECT_LT(ua, ub) << "unseen: distilled " << ua << ", critical-path imitation " << ub;
  std::cerr << "[ pool: distilled " << ra << ", imitated " << rb << "; unseen: distilled " << ua
            << ", imitated " << ub << " (greedy / optimum)\n";
}

}  // namespace
}  // namespace doppler
