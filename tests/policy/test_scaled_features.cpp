// The scale-aware features (FeatureMode::scaled): multiplying every cost of a graph by a
// constant leaves the policy's action probabilities unchanged, changing the transfer/compute
// ratio changes them, and the global features take their defining values.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "policy/nn/agent.hpp"
#include "policy/nn/graph_tensors.hpp"
#include "policy/nn/rollout.hpp"
#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/features.hpp"

namespace doppler {
namespace {

PolicyConfig scaled_config() {
  PolicyConfig c;
  c.hidden = 16;
  c.edge_hidden = 8;
  c.steps = 2;
  c.mlp_hidden = 16;
  c.features = FeatureMode::scaled;
  return c;
}

// `g` with every compute cost times `cs` and every transfer cost times `ts`.
Graph scaled_copy(const Graph& g, double cs, double ts) {
  GraphBuilder b;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    Node n = g.node(v);
    n.compute_cost = *n.compute_cost * cs;
    n.transfer_cost = *n.transfer_cost * ts;
    b.add_node(n);
  }
  for (EdgeId k = 0; k < g.num_edges(); ++k) b.add_edge(g.edge(k).src, g.edge(k).dst);
  return b.build();
}

// The SEL probability of the chosen op and PLC's distribution at every step of the greedy
// rollout of a fixed network on `g` (P devices), flattened.
std::vector<double> greedy_probabilities(nn::DualAgent& agent, const Graph& g, int p) {
  const Problem problem(g, Platform::reference(p));
  const PolicyConfig& c = agent.config();
  const auto gt = nn::problem_tensors(problem, c);
  torch::NoGradGuard no_grad;
  const nn::Prepared prep = agent.prepare(gt, false, false);
  nn::RolloutOptions o;
  o.mode = nn::ActionMode::greedy;
  o.record_plc_probs = true;
  o.teacher = false;
  std::mt19937_64 rng(0);
  const nn::Episode ep = nn::rollout(problem, c, prep.nets, o, rng);
  std::vector<double> out;
  for (const nn::Step& s : ep.steps) {
    out.push_back(s.sel_prob);
    out.insert(out.end(), s.plc_probs.begin(), s.plc_probs.end());
  }
  return out;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

struct ScaledFixture : ::testing::Test {
  void SetUp() override {
    torch::manual_seed(3);
    agent = std::make_unique<nn::DualAgent>(scaled_config());
    std::mt19937_64 rng(11);
    g = test::random_dag(rng, {30, 0.2, 20, 20, true});
  }
  std::unique_ptr<nn::DualAgent> agent;
  Graph g;
};

TEST_F(ScaledFixture, MultiplyingEveryCostLeavesTheProbabilitiesUnchanged) {
  const auto base = greedy_probabilities(*agent, g, 4);
  ASSERT_GT(base.size(), 30u);
  for (double k : {1e-6, 1e3, 1e9}) {
    const auto scaled = greedy_probabilities(*agent, scaled_copy(g, k, k), 4);
    EXPECT_LT(max_abs_diff(base, scaled), 1e-4) << "cost scale " << k;
  }
}

TEST_F(ScaledFixture, ChangingTheTransferComputeRatioChangesThem) {
  const auto base = greedy_probabilities(*agent, g, 4);
  const auto heavier = greedy_probabilities(*agent, scaled_copy(g, 1, 10), 4);
  EXPECT_GT(max_abs_diff(base, heavier), 1e-2);
}

TEST_F(ScaledFixture, TheZscoreModeIsBlindToTheRatioOfNodeFeatures) {
  // The paper's per-column z-scores give identical node features for both ratios: the reason
  // the scaled mode exists.
  const Graph h = scaled_copy(g, 1, 10);
  const Problem a(g, Platform::reference(4)), b(h, Platform::reference(4));
  const auto fa = graph_features(g, a.cost(), a.analysis());
  const auto fb = graph_features(h, b.cost(), b.analysis());
  for (std::size_t i = 0; i < fa.node.size(); i += kNodeFeatures) {  // compute column
    EXPECT_NEAR(fa.node[i], fb.node[i], 1e-4);
  }
  for (std::size_t i = 0; i < fa.edge.size(); ++i) EXPECT_NEAR(fa.edge[i], fb.edge[i], 1e-4);
  const auto sa = graph_features(g, a.cost(), a.analysis(), 4, FeatureMode::scaled);
  const auto sb = graph_features(h, b.cost(), b.analysis(), 4, FeatureMode::scaled);
  EXPECT_NEAR(sb.node[kNodeFeatures] - sa.node[kNodeFeatures], std::log(10.0), 1e-4);
}

TEST(GlobalFeatures, TakeTheirDefiningValuesOnAHandBuiltGraph) {
  // a -> b, a -> c: compute 2, 4, 6 (mean 4); transfers a's output 8 on both edges (mean 8).
  GraphBuilder gb;
  for (double c : {2.0, 4.0, 6.0}) {
    Node n;
    n.compute_cost = c;
    n.transfer_cost = 8;
    gb.add_node(n);
  }
  gb.add_edge(0, 1);
  gb.add_edge(0, 2);
  const Graph g = gb.build();
  const Problem p(g, Platform::reference(2));
  EXPECT_DOUBLE_EQ(feature_unit(g, p.cost()), 4.0);
  const auto gf = global_features(g, p.cost(), p.analysis(), 2);
  ASSERT_EQ(gf.size(), 4u);
  EXPECT_NEAR(gf[0], std::log(8.0 / 4.0), 1e-6);                   // transfer / compute
  EXPECT_NEAR(gf[1], 1.0 / 4.0, 1e-6);                             // log2(2) / 4
  EXPECT_NEAR(gf[2], std::log((2.0 + 8 + 6) / (12.0 / 2)), 1e-6);  // CP / (W / P)
  EXPECT_NEAR(gf[3], std::log10(3.0) / 4, 1e-6);
}

TEST(ScaledDeviceFeatures, GapsToTheBestDeviceInMeanOpUnits) {
  // Raw features of 2 devices; unit 2: the second half is log1p((x - min) / 2).
  std::vector<float> y = {0, 1, 2, 3, 4, 4, 1, 2, 7, 10};
  normalise_device_features(y, 2, FeatureMode::scaled, 2.0);
  ASSERT_EQ(y.size(), 20u);
  EXPECT_NEAR(y[5], 0.0, 1e-6);               // device 0, column 0: the minimum
  EXPECT_NEAR(y[15], std::log1p(2.0), 1e-6);  // device 1, column 0: (4 - 0) / 2
  EXPECT_NEAR(y[18], std::log1p(2.0), 1e-6);  // device 1, column 3: (7 - 3) / 2
  EXPECT_NEAR(y[19], std::log1p(3.0), 1e-6);  // device 1, column 4: (10 - 4) / 2
  EXPECT_NEAR(y[0], -1.0, 1e-5);              // z-scored half: (0 - 2) / 2
}

}  // namespace
}  // namespace doppler
