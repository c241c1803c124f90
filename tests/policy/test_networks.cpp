// The SEL/PLC networks: masking, normalisation, the plain-C++ rollout agreeing with the batched
// torch recomputation, and path sums attached to the right nodes.
#include <algorithm>
#include <cmath>
#include <numeric>
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

// Hand computation (double precision) of one step's softmax terms over `scores`: the log-prob
// of `chosen`, the entropy and the log of the mass on `teacher` (all indices into `scores`).
struct HandTerms {
  double logp = 0, entropy = 0, teacher = 0;
};

HandTerms hand_terms(const std::vector<double>& scores, std::size_t chosen,
                     const std::vector<std::size_t>& teacher, double temperature) {
  double hi = -1e300;
  for (double s : scores) hi = std::max(hi, s / temperature);
  double z = 0;
  for (double s : scores) z += std::exp(s / temperature - hi);
  const double log_z = hi + std::log(z);
  HandTerms h;
  h.logp = scores[chosen] / temperature - log_z;
  double mass = 0;
  for (double s : scores) {
    const double lp = s / temperature - log_z;
    h.entropy -= std::exp(lp) * lp;
  }
  for (std::size_t i : teacher) mass += std::exp(scores[i] / temperature - log_z);
  h.teacher = std::log(mass);
  return h;
}

// SEL's hand terms of step `s`: softmax of the SEL scores over the step's candidates.
HandTerms hand_sel(const nn::EpisodeNets& nets, const nn::Step& s, double temperature) {
  std::vector<double> scores;
  std::size_t chosen = s.candidates.size();
  std::vector<std::size_t> teacher;
  for (std::size_t i = 0; i < s.candidates.size(); ++i) {
    const NodeId v = s.candidates[i];
    scores.push_back(nets.sel_score[static_cast<std::size_t>(v)]);
    if (v == s.op) chosen = i;
    if (std::find(s.teacher_ops.begin(), s.teacher_ops.end(), v) != s.teacher_ops.end())
      teacher.push_back(i);
  }
  EXPECT_LT(chosen, s.candidates.size()) << "the chosen op is a candidate";
  EXPECT_FALSE(teacher.empty());
  return hand_terms(scores, chosen, teacher, temperature);
}

// PLC's hand terms of every step of `ep`: nn::plc_scores from the step's recorded device
// features and the device sums rebuilt from the embeddings of the ops placed before it.
std::vector<HandTerms> hand_plc(const nn::EpisodeNets& nets, const nn::Episode& ep, int p,
                                double temperature) {
  const int hd = nets.hidden;
  std::vector<double> sums(static_cast<std::size_t>(p * hd), 0.0);
  std::vector<HandTerms> out;
  for (const nn::Step& s : ep.steps) {
    std::vector<float> ns;
    const auto sc = nn::plc_scores(nets, s.op, s.y, sums, p, &ns);
    EXPECT_EQ(ns.size(), s.ns.size());
    for (std::size_t i = 0; i < ns.size() && i < s.ns.size(); ++i)
      EXPECT_NEAR(ns[i], s.ns[i], 1e-4) << "recorded device sums";
    std::vector<std::size_t> teacher(s.teacher_devices.begin(), s.teacher_devices.end());
    EXPECT_FALSE(teacher.empty());
    out.push_back(hand_terms(std::vector<double>(sc.begin(), sc.end()),
                             static_cast<std::size_t>(s.device), teacher, temperature));
    for (int j = 0; j < hd; ++j)
      sums[static_cast<std::size_t>(s.device * hd + j)] +=
          nets.h[static_cast<std::size_t>(s.op * hd + j)];
  }
  return out;
}

void expect_terms(const nn::StepTerms& t, const std::vector<HandTerms>& want, double tol,
                  const char* what) {
  ASSERT_EQ(t.logp.size(0), static_cast<int64_t>(want.size())) << what;
  const auto logp = t.logp.to(torch::kDouble).contiguous();
  const auto ent = t.entropy.to(torch::kDouble).contiguous();
  const auto tea = t.teacher.to(torch::kDouble).contiguous();
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto k = static_cast<int64_t>(i);
    EXPECT_NEAR(logp[k].item<double>(), want[i].logp, tol) << what << " logp, step " << i;
    EXPECT_NEAR(ent[k].item<double>(), want[i].entropy, tol) << what << " entropy, step " << i;
    EXPECT_NEAR(tea[k].item<double>(), want[i].teacher, tol) << what << " teacher, step " << i;
  }
}

