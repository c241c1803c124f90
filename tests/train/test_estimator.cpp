// The policy-gradient estimator of the RL stages: leave-one-out advantages and learning-rate
// schedules against hand-computed values, the surrogate's gradient against finite differences
// (and the direction of the update the trainer takes), a two-armed toy that Stage II must solve,
// and Stage II improving on Stage I where imitating the critical-path placer is not optimal.
#include <cmath>
#include <numbers>
#include <random>

#include <gtest/gtest.h>

#include "policy/nn/agent.hpp"
#include "policy/nn/graph_tensors.hpp"
#include "policy/nn/rollout.hpp"
#include "policy/nn/sampling.hpp"
#include "support/builders.hpp"
#include "support/support.hpp"
#include "train/fused_adam.hpp"
#include "train/small_config.hpp"
#include "train/update.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/features.hpp"
#include "doppler/train/policy_gradient.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// ---------------------------------------------------------------------------------------------
// Leave-one-out advantages and schedules: hand-computed values.

TEST(Estimator, LeaveOneOutAdvantagesByHand) {
  // costs 1, 2, 3: A_k = mean of the others - c_k = 1.5, 0, -1.5 (lower cost, positive).
  const auto raw = leave_one_out_advantages({1, 2, 3}, false);
  ASSERT_EQ(raw.size(), 3u);
  EXPECT_NEAR(raw[0], 1.5, 1e-12);
  EXPECT_NEAR(raw[1], 0.0, 1e-12);
  EXPECT_NEAR(raw[2], -1.5, 1e-12);
  // Normalised: divided by their population standard deviation sqrt(1.5).
  const auto norm = leave_one_out_advantages({1, 2, 3}, true);
  EXPECT_NEAR(norm[0], 1.5 / std::sqrt(1.5), 1e-6);
  EXPECT_NEAR(norm[1], 0.0, 1e-9);
  EXPECT_NEAR(norm[2], -1.5 / std::sqrt(1.5), 1e-6);
  // costs 10, 10, 10, 14: A = 4/3, 4/3, 4/3, -4; unit scale whatever the units.
  const auto a = leave_one_out_advantages({10, 10, 10, 14}, false);
  EXPECT_NEAR(a[0], 4.0 / 3, 1e-12);
  EXPECT_NEAR(a[3], -4.0, 1e-12);
  const auto b = leave_one_out_advantages({10, 10, 10, 14}, true);
  const auto c = leave_one_out_advantages({1e4, 1e4, 1e4, 1.4e4}, true);
  const double sd = std::sqrt((3 * std::pow(4.0 / 3 + 0, 2) + 16) / 4 - 0);  // mean is 0
  EXPECT_NEAR(b[0], (4.0 / 3) / sd, 1e-6);
  EXPECT_NEAR(b[3], -4.0 / sd, 1e-6);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(b[i], c[i], 1e-6) << "scale-free";
  // Equal costs, or one rollout: no signal.
  for (double x : leave_one_out_advantages({7, 7, 7}, true)) EXPECT_EQ(x, 0.0);
  for (double x : leave_one_out_advantages({7, 7, 7}, false)) EXPECT_EQ(x, 0.0);
  EXPECT_EQ(leave_one_out_advantages({5}, true), std::vector<double>{0.0});
  EXPECT_TRUE(leave_one_out_advantages({}, true).empty());
  EXPECT_THROW(leave_one_out_advantages({1, std::nan(""), 2}, true), std::invalid_argument);
  EXPECT_THROW(leave_one_out_advantages({1, HUGE_VAL}, false), std::invalid_argument);
}

