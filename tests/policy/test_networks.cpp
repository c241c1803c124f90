// The SEL/PLC networks: masking, normalisation, the plain-C++ rollout agreeing with the batched
// torch recomputation, and path sums attached to the right nodes.
#include <random>

#include <gtest/gtest.h>

#include "policy/nn/agent.hpp"
#include "policy/nn/graph_tensors.hpp"
#include "policy/nn/rollout.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/features.hpp"

namespace doppler {
namespace {

PolicyConfig small_config() {
  PolicyConfig c;
  c.hidden = 16;
  c.edge_hidden = 8;
  c.steps = 2;
  c.mlp_hidden = 8;
  return c;
}

struct Fixture {
  Graph g;
  std::unique_ptr<Problem> problem;
  nn::GraphTensors gt;
};

Fixture make(std::uint64_t seed, int nodes, int devices) {
  std::mt19937_64 rng(seed);
  Fixture f;
  f.g = test::random_dag(rng, {nodes, 0.25, 9, 9, true});
  f.problem = std::make_unique<Problem>(f.g, Platform::reference(devices));
  const GraphFeatures feats = graph_features(f.g, f.problem->cost(), f.problem->analysis());
  f.gt = nn::make_graph_tensors(feats, 64);
  return f;
}

TEST(Networks, OnlyCandidatesGetProbabilityAndRowsSumToOne) {
  torch::manual_seed(1);
  Fixture f = make(3, 20, 3);
  nn::DualAgent agent(small_config());
  const nn::Prepared prep = agent.prepare(f.gt, true, false);
  std::mt19937_64 rng(5);
  nn::RolloutOptions o;
  o.mode = nn::ActionMode::sample;
  o.epsilon = 0.3;
  const nn::Episode ep = nn::rollout(*f.problem, agent.config(), prep.nets, o, rng);
  ASSERT_EQ(static_cast<int>(ep.steps.size()), f.g.num_nodes());
  EXPECT_NO_THROW(ep.assignment.validate(f.g, 3));
  // Recompute the full SEL distributions: zero outside the candidates, one in total.
  const auto t = static_cast<int64_t>(ep.steps.size());
  const auto n = f.g.num_nodes();
  const nn::StepTerms sel = agent.sel_terms(prep, ep, n);
  EXPECT_EQ(sel.logp.sizes(), torch::IntArrayRef({t}));
  auto mask = torch::zeros({t, n}, torch::kBool);
  for (int64_t i = 0; i < t; ++i)
    for (NodeId v : ep.steps[static_cast<std::size_t>(i)].candidates) mask[i][v] = true;
  const auto logits =
      prep.sel_scores.unsqueeze(0).expand({t, n}).masked_fill(mask.logical_not(), -INFINITY);
  const auto probs = torch::softmax(logits, 1);
  EXPECT_TRUE(torch::allclose(probs.sum(1), torch::ones({t})));
  EXPECT_EQ(probs.masked_select(mask.logical_not()).abs().sum().item<float>(), 0.0f);
  // Entropies are those of the masked distributions, and non-negative.
  EXPECT_TRUE((sel.entropy >= 0).all().item<bool>());
  const nn::StepTerms plc = agent.plc_terms(prep, ep, 3);
  EXPECT_EQ(plc.logp.sizes(), torch::IntArrayRef({t}));
  EXPECT_TRUE((plc.logp <= 0).all().item<bool>());
  EXPECT_TRUE((plc.entropy <= std::log(3.0) + 1e-5).all().item<bool>());
}

// The rollout computes probabilities step by step in plain C++; the trainer recomputes them in
// one batch with torch. They must agree, or the gradient would follow other actions' odds.
TEST(Networks, RolloutProbabilitiesMatchTheBatchedRecomputation) {
  for (std::uint64_t seed : {1, 2, 3}) {
    torch::manual_seed(seed);
    Fixture f = make(seed, 25, 4);
    nn::DualAgent agent(small_config());
    const nn::Prepared prep = agent.prepare(f.gt, true, true);
    std::mt19937_64 rng(seed);
    nn::RolloutOptions o;
    o.mode = nn::ActionMode::sample;
    const nn::Episode ep = nn::rollout(*f.problem, agent.config(), prep.nets, o, rng);
    const auto sel = agent.sel_terms(prep, ep, f.g.num_nodes()).logp.exp();
    const auto plc = agent.plc_terms(prep, ep, 4).logp.exp();
    for (std::size_t i = 0; i < ep.steps.size(); ++i) {
      EXPECT_NEAR(sel[static_cast<int64_t>(i)].item<float>(), ep.steps[i].sel_prob, 2e-5)
          << "step " << i;
      EXPECT_NEAR(plc[static_cast<int64_t>(i)].item<float>(), ep.steps[i].plc_prob, 2e-5)
          << "step " << i;
    }
  }
}

// path_sums (Euler tour prefix sums) sums H over exactly b_path[v] / t_path[v] into row v (the
// reference attaches these sums to the wrong rows), checked against the explicit path lists.
TEST(Networks, PathSumsAreAttachedToTheirOwnNodes) {
  for (const int seed : {9, 10, 11}) {
    Fixture f = make(seed, 60, 2);
    const GraphFeatures feats = graph_features(f.g, f.problem->cost(), f.problem->analysis());
    const auto h = torch::randn({f.g.num_nodes(), 4});
    const auto b = nn::path_sums(h, f.gt.b_tour);
    const auto t = nn::path_sums(h, f.gt.t_tour);
    for (NodeId v = 0; v < f.g.num_nodes(); ++v) {
      auto want_b = torch::zeros({4}), want_t = torch::zeros({4});
      for (int u : feats.b_path[static_cast<std::size_t>(v)]) want_b += h[u];
      for (int u : feats.t_path[static_cast<std::size_t>(v)]) want_t += h[u];
      EXPECT_TRUE(torch::allclose(b[v], want_b, 1e-5, 1e-6)) << v;
      EXPECT_TRUE(torch::allclose(t[v], want_t, 1e-5, 1e-6)) << v;
    }
  }
}

TEST(Networks, EdgeLevelsAreExactOrQuantised) {
  Fixture f = make(4, 30, 2);
  EXPECT_FALSE(f.gt.quantized);
  const GraphFeatures feats = graph_features(f.g, f.problem->cost(), f.problem->analysis());
  const nn::GraphTensors q = nn::make_graph_tensors(feats, 3);
  EXPECT_TRUE(q.quantized);
  EXPECT_EQ(q.level_values.size(0), 3);
  EXPECT_EQ(q.level_begin.back(), static_cast<int64_t>(feats.edge.size()));
}

// Weights do not depend on the graph: a policy made for one graph runs on another graph and
// another device count.
TEST(Networks, OnePolicyRunsOnAnyGraphAndDeviceCount) {
  torch::manual_seed(2);
  nn::DualAgent agent(small_config());
  for (int devices : {1, 2, 7}) {
    Fixture f = make(static_cast<std::uint64_t>(devices), 10 + devices, devices);
    const nn::Prepared prep = agent.prepare(f.gt, false, false);
    std::mt19937_64 rng(0);
    const nn::Episode ep = nn::rollout(*f.problem, agent.config(), prep.nets, {}, rng);
    EXPECT_NO_THROW(ep.assignment.validate(f.g, devices));
  }
}

}  // namespace
}  // namespace doppler