// sel_terms / plc_terms index the candidates, the chosen actions and the teacher's actions of
// every step: their log-probabilities, entropies and teacher log-masses equal a per-step hand
// computation from the plain network outputs (SEL scores, nn::plc_scores).
TEST(Networks, StepTermsEqualAHandComputationOverTheCandidates) {
  for (const std::uint64_t seed : {1, 2}) {
    torch::manual_seed(seed);
    Fixture f = make(seed + 2, 20, 3);
    nn::DualAgent agent(small_config());
    const nn::Prepared prep = agent.prepare(f.gt, true, false);
    std::mt19937_64 rng(5);
    nn::RolloutOptions o;
    o.mode = nn::ActionMode::sample;
    o.epsilon = 0.3;  // some off-policy actions, with low probability
    const nn::Episode ep = nn::rollout(*f.problem, agent.config(), prep.nets, o, rng);
    ASSERT_EQ(static_cast<int>(ep.steps.size()), f.g.num_nodes());
    std::vector<HandTerms> sel;
    bool several = false;
    for (const nn::Step& s : ep.steps) {
      sel.push_back(hand_sel(prep.nets, s, 1.0));
      several = several || s.candidates.size() >= 3;
    }
    ASSERT_TRUE(several) << "precondition: some steps choose among several candidates";
    expect_terms(agent.sel_terms(prep, ep, f.g.num_nodes()), sel, 1e-4, "sel");
    expect_terms(agent.plc_terms(prep, ep, 3), hand_plc(prep.nets, ep, 3, 1.0), 1e-4, "plc");
  }
}

// The batched overloads (the steps of several episodes at once, as the update uses them) equal
// the per-episode results concatenated: no step is attributed to another episode's state.
TEST(Networks, BatchedTermsAreThePerEpisodeTermsConcatenated) {
  torch::manual_seed(7);
  Fixture f = make(6, 18, 3);
  nn::DualAgent agent(small_config());
  const nn::Prepared prep = agent.prepare(f.gt, true, false);
  std::vector<nn::Episode> eps;
  for (int k = 0; k < 3; ++k) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(100 + k));
    nn::RolloutOptions o;
    o.mode = nn::ActionMode::sample;
    eps.push_back(nn::rollout(*f.problem, agent.config(), prep.nets, o, rng));
  }
  ASSERT_NE(eps[0].assignment.device_of, eps[1].assignment.device_of)
      << "precondition: the episodes differ";
  const std::vector<const nn::Episode*> ptrs{&eps[0], &eps[1], &eps[2]};
  for (const double temperature : {1.0, 0.7}) {
    SCOPED_TRACE(temperature);
    const nn::StepTerms sel = agent.sel_terms(prep, ptrs, f.g.num_nodes(), temperature);
    const nn::StepTerms plc = agent.plc_terms(prep, ptrs, 3, temperature);
    std::vector<HandTerms> want_sel, want_plc;
    for (const nn::Episode& ep : eps) {
      for (const nn::Step& s : ep.steps) want_sel.push_back(hand_sel(prep.nets, s, temperature));
      const auto p = hand_plc(prep.nets, ep, 3, temperature);
      want_plc.insert(want_plc.end(), p.begin(), p.end());
    }
    expect_terms(sel, want_sel, 1e-4, "batched sel");
    expect_terms(plc, want_plc, 1e-4, "batched plc");
    std::vector<torch::Tensor> s1, p1;
    for (const nn::Episode& ep : eps) {
      s1.push_back(agent.sel_terms(prep, ep, f.g.num_nodes(), temperature).logp);
      p1.push_back(agent.plc_terms(prep, ep, 3, temperature).logp);
    }
    EXPECT_TRUE(torch::allclose(sel.logp, torch::cat(s1), 1e-5, 1e-6));
    EXPECT_TRUE(torch::allclose(plc.logp, torch::cat(p1), 1e-5, 1e-6));
  }
}