TEST(Estimator, LearningRateSchedulesByHand) {
  // Warm-up: lr x (step + 1) / warmup over the first `warmup` updates, then the schedule.
  EXPECT_DOUBLE_EQ(scheduled_lr(LrSchedule::constant, 1e-3, 1e-6, 4, 0, 100), 0.25e-3);
  EXPECT_DOUBLE_EQ(scheduled_lr(LrSchedule::constant, 1e-3, 1e-6, 4, 3, 100), 1e-3);
  EXPECT_DOUBLE_EQ(scheduled_lr(LrSchedule::constant, 1e-3, 1e-6, 4, 4, 100), 1e-3);
  EXPECT_DOUBLE_EQ(scheduled_lr(LrSchedule::constant, 1e-3, 1e-6, 0, 99, 100), 1e-3);
  // Cosine over updates 0..10 (no warm-up): lr at 0, lr_end at the last, the mean half-way.
  EXPECT_NEAR(scheduled_lr(LrSchedule::cosine, 1e-3, 1e-5, 0, 0, 11), 1e-3, 1e-15);
  EXPECT_NEAR(scheduled_lr(LrSchedule::cosine, 1e-3, 1e-5, 0, 10, 11), 1e-5, 1e-15);
  EXPECT_NEAR(scheduled_lr(LrSchedule::cosine, 1e-3, 1e-5, 0, 5, 11), 0.5 * (1e-3 + 1e-5), 1e-15);
  // A quarter of the way: lr_end + (lr - lr_end) (1 + cos(pi / 4)) / 2.
  EXPECT_NEAR(scheduled_lr(LrSchedule::cosine, 1e-3, 0, 0, 2, 9),
              1e-3 * 0.5 * (1 + std::cos(std::numbers::pi / 4)), 1e-15);
  // With warm-up 2 over 12 updates: the cosine starts at update 2 and ends at 11.
  EXPECT_NEAR(scheduled_lr(LrSchedule::cosine, 1e-3, 1e-5, 2, 1, 12), 1e-3, 1e-15);
  EXPECT_NEAR(scheduled_lr(LrSchedule::cosine, 1e-3, 1e-5, 2, 2, 12), 1e-3, 1e-15);
  EXPECT_NEAR(scheduled_lr(LrSchedule::cosine, 1e-3, 1e-5, 2, 11, 12), 1e-5, 1e-15);
  // Linear: straight line between the endpoints.
  EXPECT_NEAR(scheduled_lr(LrSchedule::linear, 1e-3, 1e-5, 0, 5, 11), 0.5 * (1e-3 + 1e-5), 1e-15);
  EXPECT_NEAR(scheduled_lr(LrSchedule::linear, 1e-3, 1e-5, 0, 10, 11), 1e-5, 1e-15);
  // The schedule names round-trip; anything else is an InputError.
  for (LrSchedule s : {LrSchedule::constant, LrSchedule::cosine, LrSchedule::linear})
    EXPECT_EQ(parse_lr_schedule(lr_schedule_name(s)), s);
  EXPECT_THROW(parse_lr_schedule("exp"), InputError);
}

// ---------------------------------------------------------------------------------------------
// The policy gradient against finite differences.

PolicyConfig tiny_config() {
  PolicyConfig c;
  c.hidden = 8;
  c.edge_hidden = 4;
  c.steps = 1;
  c.mlp_hidden = 8;
  return c;
}

// L(theta) = -sum_k A_k / (K T_k) sum_t log pi_PLC(a_kt | s_kt): the plain policy-gradient
// surrogate of a batch (no behaviour correction needed: on-policy samples).
torch::Tensor surrogate(nn::DualAgent& agent, const nn::Prepared& prep,
                        const std::vector<nn::Sampled>& batch, const std::vector<double>& adv,
                        int devices) {
  auto loss = torch::zeros({});
  const auto k = static_cast<double>(batch.size());
  for (std::size_t r = 0; r < batch.size(); ++r) {
    const nn::StepTerms t = agent.plc_terms(prep, batch[r].episode, devices);
    loss = loss - t.logp.sum() * (adv[r] / (k * static_cast<double>(t.logp.size(0))));
  }
  return loss;
}

