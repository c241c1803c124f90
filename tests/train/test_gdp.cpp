// GDP: probabilities over devices, the Transformer-XL segment recurrence (memory flows forward
// only, plain attention when the sequence fits one segment), PPO on batches finding the obviously
// best placement of a tiny graph and beating random placement with a modest budget, the
// simulator-call budget against the simulator's own counter, the leave-one-out baseline,
// checkpoints.
#include <fstream>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include "policy/nn/gdp_net.hpp"
#include "support/builders.hpp"
#include "support/support.hpp"
#include "train/baseline_checks.hpp"

#include "doppler/heuristics/search_placers.hpp"
#include "doppler/train/baselines.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

BaselineConfig tiny() {
  BaselineConfig c;
  c.hidden = 16;
  c.steps = 2;
  c.heads = 2;
  c.layers = 1;
  c.max_devices = 8;
  c.lr = 3e-3;
  return c;
}

TEST(Gdp, ProbabilitiesCoverTheDevicesOfEveryDecidedOp) {
  std::mt19937_64 rng(3);
  const Graph g = test::random_dag(rng, {20, 0.2, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  std::vector<NodeId> tokens(g.topo_order().begin(), g.topo_order().begin() + 15);
  const nn::GdpGraph gg = nn::make_gdp_graph(g, problem.cost(), problem.analysis(), tokens);
  torch::manual_seed(1);
  nn::GdpNet net(nn::GdpNetConfig{16, 2, 2, 2, 4, 8});  // segments of 4: recurrence
  torch::NoGradGuard guard;
  const auto logits = net->forward(gg, 3);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{15, 8}));
  const auto p = torch::softmax(logits, 1);
  EXPECT_TRUE(torch::allclose(p.sum(1), torch::ones({15}), 1e-5, 1e-5));
  EXPECT_EQ(p.narrow(1, 3, 5).abs().sum().item<double>(), 0.0) << "masked devices";
  EXPECT_GT(p.narrow(1, 0, 3).min().item<double>(), 0.0);
  EXPECT_FALSE(torch::isnan(logits.narrow(1, 0, 3)).any().item<bool>());
}

TEST(Gdp, SegmentMemoryFlowsForwardOnly) {
  torch::manual_seed(2);
  nn::GdpPlacer xl(16, 2, 2, 4);
  nn::GdpPlacer plain(16, 2, 2, 16);
  torch::NoGradGuard guard;
  const auto x = torch::randn({10, 16});
  auto later = x.clone();
  later[9] += 1.0;
  auto earlier = x.clone();
  earlier[1] += 1.0;
  const auto base = xl->forward(x);
  ASSERT_EQ(base.sizes(), (std::vector<int64_t>{10, 16}));
  // Segment 0 (tokens 0..3) does not see later segments; segment 1 sees segment 0 as memory.
  EXPECT_TRUE(torch::allclose(xl->forward(later).narrow(0, 0, 8), base.narrow(0, 0, 8)));
  EXPECT_FALSE(torch::allclose(xl->forward(earlier).narrow(0, 4, 4), base.narrow(0, 4, 4)));
  // Tokens 8..9 see segment 1 only: a change in segment 0 reaches them through layer 2's memory
  // (layer 1's output of segment 1), not directly.
  EXPECT_FALSE(torch::allclose(xl->forward(earlier).narrow(0, 8, 2), base.narrow(0, 8, 2)));
  // One segment: plain bidirectional attention, every token sees every other.
  EXPECT_FALSE(
      torch::allclose(plain->forward(later).narrow(0, 0, 1), plain->forward(x).narrow(0, 0, 1)));
}

TEST(Gdp, PpoFindsTheObviouslyBestPlacement) {
  const Graph g = test::ref_graph({{5, 20}, {5, 20}, {5, 20}, {5, 20}, {5, 20}, {5, 20}},
                                  {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}});
  const Problem problem(g, Platform::reference(3));
  const double optimum =
      problem.simulator().makespan(ExhaustivePlacer().place(problem, {}).assignment.device_of);
  ASSERT_EQ(optimum, 30);
  BaselineConfig c = tiny();
  c.seed = 1;
  {  // The untrained policy (one episode with a negligible learning rate) splits the chain.
    BaselineConfig u = c;
    u.lr = 1e-12;
    u.episodes = 1;
    EXPECT_GT(train_gdp(problem, u).greedy_makespan, optimum);
  }
  c.calls = 1302;
  const BaselineResult r = train_gdp(problem, c);
  EXPECT_EQ(r.greedy_makespan, optimum) << "the trained greedy policy keeps the chain together";
  EXPECT_EQ(r.best_makespan, optimum);
  EXPECT_EQ(r.cost_calls, 1302);
  EXPECT_EQ(r.episodes, 1301);
  EXPECT_EQ(r.updates, 163);  // 1301 placements in batches of at most 8: 7 or 8 each
  EXPECT_EQ(r.decisions, 1301 * 6);
}

