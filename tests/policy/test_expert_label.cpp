// DAgger labels from a best-known assignment (policy/nn/expert_label.hpp): a label that is a device
// permutation of the rollout's own choices labels every step with the device the rollout chose
// (zero imitation loss at the optimum) while the unrelabelled label does not, and SEL's labels
// follow the start order of the label's simulated schedule (hand-computed).
#include <algorithm>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "policy/nn/agent.hpp"
#include "policy/nn/expert_label.hpp"
#include "policy/nn/graph_tensors.hpp"
#include "policy/nn/rollout.hpp"
#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/profile.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler::nn {
namespace {

TEST(ExpertLabel, RelabellingFollowsAPermutationAndFreshGroupsGoToUnusedDevices) {
  const int p = 4;
  Relabelling r(p);
  // Label device 1 first: every device is unused, so any of them is right.
  EXPECT_EQ(r.targets(1), (std::vector<DeviceId>{0, 1, 2, 3}));
  r.record(1, 0);
  EXPECT_EQ(r.targets(1), (std::vector<DeviceId>{0}));
  EXPECT_EQ(r.targets(3), (std::vector<DeviceId>{1, 2, 3}));  // fresh group: unused devices
  r.record(3, 1);
  r.record(3, 1);
  r.record(1, 2);  // one op of group 1 strays to device 2: group 1 still matches device 0
  EXPECT_EQ(r.targets(1), (std::vector<DeviceId>{0}));
  EXPECT_EQ(r.targets(3), (std::vector<DeviceId>{1}));
  EXPECT_EQ(r.targets(0), (std::vector<DeviceId>{3}));  // the one unused device
}

// A random 24-op problem on 3 devices and a tiny policy.
struct RolloutFixture : ::testing::Test {
  std::mt19937_64 rng{11};
  Graph g = test::random_dag(rng, {24, 0.2, 10, 10, true});
  Problem problem{g, Platform::reference(3)};
  PolicyConfig cfg = [] {
    PolicyConfig c;
    c.hidden = 8;
    c.edge_hidden = 4;
    c.steps = 1;
    c.mlp_hidden = 8;
    return c;
  }();
  DualAgent agent{cfg};

  Episode run(const ExpertLabel* expert, std::uint64_t seed) {
    torch::NoGradGuard no_grad;
    const Prepared prep = agent.prepare(problem_tensors(problem, cfg), false, false);
    RolloutOptions o;
    o.mode = ActionMode::sample;
    o.expert = expert;
    std::mt19937_64 r(seed);
    return rollout(problem, cfg, prep.nets, o, r);
  }
};

TEST_F(RolloutFixture, APermutedLabelOfTheRolloutsOwnChoicesLabelsEveryChoice) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const Episode own = run(nullptr, seed);
    const std::vector<DeviceId> pi = {1, 2, 0};
    std::vector<DeviceId> label(own.assignment.device_of.size());
    for (std::size_t v = 0; v < label.size(); ++v)
      label[v] = pi[static_cast<std::size_t>(own.assignment.device_of[v])];
    ExpertLabel e = make_expert_label(problem, label);
    ASSERT_TRUE(e.relabel);
    const Episode ep = run(&e, seed);
    ASSERT_EQ(ep.assignment.device_of, own.assignment.device_of) << "labels changed the actions";
    for (const Step& st : ep.steps) {
      ASSERT_FALSE(st.teacher_devices.empty());
      EXPECT_NE(std::find(st.teacher_devices.begin(), st.teacher_devices.end(), st.device),
                st.teacher_devices.end())
          << "op " << st.op;
    }
    // Without relabelling the permuted label disagrees with the choices.
    e.relabel = false;
    int agree = 0;
    for (const Step& st : run(&e, seed).steps)
      agree += st.teacher_devices == std::vector<DeviceId>{st.device} ? 1 : 0;
    EXPECT_LT(agree, static_cast<int>(ep.steps.size()));
  }
}

TEST(ExpertLabel, SelectionFollowsTheLabelsStartOrder) {
  // a -> b, a -> c, b -> d, c -> d, and e alone; every transfer costs 1.
  GraphBuilder b;
  for (double c : {2.0, 3.0, 1.0, 1.0, 4.0}) {
    Node nd;
    nd.compute_cost = c;
    nd.transfer_cost = 1;
    nd.kind = OpKind::einsum;
    b.add_node(nd);
  }
  b.add_edge(0, 1);
  b.add_edge(0, 2);
  b.add_edge(1, 3);
  b.add_edge(2, 3);
  const Graph g = b.build();
  const Problem problem(g, Platform::reference(2));
  // Device 0: a [0, 2], b [2, 5], d waits for c's output (5 + 1): [6, 7].
  // Device 1: e [0, 4]; c's input arrives at 3, the device is free at 4: [4, 5].
  const ExpertLabel e = make_expert_label(problem, {0, 0, 1, 0, 1});
  EXPECT_EQ(e.start, (std::vector<double>{0, 2, 4, 6, 0}));
  EXPECT_EQ(expert_selections(e, {0, 4}), (std::vector<NodeId>{0, 4}));  // tie at 0
  EXPECT_EQ(expert_selections(e, {1, 2, 4}), (std::vector<NodeId>{4}));
  EXPECT_EQ(expert_selections(e, {1, 2}), (std::vector<NodeId>{1}));
  EXPECT_EQ(expert_selections(e, {2}), (std::vector<NodeId>{2}));
}

TEST(ExpertLabel, DevicesAreInterchangeableOnlyOnUniformPlatforms) {
  std::mt19937_64 rng(2);
  const Graph g = test::random_dag(rng, {8, 0.3, 10, 10, true});
  EXPECT_TRUE(devices_interchangeable(Problem(g, Platform::reference(4))));
}

}  // namespace
}  // namespace doppler::nn
