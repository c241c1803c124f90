// Training: imitation learns the teacher, REINFORCE finds an obviously best placement, and a
// run interrupted at a checkpoint resumes to exactly the same result.
#include <chrono>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/support.hpp"
#include "train/small_config.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/train/pipeline.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double s = 0;
  for (std::size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
}

TEST(Training, ImitationLossFallsAndTeacherMatchRises) {
  std::mt19937_64 rng(17);
  const Graph g = test::random_dag(rng, {30, 0.15, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  TrainConfig c = test::small_train_config(TrainStage::imitation, 50);
  c.policy.hidden = 32;
  c.policy.mlp_hidden = 32;
  c.lr = 3e-3;
  c.seed = 3;
  DopplerTrainer trainer(problem, c);
  std::vector<double> loss, match;
  trainer.train([&](const EpisodeStats& s) {
    loss.push_back(s.loss_sel + s.loss_plc);
    match.push_back(0.5 * (s.match_sel + s.match_plc));
  });
  ASSERT_EQ(loss.size(), 50u);
  EXPECT_LT(mean(loss, 40, 50), 0.5 * mean(loss, 0, 10));
  EXPECT_GT(mean(match, 40, 50), mean(match, 0, 10));
  EXPECT_GT(mean(match, 40, 50), 0.85);
}

// A chain of six ops (compute 5, transfers 20) on three devices: the optimum (30) keeps the chain
// on one device, every split pays a transfer. The untrained policy splits it; REINFORCE on the
// simulator learns to keep it together.
TEST(Training, ReinforceFindsTheObviouslyBestPlacement) {
  const Graph g = test::ref_graph({{5, 20}, {5, 20}, {5, 20}, {5, 20}, {5, 20}, {5, 20}},
                                  {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}});
  const Problem problem(g, Platform::reference(3));
  const double optimum =
      problem.simulator().makespan(ExhaustivePlacer().place(problem, {}).assignment.device_of);
  ASSERT_EQ(optimum, 30);
  TrainConfig c = test::small_train_config(TrainStage::simulation, 300);
  c.lr = 3e-3;
  c.lr_end = 1e-4;
  c.seed = 1;
  DopplerTrainer trainer(problem, c);
  EXPECT_GT(problem.simulator().makespan(trainer.greedy()), optimum)
      << "the untrained policy is not already optimal";
  const TrainResult r = trainer.train();
  EXPECT_EQ(r.greedy_makespan, optimum)
      << "the trained greedy policy keeps the chain on one device";
  EXPECT_EQ(r.best_makespan, optimum);
  EXPECT_EQ(r.cost_calls, 301);
}

TEST(Training, ResumeReproducesAnUninterruptedRun) {
  std::mt19937_64 rng(23);
  const Graph g = test::random_dag(rng, {20, 0.2, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  TrainConfig c = test::small_train_config(TrainStage::simulation, 24);
  c.rollouts = 2;  // 12 updates of 2 rollouts
  c.checkpoint_every = 6;
  c.seed = 5;
  test::TempDir a, b;
  DopplerTrainer full(problem, c);
  full.set_run_dir(a.path());
  const TrainResult ra = full.train();

  {  // interrupted after its first checkpoint (update 6, rollout 12) during update 8
    DopplerTrainer part(problem, c);
    part.set_run_dir(b.path());
    int seen = 0;
    try {
      part.train([&](const EpisodeStats&) {
        if (++seen == 8) throw std::runtime_error("simulated crash");
      });
    } catch (const std::runtime_error&) {
    }
  }
  DopplerTrainer resumed(
      problem,
      test::small_train_config(TrainStage::simulation, 999));  // config comes from the checkpoint
  resumed.resume(b.path());
  EXPECT_EQ(resumed.episodes_done(), 12);
  const TrainResult rb = resumed.train();
  EXPECT_EQ(rb.best_makespan, ra.best_makespan);
  EXPECT_EQ(rb.best.device_of, ra.best.device_of);
  EXPECT_EQ(rb.greedy.device_of, ra.greedy.device_of);
  EXPECT_EQ(rb.episodes, 24);
  EXPECT_EQ(rb.cost_calls, ra.cost_calls);
  // The logs are identical except for the wall-clock times.
  std::ifstream la(a / "log.jsonl"), lb(b / "log.jsonl");
  std::string x, y;
  int lines = 0;
  while (std::getline(la, x)) {
    ASSERT_TRUE(static_cast<bool>(std::getline(lb, y)));
    const auto strip = [](std::string s) {
      return s.substr(0, s.find("\"seconds\"")) + s.substr(s.find("\"stage\""));
    };
    EXPECT_EQ(strip(x), strip(y)) << "line " << lines;
    ++lines;
  }
  EXPECT_EQ(lines, 12) << "one log line per update";
  EXPECT_FALSE(static_cast<bool>(std::getline(lb, y)));
}

// A policy trained (Stage I) on one graph and device count places other graphs on other device
// counts: the loaded checkpoint gives the trainer's greedy placement, and on an unseen graph with
// 8 devices its placement is far better than random placement (it learned to imitate
// critical-path, not one graph's answer).
TEST(Training, PolicyLoadsAndPlacesOtherGraphs) {
  std::mt19937_64 rng(29);
  const Graph g = test::random_dag(rng, {15, 0.2, 9, 9, true});
  const Problem problem(g, Platform::reference(2));
  test::TempDir dir;
  TrainConfig c = test::small_train_config(TrainStage::imitation, 60);
  c.lr = 3e-3;
  DopplerTrainer trainer(problem, c);
  trainer.set_run_dir(dir.path());
  const TrainResult r = trainer.train();
  DopplerPolicy policy = DopplerPolicy::load(dir / "ckpt.pt");
  EXPECT_EQ(policy.place(problem).device_of, r.greedy.device_of);
  const Graph other = test::random_dag(rng, {40, 0.1, 9, 9, true});
  const Problem p8(other, Platform::reference(8));
  const double learned = p8.simulator().makespan(policy.place(p8).device_of);
  double random_mean = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    random_mean +=
        p8.simulator().makespan(make_placer("random")->place(p8, {seed, {}}).assignment.device_of) /
        20;
  EXPECT_LT(learned, 0.8 * random_mean);
  EXPECT_GE(learned, p8.lower_bound());
  // The same weights through the trainer (--init) give the same greedy placement.
  DopplerTrainer again(p8, test::small_train_config(TrainStage::simulation, 16));
  again.load_weights(dir.path());
  EXPECT_EQ(again.greedy().device_of, policy.place(p8).device_of);
}

TEST(Training, BadCheckpointsAreInputErrors) {
  test::TempDir dir;
  std::ofstream(dir / "ckpt.pt") << "not a checkpoint";
  EXPECT_THROW(DopplerPolicy::load(dir / "ckpt.pt"), InputError);
  EXPECT_THROW(DopplerPolicy::load(dir / "missing.pt"), InputError);
  // A checkpoint of another graph cannot be resumed.
  std::mt19937_64 rng(1);
  const Graph g1 = test::random_dag(rng, {8, 0.3, 9, 9, true});
  const Graph g2 = test::random_dag(rng, {9, 0.3, 9, 9, true});
  const Problem p1(g1, Platform::reference(2)), p2(g2, Platform::reference(2));
  DopplerTrainer t1(p1, test::small_train_config(TrainStage::imitation, 2));
  t1.set_run_dir(dir.path());
  t1.train();
  DopplerTrainer t2(p2, test::small_train_config(TrainStage::imitation, 2));
  try {
    t2.resume(dir.path());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("made for another graph"), std::string::npos) << e.what();
  }
  // A truncated checkpoint.
  std::ifstream in(dir / "ckpt.pt", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir / "half.pt", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_THROW(DopplerPolicy::load(dir / "half.pt"), InputError);
}

}  // namespace
}  // namespace doppler

namespace doppler {
namespace {

// A non-finite cost makes the update diverge: it is detected, rolled back to the last good
// checkpoint and the learning rate is halved; nothing non-finite is ever saved.
TEST(Training, DivergingUpdatesAreRolledBackWithALowerLearningRate) {
  std::mt19937_64 rng(41);
  const Graph g = test::random_dag(rng, {20, 0.2, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  TrainConfig c = test::small_train_config(TrainStage::simulation, 10);
  c.preset = TrainPreset::paper;  // one rollout per update: cost call k is update k
  c.checkpoint_every = 4;
  c.lr = 1e-2;
  c.lr_end = 1e-2;
  test::TempDir dir;
  DopplerTrainer trainer(problem, c);
  trainer.set_run_dir(dir.path());
  int calls = 0;
  trainer.set_cost([&](const Assignment& a) {
    const int k = calls++;
    if (k == 5) return std::nan("");
    if (k == 7) return HUGE_VAL;
    return problem.simulator().makespan(a);
  });
  std::vector<EpisodeStats> stats;
  std::vector<std::vector<DeviceId>> greedy;
  trainer.train([&](const EpisodeStats& s) {
    stats.push_back(s);
    greedy.push_back(trainer.greedy().device_of);
  });
  ASSERT_EQ(stats.size(), 10u);
  for (const EpisodeStats& s : stats)
    EXPECT_EQ(s.diverged, s.episode == 5 || s.episode == 7) << s.episode;
  ASSERT_NE(greedy[4], greedy[3]) << "precondition: one update changes the greedy placement";
  EXPECT_EQ(greedy[5], greedy[3]) << "rolled back to the checkpoint taken after episode 3";
  EXPECT_DOUBLE_EQ(stats[6].lr, 0.5e-2);
  EXPECT_DOUBLE_EQ(stats[9].lr, 0.25e-2);
  EXPECT_TRUE(std::isfinite(stats[9].best));
  // The saved policy is finite and places the graph.
  DopplerPolicy policy = DopplerPolicy::load(dir / "ckpt.pt");
  EXPECT_TRUE(std::isfinite(problem.simulator().makespan(policy.place(problem))));
}

}  // namespace
}  // namespace doppler

namespace doppler {
namespace {

// Regression: a stage with a new cost function starts a new best. Stage II on the simulator,
// then a cost in other units (1000 x the simulated makespan): the next stage's best is in the
// new units, never the old simulated best carried over.
TEST(Training, ANewCostFunctionStartsANewBest) {
  std::mt19937_64 rng(43);
  const Graph g = test::random_dag(rng, {12, 0.25, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  TrainConfig c = test::small_train_config(TrainStage::simulation, 32);
  c.seed = 2;
  DopplerTrainer trainer(problem, c);
  const TrainResult sim = trainer.train();
  ASSERT_LT(sim.best_makespan, 1000 * problem.lower_bound());
  int calls = 0;
  trainer.set_cost([&](const Assignment& a) {
    ++calls;
    return 1000 * problem.simulator().makespan(a.device_of);
  });
  TrainConfig real = test::small_train_config(TrainStage::real, 4);
  real.rollouts = 4;
  trainer.start_stage(real);
  const TrainResult r = trainer.train();
  EXPECT_GE(r.best_makespan, 1000 * problem.lower_bound());
  EXPECT_DOUBLE_EQ(r.best_makespan, 1000 * problem.simulator().makespan(r.best.device_of));
  EXPECT_LE(r.best_makespan, 1000 * sim.best_makespan) << "the carried-over best, re-scored";
  EXPECT_GE(calls, 4 + 1);  // the rollouts and the greedy rollout, at least
}

// Regression: time_budget is per stage. Stage I runs for longer than Stage II's budget; Stage II
// still trains (at least one update), and stops on its own budget.
// A 20-op random DAG on 3 devices (the time-budget tests).
struct TimedProblem {
  explicit TimedProblem(std::uint64_t seed)
      : rng(seed), g(test::random_dag(rng, {20, 0.2, 9, 9, true})) {}
  std::mt19937_64 rng;
  Graph g;
  Problem problem{g, Platform::reference(3)};
};

TEST(Training, TimeBudgetIsPerStage) {
  const TimedProblem t(47);
  const Problem& problem = t.problem;
  TrainConfig il = test::small_train_config(TrainStage::imitation, 1'000'000);
  il.time_budget = 0.6;
  DopplerTrainer trainer(problem, il);
  const auto t0 = std::chrono::steady_clock::now();
  trainer.train();
  const double stage1 =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_GE(stage1, 0.45);  // no update starts that would end past 0.6 s: about that long
  ASSERT_LT(trainer.episodes_done(), 1'000'000);
  TrainConfig sim = test::small_train_config(TrainStage::simulation, 1'000'000);
  sim.time_budget = 0.3;
  trainer.start_stage(sim);
  EXPECT_EQ(trainer.episodes_done(), 0);
  const TrainResult r = trainer.train();
  EXPECT_GT(trainer.episodes_done(), 0) << "Stage II ran despite Stage I's longer run";
  EXPECT_LT(trainer.episodes_done(), 1'000'000) << "and stopped on its own budget";
  EXPECT_EQ(r.episodes, trainer.episodes_done());
}

// The pipeline's shared seconds: Stage I (2 rollouts, far below its half) leaves time that
// Stage II's budget takes over; a per-stage limit in the base config still caps each stage.
TEST(Training, PipelineStagesShareTheSecondsAndPassOnWhatIsLeft) {
  const TimedProblem t(49);
  PipelineSpec spec;
  spec.base = test::small_train_config(TrainStage::imitation, 1);
  spec.il = 2;
  spec.sim = 4;
  spec.seconds = 4;
  DopplerTrainer trainer(t.problem, spec.base);
  run_pipeline(trainer, spec);
  EXPECT_EQ(trainer.config().stage, TrainStage::simulation);
  EXPECT_GT(trainer.config().time_budget, 2.0) << "more than an even split of the 4 s";
  EXPECT_LE(trainer.config().time_budget, 4.0);
  spec.base.time_budget = 0.3;
  DopplerTrainer capped(t.problem, spec.base);
  run_pipeline(capped, spec);
  EXPECT_DOUBLE_EQ(capped.config().time_budget, 0.3);
}

// An update whose rollouts pass the stage's seconds stops after the wave that passed them (2
// rollouts on one thread) instead of finishing its 16: the first update no longer overruns a
// short budget by a whole batch.
TEST(Training, AnUpdatesRolloutsStopAtTheTimeBudget) {
  const TimedProblem t(48);
  const Problem& problem = t.problem;
  TrainConfig sim = test::small_train_config(TrainStage::simulation, 1'000'000);
  sim.rollouts = 16;
  sim.time_budget = 1e-9;
  DopplerTrainer trainer(problem, sim);
  const TrainResult r = trainer.train();
  EXPECT_EQ(trainer.episodes_done(), 2) << "one wave of 2 x 1 thread";
  EXPECT_EQ(r.cost_calls, 2 + 1) << "its two rollouts and the greedy rollout";
  EXPECT_DOUBLE_EQ(r.best_makespan, problem.simulator().makespan(r.best.device_of));
}

}  // namespace
}  // namespace doppler

namespace doppler {
namespace {

// grad_clip 0 means "no clipping" (TrainConfig, `doppler train --grad-clip 0`): training runs
// and its updates are not rejected.
TEST(Training, GradClipZeroMeansNoClipping) {
  std::mt19937_64 rng(53);
  const Graph g = test::random_dag(rng, {10, 0.25, 9, 9, true});
  const Problem problem(g, Platform::reference(2));
  TrainConfig c = test::small_train_config(TrainStage::simulation, 32);
  c.grad_clip = 0;
  DopplerTrainer trainer(problem, c);
  std::vector<EpisodeStats> stats;
  TrainResult r;
  ASSERT_NO_THROW(r = trainer.train([&](const EpisodeStats& s) { stats.push_back(s); }));
  EXPECT_EQ(r.episodes, 32);
  for (const EpisodeStats& s : stats) EXPECT_FALSE(s.diverged);
}

}  // namespace
}  // namespace doppler
