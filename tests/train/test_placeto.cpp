// Placeto: pooling masks and probabilities over devices, batched states agreeing with single
// ones, batched policy gradient finding the obviously best placement of a tiny graph, the
// per-step leave-one-out baseline, the simulator-call budget against the simulator's own
// counter, checkpoints (round trip, wrong kinds of file).
#include <fstream>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include "policy/nn/placeto_net.hpp"
#include "support/builders.hpp"
#include "support/support.hpp"
#include "train/baseline_checks.hpp"

#include "doppler/heuristics/search_placers.hpp"
#include "doppler/train/baselines.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// The chain of six ops (compute 5, transfers 20): on three devices the optimum (30) keeps it on
// one device, every split pays a transfer of 20.
Graph chain() {
  return test::ref_graph({{5, 20}, {5, 20}, {5, 20}, {5, 20}, {5, 20}, {5, 20}},
                         {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}});
}

BaselineConfig tiny() {
  BaselineConfig c;
  c.hidden = 8;
  c.steps = 2;
  c.max_devices = 8;
  c.lr = 3e-3;
  return c;
}

// A diamond 0 -> {1, 2} -> 3 plus a separate node 4 and a tail 3 -> 5.
Graph diamond() {
  return test::ref_graph({{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}},
                         {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 5}});
}