TEST(Estimator, PolicyGradientMatchesFiniteDifferencesAndTheUpdateFollowsIt) {
  torch::manual_seed(11);
  std::mt19937_64 grng(4);
  const Graph g = test::random_dag(grng, {10, 0.3, 9, 9, true});
  const Problem problem(g, Platform::reference(3));
  const nn::GraphTensors gt =
      nn::make_graph_tensors(graph_features(g, problem.cost(), problem.analysis()), 64);
  nn::DualAgent agent(tiny_config());
  const nn::Prepared prep = agent.prepare(gt, true, false);
  nn::RolloutOptions o;
  o.mode = nn::ActionMode::sample;
  const auto batch = nn::sample_rollouts(problem, agent.config(), prep.nets, o, {1, 2, 3, 4, 5},
                                         /*simulate=*/true, 1);
  std::vector<double> costs;
  for (const auto& b : batch) costs.push_back(b.cost);
  const std::vector<double> adv = leave_one_out_advantages(costs, true);
  ASSERT_GT(std::abs(adv[0]) + std::abs(adv[1]), 0.1) << "precondition: costs differ";

  // Autograd gradient of the surrogate.
  const torch::Tensor loss = surrogate(agent, prep, batch, adv, 3);
  const std::vector<torch::Tensor> params{agent.plc->fc2->weight, agent.plc->fc1->weight,
                                          agent.plc->proj_y->weight};
  const auto grads = torch::autograd::grad({loss}, params, {}, true);

  // Central differences on the largest-gradient entry of each tensor.
  for (std::size_t i = 0; i < params.size(); ++i) {
    SCOPED_TRACE(i);
    const auto flat_g = grads[i].reshape({-1});
    const int64_t idx = flat_g.abs().argmax().item<int64_t>();
    const double g_auto = flat_g[idx].item<double>();
    ASSERT_GT(std::abs(g_auto), 1e-4) << "precondition: a measurable gradient";
    const double eps = 3e-3;
    const auto at = [&](double delta) {
      torch::NoGradGuard ng;
      auto w = params[i].view({-1});
      const float orig = w[idx].item<float>();
      w[idx].fill_(static_cast<double>(orig) + delta);
      const nn::Prepared p = agent.prepare(gt, false, false);
      const double l = surrogate(agent, p, batch, adv, 3).item<double>();
      w[idx].fill_(orig);  // exactly restored
      return l;
    };
    const double g_fd = (at(eps) - at(-eps)) / (2 * eps);
    EXPECT_NEAR(g_fd, g_auto, 0.03 * std::abs(g_auto) + 1e-4) << "finite difference vs autograd";
  }

  // One update of the trainer (plain PG, no entropy / self-imitation / clipping) on the same
  // batch: Adam's first step moves each PLC weight by lr against the sign of dL/dw.
  std::vector<torch::Tensor> before;
  for (const auto& p : params) before.push_back(p.detach().clone());
  detail::FusedAdam opt_sel(agent.sel->parameters(), 1e-3), opt_plc(agent.plc->parameters(), 1e-3);
  detail::UpdateSettings s;
  s.learn_sel = false;
  s.entropy = 0;
  s.self_imitation = 0;
  s.grad_clip = 1e30;  // no clipping in effect
  s.parallel = false;
  s.nodes = g.num_nodes();
  s.devices = 3;
  // A fresh forward pass (the perturbations above bumped the weights' versions); the weights
  // are the ones the batch was rolled out with.
  const nn::Prepared again = agent.prepare(gt, true, false);
  ASSERT_EQ(again.nets.node_pre, prep.nets.node_pre);
  const detail::UpdateStats st =
      detail::update_networks(agent, gt, again, opt_sel, opt_plc, batch, adv, {}, s);
  ASSERT_TRUE(st.ok);
  // The update's loss is the ratio form -sum_kt w_kt pi/pi_old (value -mean_k A_k at ratio 1,
  // the same gradient as the surrogate).
  double mean_adv = 0;
  for (double a : adv) mean_adv += a / static_cast<double>(adv.size());
  EXPECT_NEAR(st.loss_plc, -mean_adv, 1e-5);
  int checked = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto delta = (params[i].detach() - before[i]).reshape({-1});
    const auto gr = grads[i].reshape({-1});
    for (int64_t j = 0; j < gr.size(0); ++j) {
      const double gj = gr[j].item<double>();
      if (std::abs(gj) < 1e-5) continue;
      EXPECT_NEAR(delta[j].item<double>(), gj > 0 ? -1e-3 : 1e-3, 2e-5) << i << "," << j;
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

// ---------------------------------------------------------------------------------------------
// Training on toys with known answers.

// Two independent ops of 10 on two devices: apart 10, together 20. The second op's device is a
// two-armed bandit (the first op's is symmetric). Stage II with the standard preset (K = 16,
// leave-one-out advantages) learns to put it on the other device: late batches are almost all
// optimal, and the greedy policy is.
TEST(Estimator, StageTwoLearnsTheBetterArm) {
  const Graph g = test::ref_graph({{10, 0}, {10, 0}}, {});
  const Problem problem(g, Platform::reference(2));
  TrainConfig c = test::small_train_config(TrainStage::simulation, 16 * 25);
  c.lr = 3e-3;
  c.temperature = 1;  // sample from the policy itself: P(better arm) is the policy's
  c.seed = 2;
  DopplerTrainer trainer(problem, c);
  ASSERT_EQ(trainer.config().rollouts, 16);
  std::vector<double> means;
  const TrainResult r = trainer.train([&](const EpisodeStats& s) { means.push_back(s.makespan); });
  ASSERT_EQ(means.size(), 25u);
  // Untrained, the arms are roughly equally likely: the first batch's mean is well above 10.
  EXPECT_GT(means[0], 11.5);
  // P(better arm) = (20 - mean) / 10: at least 0.9 over the last five updates.
  const double late = (means[20] + means[21] + means[22] + means[23] + means[24]) / 5;
  EXPECT_LE(late, 11.0) << "P(better arm) >= 0.9";
  EXPECT_EQ(r.greedy_makespan, 10);
  EXPECT_EQ(r.best_makespan, 10);
}

// The smallest seeded random DAG (<= 9 ops, 2 devices) on which critical-path misses the optimum.
struct HardInstance {
  Graph g;
  double optimum = 0, cp = 0;
};

HardInstance hard_instance() {
  for (std::uint64_t seed = 1; seed < 200; ++seed) {
    std::mt19937_64 rng(seed);
    HardInstance h;
    h.g = test::random_dag(rng, {8, 0.3, 9, 9, true});
    const Problem p(h.g, Platform::reference(2));
    h.optimum =
        p.simulator().makespan(make_placer("exhaustive")->place(p, {}).assignment.device_of);
    h.cp = p.simulator().makespan(make_placer("critical-path")->place(p, {}).assignment.device_of);
    if (h.cp > 1.1 * h.optimum) return h;
  }
  ADD_FAILURE() << "no instance where critical-path misses the optimum by 10%";
  return {};
}

// Stage II starts from Stage I's imitation of critical-path; where that is not optimal, the
// policy-gradient stage finds strictly better placements (and none better than the optimum).
TEST(Estimator, StageTwoImprovesOnItsImitationStart) {
  const HardInstance h = hard_instance();
  ASSERT_GT(h.cp, h.optimum);
  const Problem problem(h.g, Platform::reference(2));
  TrainConfig il = test::small_train_config(TrainStage::imitation, 150);
  il.lr = 3e-3;
  il.seed = 4;
  DopplerTrainer trainer(problem, il);
  trainer.train();
  const double start = problem.simulator().makespan(trainer.greedy().device_of);
  ASSERT_GT(start, h.optimum) << "precondition: the imitation start is not optimal";
  TrainConfig sim = test::small_train_config(TrainStage::simulation, 320);
  sim.lr = 1e-3;
  sim.seed = 4;
  trainer.start_stage(sim);
  const TrainResult r = trainer.train();
  EXPECT_LT(r.best_makespan, start);
  EXPECT_GE(r.best_makespan, h.optimum);
  EXPECT_EQ(problem.simulator().makespan(r.best.device_of), r.best_makespan)
      << "the best assignment is the one scored";
}

}  // namespace
}  // namespace doppler