namespace doppler {
namespace {

// The joint variant: one distribution over (candidate, device) pairs per step; the rollout and
// the batched recomputation agree, and only existing pairs get probability.
TEST(Networks, JointVariantPairsAreConsistent) {
  torch::manual_seed(4);
  Fixture f = make(8, 20, 3);
  PolicyConfig c = small_config();
  c.variant = PolicyVariant::joint;
  nn::DualAgent agent(c);
  ASSERT_TRUE(agent.joint());
  ASSERT_FALSE(agent.learns_sel());
  const nn::Prepared prep = agent.prepare(f.gt, true, false);
  std::mt19937_64 rng(3);
  nn::RolloutOptions o;
  o.mode = nn::ActionMode::sample;
  o.learned_sel = false;
  o.joint = true;
  const nn::Episode ep = nn::rollout(*f.problem, c, prep.nets, o, rng);
  EXPECT_NO_THROW(ep.assignment.validate(f.g, 3));
  const nn::StepTerms t = agent.joint_terms(prep, ep, 3);
  ASSERT_EQ(t.logp.size(0), static_cast<int64_t>(ep.steps.size()));
  for (std::size_t i = 0; i < ep.steps.size(); ++i) {
    const nn::Step& s = ep.steps[i];
    EXPECT_NEAR(t.logp[static_cast<int64_t>(i)].exp().item<float>(), s.sel_prob, 2e-5);
    EXPECT_EQ(s.candidates[static_cast<std::size_t>(s.joint_index / 3)], s.op);
    EXPECT_EQ(s.joint_index % 3, s.device);
    EXPECT_LE(t.entropy[static_cast<int64_t>(i)].item<float>(),
              std::log(3.0 * static_cast<double>(s.candidates.size())) + 1e-4);
    EXPECT_LE(t.teacher[static_cast<int64_t>(i)].item<float>(), 1e-6);  // a log-probability mass
  }
}

}  // namespace
}  // namespace doppler