// Temperature T divides the logits: the terms at T are those of softmax(scores / T), and a
// rollout at T records the probabilities of that distribution.
TEST(Networks, TemperatureDividesTheLogits) {
  torch::manual_seed(3);
  Fixture f = make(12, 16, 4);
  nn::DualAgent agent(small_config());
  const nn::Prepared prep = agent.prepare(f.gt, true, false);
  for (const double temperature : {0.5, 3.0}) {
    SCOPED_TRACE(temperature);
    std::mt19937_64 rng(9);
    nn::RolloutOptions o;
    o.mode = nn::ActionMode::sample;
    o.temperature = temperature;
    const nn::Episode ep = nn::rollout(*f.problem, agent.config(), prep.nets, o, rng);
    std::vector<HandTerms> sel;
    for (const nn::Step& s : ep.steps) sel.push_back(hand_sel(prep.nets, s, temperature));
    const auto plc = hand_plc(prep.nets, ep, 4, temperature);
    const nn::StepTerms ts = agent.sel_terms(prep, ep, f.g.num_nodes(), temperature);
    const nn::StepTerms tp = agent.plc_terms(prep, ep, 4, temperature);
    expect_terms(ts, sel, 1e-4, "sel");
    expect_terms(tp, plc, 1e-4, "plc");
    // The untempered terms differ (the test would not see a missing division).
    const nn::StepTerms t1 = agent.plc_terms(prep, ep, 4, 1.0);
    EXPECT_GT((t1.entropy - tp.entropy).abs().max().item<float>(), 1e-3);
    for (std::size_t i = 0; i < ep.steps.size(); ++i) {
      EXPECT_NEAR(std::exp(sel[i].logp), ep.steps[i].sel_prob, 1e-5) << "step " << i;
      EXPECT_NEAR(std::exp(plc[i].logp), ep.steps[i].plc_prob, 1e-5) << "step " << i;
      EXPECT_NEAR(ep.steps[i].plc_behaviour, ep.steps[i].plc_prob, 1e-6)
          << "no epsilon: the behaviour is the tempered policy";
    }
  }
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

// path_sums (Euler tour prefix sums) sums H over exactly v's b-path / t-path into row v (the
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
      for (int u : path_to_exit(feats, v)) want_b += h[u];
      for (int u : path_from_entry(feats, v)) want_t += h[u];
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

// Weights do not depend on the graph: a policy made for one graph runs on other graphs and
// device counts, and its greedy rollout there takes SEL's most probable candidate and PLC's most
// probable device (of the P devices that exist) at every step.
TEST(Networks, OnePolicyRunsGreedilyOnAnyGraphAndDeviceCount) {
  torch::manual_seed(2);
  nn::DualAgent agent(small_config());
  for (int devices : {1, 2, 7}) {
    SCOPED_TRACE(devices);
    Fixture f = make(static_cast<std::uint64_t>(devices), 10 + devices, devices);
    const nn::Prepared prep = agent.prepare(f.gt, false, false);
    std::mt19937_64 rng(0);
    nn::RolloutOptions o;
    o.record_plc_probs = true;  // greedy mode, epsilon 0
    const nn::Episode ep = nn::rollout(*f.problem, agent.config(), prep.nets, o, rng);
    ASSERT_EQ(static_cast<int>(ep.steps.size()), f.g.num_nodes());
    std::vector<int> placed(static_cast<std::size_t>(f.g.num_nodes()), 0);
    for (const nn::Step& s : ep.steps) {
      ASSERT_EQ(static_cast<int>(s.plc_probs.size()), devices);
      // The chosen device is a most probable one (idle devices tie up to BLAS rounding).
      const float best = *std::max_element(s.plc_probs.begin(), s.plc_probs.end());
      ASSERT_GE(s.device, 0);
      ASSERT_LT(s.device, devices);
      EXPECT_GE(s.plc_probs[static_cast<std::size_t>(s.device)], best * (1 - 1e-5f))
          << ::testing::PrintToString(s.plc_probs);
      EXPECT_NEAR(std::accumulate(s.plc_probs.begin(), s.plc_probs.end(), 0.0), 1.0, 1e-5);
      float top = -1e30f;
      for (NodeId v : s.candidates)
        top = std::max(top, prep.nets.sel_score[static_cast<std::size_t>(v)]);
      ASSERT_NE(std::find(s.candidates.begin(), s.candidates.end(), s.op), s.candidates.end());
      EXPECT_EQ(prep.nets.sel_score[static_cast<std::size_t>(s.op)], top)
          << "greedy SEL takes a best-scored candidate";
      EXPECT_EQ(ep.assignment.device_of[static_cast<std::size_t>(s.op)], s.device);
      ++placed[static_cast<std::size_t>(s.op)];
    }
    for (int c : placed) EXPECT_EQ(c, 1) << "every op is decided exactly once";
    for (DeviceId d : ep.assignment.device_of) {
      EXPECT_GE(d, 0);
      EXPECT_LT(d, devices);
    }
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