TEST(Gdp, ATimeLimitAloneEndsTraining) {
  // No call or episode limit: only the seconds stop training, before an update that would end
  // past them at the pace of the last (so the run makes some updates and then stops).
  const Graph g = test::ref_graph({{5, 20}, {5, 20}, {5, 20}, {5, 20}}, {{0, 1}, {1, 2}, {2, 3}});
  const Problem problem(g, Platform::reference(2));
  BaselineConfig c = tiny();
  c.calls = 0;
  c.seconds = 0.3;
  const BaselineResult r = train_gdp(problem, c);
  EXPECT_GT(r.updates, 1);
  EXPECT_LT(r.updates, 1000000 / 8);  // the time, not the plan's length, ended it
  // One call per placement learnt from, plus the greedy placement's when it fitted.
  EXPECT_EQ(r.cost_calls, r.episodes + (r.greedy.device_of.empty() ? 0 : 1));
  BaselineConfig none = tiny();
  none.calls = 0;
  EXPECT_THROW(train_gdp(problem, none), InputError);  // no limit at all is refused
}

TEST(Gdp, ATimeLimitShorterThanOneUpdateKeepsTheFirstSamplesUnlearnt) {
  // The first batch: 8 placements, one simulator call each.
  const Graph g = test::ref_graph({{5, 20}, {5, 20}, {5, 20}, {5, 20}}, {{0, 1}, {1, 2}, {2, 3}});
  test::expect_first_batch_unlearnt(train_gdp, Problem(g, Platform::reference(2)), tiny(), 8);
}

// Two independent chains of four ops (compute 10 and 9, transfers 5) on two devices: the best
// placement puts each chain on a device of its own (makespan 40); one device for all takes 76,
// and a random placement pays transfers and contention. (The chains differ so that GDP's
// features tell their ops apart: a one-shot placer cannot break the symmetry of twin ops.)
Graph two_chains() {
  return test::ref_graph({{10, 5}, {10, 5}, {10, 5}, {10, 5}, {9, 5}, {9, 5}, {9, 5}, {9, 5}},
                         {{0, 1}, {1, 2}, {2, 3}, {4, 5}, {5, 6}, {6, 7}});
}

TEST(Gdp, ModestBudgetBeatsRandomPlacementByAMargin) {
  const Graph g = two_chains();
  const Problem problem(g, Platform::reference(2));
  const double optimum =
      problem.simulator().makespan(ExhaustivePlacer().place(problem, {}).assignment.device_of);
  ASSERT_EQ(optimum, 40);
  // Random placement's mean makespan, estimated independently of the trainer.
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<int> coin(0, 1);
  double random_mean = 0;
  const int samples = 2000;
  for (int i = 0; i < samples; ++i) {
    std::vector<DeviceId> dev(8);
    for (auto& d : dev) d = coin(rng);
    random_mean += problem.simulator().makespan(dev) / samples;
  }
  ASSERT_GT(random_mean, 1.2 * optimum);
  for (std::uint64_t seed : {1, 2, 3}) {
    BaselineConfig c = tiny();  // default batch (8) and PPO epochs (10)
    c.seed = seed;
    c.lr = 1e-3;
    {  // The untrained policy (negligible learning rate) is no better than random placement.
      BaselineConfig u = c;
      u.lr = 1e-12;
      u.calls = 20;
      EXPECT_GT(train_gdp(problem, u).greedy_makespan, 0.8 * random_mean) << "seed " << seed;
    }
    c.calls = 1000;
    const BaselineResult r = train_gdp(problem, c);
    EXPECT_LT(r.greedy_makespan, 0.8 * random_mean) << "seed " << seed;
  }
}