TEST(Placeto, PoolingMasksArePlacetosParentChildAndParallelSets) {
  const Graph g = diamond();
  const Problem problem(g, Platform::reference(2));
  const nn::PlacetoGraph pg = nn::make_placeto_graph(g, problem.cost());
  std::vector<float> m(3 * 6);
  nn::placeto_masks(pg, 1, false, m.data());
  EXPECT_EQ(std::vector<float>(m.begin(), m.begin() + 6), (std::vector<float>{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(std::vector<float>(m.begin() + 6, m.begin() + 12),
            (std::vector<float>{0, 0, 0, 1, 0, 1}));
  EXPECT_EQ(std::vector<float>(m.begin() + 12, m.end()), (std::vector<float>{0, 0, 1, 0, 1, 0}));
  nn::placeto_masks(pg, 3, true, m.data());  // mean pooling: rows divided by their size
  EXPECT_FLOAT_EQ(m[0] + m[1] + m[2], 1.0f);
  EXPECT_FLOAT_EQ(m[1], 1.0f / 3);
  EXPECT_FLOAT_EQ(m[6 + 5], 1.0f);
  EXPECT_FLOAT_EQ(m[12 + 4], 1.0f);
  EXPECT_FLOAT_EQ(m[12 + 3], 0.0f);
}

nn::PlacetoStates states(const nn::PlacetoGraph& pg, const std::vector<std::vector<int>>& devs,
                         const std::vector<int>& current) {
  const auto b = static_cast<int64_t>(devs.size()), n = static_cast<int64_t>(pg.num_nodes);
  nn::PlacetoStates s{torch::zeros({b, n}, torch::kLong), torch::zeros({b, n, 2}),
                      torch::zeros({b}, torch::kLong), torch::zeros({b, 3, n})};
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t v = 0; v < n; ++v) {
      s.device[i][v] = devs[static_cast<std::size_t>(i)][static_cast<std::size_t>(v)];
      s.flags[i][v][1] = v < current[static_cast<std::size_t>(i)] ? 1.0f : 0.0f;
    }
    s.flags[i][current[static_cast<std::size_t>(i)]][0] = 1.0f;
    s.current[i] = current[static_cast<std::size_t>(i)];
    nn::placeto_masks(pg, current[static_cast<std::size_t>(i)], true, s.masks[i].data_ptr<float>());
  }
  return s;
}

TEST(Placeto, ProbabilitiesCoverTheDevicesAndBatchesAgree) {
  const Graph g = diamond();
  const Problem problem(g, Platform::reference(3));
  const nn::PlacetoGraph pg = nn::make_placeto_graph(g, problem.cost());
  torch::manual_seed(4);
  nn::PlacetoNet net(nn::PlacetoNetConfig{8, 2, 8, true});
  torch::NoGradGuard guard;
  const std::vector<std::vector<int>> devs = {{0, 1, 2, 0, 1, 2}, {2, 2, 1, 0, 0, 1}};
  const auto both = net->forward(pg, states(pg, devs, {1, 4}), 3);
  ASSERT_EQ(both.sizes(), (std::vector<int64_t>{2, 8}));
  const auto p = nn::placeto_probs(both);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(p[i].sum().item<double>(), 1.0, 1e-5);
    EXPECT_EQ(p[i].narrow(0, 3, 5).abs().sum().item<double>(), 0.0) << "masked devices";
    EXPECT_GT(p[i].narrow(0, 0, 3).min().item<double>(), 0.0);
  }
  // Each state alone gives the same logits as in the batch.
  const auto first = net->forward(pg, states(pg, {devs[0]}, {1}), 3);
  const auto second = net->forward(pg, states(pg, {devs[1]}, {4}), 3);
  EXPECT_TRUE(torch::allclose(first[0].narrow(0, 0, 3), both[0].narrow(0, 0, 3), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(second[0].narrow(0, 0, 3), both[1].narrow(0, 0, 3), 1e-5, 1e-6));
  // The state matters: moving one op changes the current op's distribution.
  auto moved = devs[0];
  moved[3] = 2;
  const auto third = net->forward(pg, states(pg, {moved}, {1}), 3);
  EXPECT_FALSE(torch::allclose(first, third));
}

TEST(Placeto, BatchedPolicyGradientFindsTheObviouslyBestPlacement) {
  const Graph g = chain();
  const Problem problem(g, Platform::reference(3));
  const double optimum =
      problem.simulator().makespan(ExhaustivePlacer().place(problem, {}).assignment.device_of);
  ASSERT_EQ(optimum, 30);
  BaselineConfig c = tiny();
  c.seed = 2;
  {  // The untrained policy (one episode with a negligible learning rate) splits the chain.
    BaselineConfig u = c;
    u.lr = 1e-12;
    u.episodes = 1;
    EXPECT_GT(train_placeto(problem, u).greedy_makespan, optimum);
  }
  c.calls = 1302;
  const BaselineResult r = train_placeto(problem, c);
  EXPECT_EQ(r.greedy_makespan, optimum) << "the trained greedy policy keeps the chain together";
  EXPECT_EQ(r.best_makespan, optimum);
  EXPECT_EQ(r.cost_calls, 1302);
  EXPECT_EQ(r.decisions_per_episode, 6);
  EXPECT_EQ(r.decisions, 1300);  // initial placement and greedy evaluation: one call each
  EXPECT_EQ(r.episodes, 217);    // the last one truncated to 4 steps
  EXPECT_EQ(r.updates, 55);      // batches of at most 4 episodes: 217 = 52 x 4 + 3 x 3
}

TEST(Placeto, CallsMatchTheSimulatorsCounterAndNeverExceedTheBudget) {
  std::mt19937_64 rng(8);
  const Graph g = test::random_dag(rng, {12, 0.25, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  BaselineConfig probe = tiny();
  probe.calls = 0;
  probe.episodes = 1;
  const int n = train_placeto(problem, probe).decisions_per_episode;
  ASSERT_GT(n, 3);
  for (const auto& [calls, episodes, batch] : std::vector<std::tuple<int, int, int>>{
           {3, 0, 4}, {n + 2, 0, 4}, {n + 3, 0, 4}, {5 * n + 1, 0, 2}, {7 * n, 0, 3}, {0, 5, 2}}) {
    BaselineConfig c = tiny();
    c.calls = calls;
    c.episodes = episodes;
    c.batch = batch;
    c.ppo_epochs = 2;
    std::vector<BaselineEpisode> log;
    const std::int64_t before = problem.simulator().calls();
    const BaselineResult r =
        train_placeto(problem, c, [&](const BaselineEpisode& e) { log.push_back(e); });
    const std::int64_t made = problem.simulator().calls() - before;
    SCOPED_TRACE(::testing::Message() << "calls " << calls << " episodes " << episodes);
    EXPECT_EQ(r.cost_calls, made);
    // Every call is spent: initial placement, one per step, greedy placement.
    const std::int64_t expect = calls > 0 ? calls : 2 + static_cast<std::int64_t>(episodes) * n;
    EXPECT_EQ(made, expect);
    EXPECT_EQ(r.decisions, made - 2);
    EXPECT_EQ(r.episodes, (r.decisions + n - 1) / n);
    ASSERT_EQ(static_cast<int>(log.size()), r.episodes);
    EXPECT_EQ(log.back().calls, made - 1);
  }
}

TEST(Placeto, AStopWithinAnEpisodeEndsTheRunWithTheBestSoFar) {
  std::mt19937_64 rng(9);
  const Graph g = test::random_dag(rng, {40, 0.15, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  BaselineConfig c = tiny();
  c.calls = 0;
  c.episodes = 4;
  int asked = 0;
  std::vector<double> told;
  c.on_update = [&](double best) {
    told.push_back(best);
    return ++asked < 3;  // stop at the third check: steps 8, 16, then 24 of the first episode
  };
  const std::int64_t before = problem.simulator().calls();
  const BaselineResult r = train_placeto(problem, c);
  ASSERT_GT(r.decisions_per_episode, 24);
  EXPECT_EQ(asked, 3);
  // The initial evaluation and the 23 steps before the third check; no update, no greedy.
  EXPECT_EQ(problem.simulator().calls() - before, 1 + 23);
  EXPECT_EQ(r.cost_calls, 1 + 23);
  EXPECT_EQ(r.updates, 0);
  EXPECT_TRUE(r.greedy.device_of.empty());
  EXPECT_EQ(r.best_makespan, told.back());
  EXPECT_EQ(problem.simulator().makespan(r.best.device_of), r.best_makespan);
}

TEST(Placeto, ATimeLimitShorterThanOneUpdateKeepsTheFirstEpisodesUnlearnt) {
  // Episodes of 6 steps never reach a time check inside them. The first batch: the initial
  // evaluation and every step of 4 episodes.
  const Graph g = diamond();
  const BaselineResult r = test::expect_first_batch_unlearnt(
      train_placeto, Problem(g, Platform::reference(3)), tiny(), 1 + 4 * 6);
  EXPECT_EQ(r.decisions_per_episode, 6);
}

TEST(Placeto, FirstStepBaselineIsTheMeanOfTheOtherEpisodesOfTheBatch) {
  const Graph g = diamond();
  const Problem problem(g, Platform::reference(3));
  BaselineConfig c = tiny();
  c.calls = 0;
  c.episodes = 10;
  c.batch = 4;  // batches of 4, 3 and 3
  c.lr = 1e-2;
  std::vector<BaselineEpisode> log;
  const BaselineResult r =
      train_placeto(problem, c, [&](const BaselineEpisode& e) { log.push_back(e); });
  EXPECT_EQ(r.updates, 3);
  ASSERT_EQ(log.size(), 10u);
  bool varied = false;
  std::size_t at = 0;
  for (int k : {4, 3, 3}) {
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += log[at + static_cast<std::size_t>(i)].reward;
    double sq = 0;
    for (int i = 0; i < k; ++i) {
      const BaselineEpisode& e = log[at + static_cast<std::size_t>(i)];
      EXPECT_NEAR(e.baseline, (sum - e.reward) / (k - 1), 1e-12);
      // The advantage has the sign of the return's excess over the baseline.
      if (std::abs(e.reward - e.baseline) > 1e-9) {
        EXPECT_GT(e.advantage * (e.reward - e.baseline), 0.0);
        varied = true;
      }
      sq += e.advantage * e.advantage;
    }
    at += static_cast<std::size_t>(k);
    EXPECT_LE(sq, k * 6 + 1e-9) << "advantages are normalised over the batch's k x 6 steps";
  }
  EXPECT_TRUE(varied) << "the test graph gives different returns";
}

TEST(Placeto, InputOpsFollowTheirFirstConsumerAndAreNotDecided) {
  GraphBuilder b;
  Node in;
  in.kind = OpKind::input;
  in.compute_cost = 0;
  in.transfer_cost = 9;
  Node op;
  op.compute_cost = 3;
  op.transfer_cost = 2;
  b.add_node(in);  // 0: input read by 1 and 2
  b.add_node(op);
  b.add_node(op);
  b.add_edge(0, 1);
  b.add_edge(0, 2);
  b.add_edge(1, 2);
  const Graph g = b.build();
  const Problem problem(g, Platform::reference(2));
  BaselineConfig c = tiny();
  c.calls = 0;
  c.episodes = 3;
  const BaselineResult r = train_placeto(problem, c);
  EXPECT_EQ(r.decisions_per_episode, 2);
  EXPECT_EQ(r.cost_calls, 1 + 3 * 2 + 1);
  EXPECT_EQ(r.greedy.device_of[0], r.greedy.device_of[1]);
  EXPECT_EQ(r.best.device_of[0], r.best.device_of[1]);
}

TEST(Placeto, SameSeedSameRunAndCheckpointRoundTrip) {
  std::mt19937_64 rng(7);
  const Graph g = test::random_dag(rng, {14, 0.25, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  test::TempDir dir;
  BaselineConfig c = tiny();
  c.calls = 60;
  c.seed = 5;
  c.run_dir = dir.path();
  int logged = 0;
  const BaselineResult a = train_placeto(problem, c, [&](const BaselineEpisode&) { ++logged; });
  c.run_dir.clear();
  const BaselineResult b = train_placeto(problem, c);
  EXPECT_EQ(a.best.device_of, b.best.device_of);
  EXPECT_EQ(a.greedy.device_of, b.greedy.device_of);
  EXPECT_EQ(a.cost_calls, 60);
  EXPECT_EQ(logged, a.episodes);
  std::ifstream log(dir / "log.jsonl");
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(log), {}, '\n'), a.episodes);
  // The checkpoint places like the trained policy, on this graph and on others.
  EXPECT_EQ(place_placeto(problem, dir / "ckpt.pt").device_of, a.greedy.device_of);
  const Graph other = test::random_dag(rng, {25, 0.2, 9, 9, true});
  const Problem p5(other, Platform::reference(5));
  EXPECT_NO_THROW(place_placeto(p5, dir / "ckpt.pt").validate(other, 5));
  const Problem p9(other, Platform::reference(9));
  EXPECT_THROW(place_placeto(p9, dir / "ckpt.pt"), InputError) << "more than max_devices";
}

TEST(Placeto, WrongCheckpointsAndBudgetsAreInputErrors) {
  const Graph g = chain();
  const Problem problem(g, Platform::reference(2));
  test::TempDir dir;
  {  // A Doppler checkpoint.
    TrainConfig t;
    t.stage = TrainStage::imitation;
    t.episodes = 1;
    t.policy.hidden = 8;
    t.policy.edge_hidden = 4;
    t.policy.steps = 1;
    t.policy.mlp_hidden = 8;
    t.parallel = false;
    DopplerTrainer trainer(problem, t);
    trainer.save_checkpoint(dir / "doppler.pt");
  }
  try {
    place_placeto(problem, dir / "doppler.pt");
    FAIL() << "a Doppler checkpoint loaded as Placeto";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Doppler"), std::string::npos) << e.what();
  }
  BaselineConfig c = tiny();
  c.calls = 4;
  c.run_dir = dir / "gdp";
  train_gdp(problem, c);
  try {
    place_placeto(problem, dir / "gdp" / "ckpt.pt");
    FAIL() << "a GDP checkpoint loaded as Placeto";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gdp checkpoint"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "junk.pt") << "not a checkpoint";
  EXPECT_THROW(place_placeto(problem, dir / "junk.pt"), InputError);
  EXPECT_THROW(place_placeto(problem, dir / "missing.pt"), InputError);
  BaselineConfig none = tiny();
  none.calls = 0;
  EXPECT_THROW(train_placeto(problem, none), InputError) << "no budget at all";
  none.calls = 2;
  EXPECT_THROW(train_placeto(problem, none), InputError) << "budget below one step";
}

}  // namespace
}  // namespace doppler