TEST(Gdp, CallsMatchTheSimulatorsCounterAndNeverExceedTheBudget) {
  std::mt19937_64 rng(5);
  const Graph g = test::random_dag(rng, {24, 0.2, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  for (const auto& [calls, episodes, batch] : std::vector<std::tuple<int, int, int>>{
           {2, 0, 16}, {3, 0, 16}, {18, 0, 16}, {40, 0, 16}, {101, 0, 7}, {50, 10, 4}, {0, 9, 4}}) {
    BaselineConfig c = tiny();
    c.calls = calls;
    c.episodes = episodes;
    c.batch = batch;
    c.ppo_epochs = 2;
    std::vector<BaselineEpisode> log;
    const std::int64_t before = problem.simulator().calls();
    const BaselineResult r =
        train_gdp(problem, c, [&](const BaselineEpisode& e) { log.push_back(e); });
    const std::int64_t made = problem.simulator().calls() - before;
    SCOPED_TRACE(::testing::Message() << "calls " << calls << " episodes " << episodes);
    EXPECT_EQ(r.cost_calls, made);
    if (calls > 0) {
      EXPECT_LE(made, calls);
    }
    const int trained = episodes > 0 && (calls == 0 || episodes < calls - 1) ? episodes : calls - 1;
    EXPECT_EQ(r.episodes, trained);
    EXPECT_EQ(made, trained + 1) << "every placement and the greedy one, nothing else";
    ASSERT_EQ(static_cast<int>(log.size()), trained);
    EXPECT_EQ(log.back().calls, trained);
    // Batches of at most `batch`, as equal as possible; the baseline of a placement is the mean
    // makespan of the other placements of its batch.
    const int updates = (trained + batch - 1) / batch;
    EXPECT_EQ(r.updates, updates);
    std::size_t at = 0;
    for (int u = 0; u < updates; ++u) {
      const int k = trained / updates + (u < trained % updates ? 1 : 0);
      double sum = 0;
      for (int i = 0; i < k; ++i) sum += log[at + static_cast<std::size_t>(i)].makespan;
      for (int i = 0; i < k; ++i) {
        const BaselineEpisode& e = log[at + static_cast<std::size_t>(i)];
        if (k > 1) {
          EXPECT_NEAR(e.baseline, (sum - e.makespan) / (k - 1), 1e-9 * sum);
        }
        EXPECT_EQ(e.calls, static_cast<std::int64_t>(at) + i + 1);
      }
      at += static_cast<std::size_t>(k);
    }
  }
}

TEST(Gdp, SameSeedSameRunAndCheckpointRoundTrip) {
  std::mt19937_64 rng(11);
  const Graph g = test::random_dag(rng, {30, 0.15, 9, 9, true});
  const Problem problem(g, Platform::reference(4));
  test::TempDir dir;
  BaselineConfig c = tiny();
  c.calls = 40;
  c.segment = 8;  // 30 tokens: four segments with memory
  c.seed = 3;
  c.run_dir = dir.path();
  const BaselineResult a = train_gdp(problem, c);
  c.run_dir.clear();
  const BaselineResult b = train_gdp(problem, c);
  EXPECT_EQ(a.best.device_of, b.best.device_of);
  EXPECT_EQ(a.greedy.device_of, b.greedy.device_of);
  EXPECT_EQ(a.cost_calls, 40);
  EXPECT_EQ(place_gdp(problem, dir / "ckpt.pt").device_of, a.greedy.device_of);
  const Graph other = test::random_dag(rng, {50, 0.1, 9, 9, true});
  const Problem p2(other, Platform::reference(2));
  EXPECT_NO_THROW(place_gdp(p2, dir / "ckpt.pt").validate(other, 2));
  // Wrong kinds of file.
  EXPECT_THROW(place_placeto(problem, dir / "ckpt.pt"), InputError);
  std::ifstream in(dir / "ckpt.pt", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir / "half.pt", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_THROW(place_gdp(problem, dir / "half.pt"), InputError);
  const Problem p9(other, Platform::reference(9));
  EXPECT_THROW(train_gdp(p9, tiny()), InputError) << "more devices than max_devices";
  BaselineConfig bad = tiny();
  bad.heads = 3;  // 16 is not a multiple of 3
  EXPECT_THROW(train_gdp(problem, bad), InputError);
}

}  // namespace
}  // namespace doppler
