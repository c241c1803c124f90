// Reference-model makespans computed by hand on tiny DAGs.
#include <gtest/gtest.h>

#include "support/builders.hpp"

#include "doppler/sim/simulator.hpp"

namespace doppler {
namespace {

using test::ref_graph;

Schedule run(const Graph& g, int p, std::vector<DeviceId> dev,
             DispatchRule rule = DispatchRule::fifo, std::vector<NodeId> order = {}) {
  const Simulator sim(g, Platform::reference(p));
  const Assignment a{p, std::move(dev), std::move(order), ""};
  const Schedule s = sim.simulate(a, rule);
  EXPECT_EQ(sim.makespan(a, rule), s.makespan) << "makespan() and simulate() agree";
  return s;
}

// a -> b -> c with C = (2, 3, 4), M = (5, 1, 0).
// On [0, 1, 0]: a 0-2, transfer 5: b 7-10, transfer 1: c 11-15. On one device: 9.
TEST(ReferenceHand, ChainAcrossDevices) {
  const Graph g = ref_graph({{2, 5}, {3, 1}, {4, 0}}, {{0, 1}, {1, 2}});
  const Schedule s = run(g, 2, {0, 1, 0});
  EXPECT_EQ(s.start, (std::vector<double>{0, 7, 11}));
  EXPECT_EQ(s.makespan, 15);
  EXPECT_EQ(run(g, 2, {1, 1, 1}).makespan, 9);
  EXPECT_EQ(s.cross_transfers, 2);
}

// a (3, 2) on 0, b (5, 1) on 1, c (1, 0) on 0 reads both: a local at 3, b arrives 5 + 1 = 6.
TEST(ReferenceHand, FanIn) {
  const Graph g = ref_graph({{3, 2}, {5, 1}, {1, 0}}, {{0, 2}, {1, 2}});
  const Schedule s = run(g, 2, {0, 1, 0});
  EXPECT_EQ(s.ready[2], 6);
  EXPECT_EQ(s.makespan, 7);
}

// a (2, 3) on device 0 feeds b, c, d (1 each) on device 1: every remote consumer receives a's
// output 3 after it finishes (links never contend), then device 1 runs them in id order.
TEST(ReferenceHand, FanOutWithRepeatedTransfers) {
  const Graph g = ref_graph({{2, 3}, {1, 0}, {1, 0}, {1, 0}}, {{0, 1}, {0, 2}, {0, 3}});
  const Schedule s = run(g, 2, {0, 1, 1, 1});
  EXPECT_EQ(s.start, (std::vector<double>{0, 5, 6, 7}));
  EXPECT_EQ(s.makespan, 8);
  // Fan-out to two devices: both get it at 5, in parallel.
  EXPECT_EQ(run(g, 3, {0, 1, 2, 1}).makespan, 7);
}

// Two sources on one device, ready at the same time: the lower id runs first.
TEST(ReferenceHand, TiesGoToTheLowerId) {
  const Graph g = ref_graph({{3, 0}, {1, 0}}, {});
  const Schedule s = run(g, 1, {0, 0});
  EXPECT_EQ(s.start, (std::vector<double>{0, 3}));
  EXPECT_EQ(s.makespan, 4);
}

// Device 0 runs A (5) from 0 to 5. B's input (from R on device 1: C 1, M 2) arrives at 3; C's
// input (from S on device 1: C 1 after R, M 1) arrives at 2 + 1 = 3... we make it arrive at 4:
// S costs 2 (runs 1-3), M 1 -> 4. Both wait for device 0; B became ready first (3 < 4) and runs
// first although C has the lower id.
TEST(ReferenceHand, OpWaitsForItsDeviceInReadyOrder) {
  // ids: 0 = C-op, 1 = A, 2 = B, 3 = R, 4 = S
  const Graph g = ref_graph({{1, 0}, {5, 0}, {1, 0}, {1, 2}, {2, 1}}, {{3, 2}, {4, 0}});
  const Schedule s = run(g, 2, {0, 0, 0, 1, 1});
  EXPECT_EQ(s.start[1], 0);  // A
  EXPECT_EQ(s.ready[2], 3);  // B: R finishes 1, +2
  EXPECT_EQ(s.ready[0], 4);  // C-op: S runs 1-3, +1
  EXPECT_EQ(s.start[2], 5);  // B first when the device frees
  EXPECT_EQ(s.start[0], 6);  // then C-op
  EXPECT_EQ(s.makespan, 7);
}

// Work conservation does not invent work: A on device 0 waits idle for its late input.
TEST(ReferenceHand, IdleWhileInputIsLate) {
  const Graph g = ref_graph({{1, 10}, {4, 0}}, {{0, 1}});
  const Schedule s = run(g, 2, {1, 0});
  EXPECT_EQ(s.start[1], 11);
  EXPECT_EQ(s.makespan, 15);
  EXPECT_EQ(s.busy[0], 4);
  EXPECT_DOUBLE_EQ(s.utilization(0), 4.0 / 15);
}

// With rule priority, the device follows the order instead of ready times.
TEST(ReferenceHand, PriorityOrderOverridesFifo) {
  const Graph g = ref_graph({{3, 0}, {1, 0}, {1, 0}}, {{0, 2}});
  // FIFO: 0 (0-3), 1 (3-4), 2 (4-5). Priority [1, 0, 2]: 1 (0-1), 0 (1-4), 2 (4-5).
  EXPECT_EQ(run(g, 1, {0, 0, 0}).start, (std::vector<double>{0, 3, 4}));
  EXPECT_EQ(run(g, 1, {0, 0, 0}, DispatchRule::priority, {1, 0, 2}).start,
            (std::vector<double>{1, 0, 4}));
}

// Zero-cost ops finishing at the same instant release their successors at that instant.
TEST(ReferenceHand, ZeroCostOpsAtOneInstant) {
  const Graph g = ref_graph({{0, 0}, {0, 0}, {2, 0}, {0, 0}}, {{0, 1}, {1, 2}, {0, 3}});
  const Schedule s = run(g, 1, {0, 0, 0, 0});
  EXPECT_EQ(s.makespan, 2);
  EXPECT_EQ(s.start[2], 0);
}

// Diamond on two devices: a (2,1) dev 0; b (3,2) dev 0; c (1,5) dev 1; d (4,0) dev 0.
// a 0-2; b 2-5; c gets a at 3, runs 3-4, d gets c at 9 -> 9-13.
TEST(ReferenceHand, DiamondSplit) {
  const Graph g = ref_graph({{2, 1}, {3, 2}, {1, 5}, {4, 0}}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const Schedule s = run(g, 2, {0, 0, 1, 0});
  EXPECT_EQ(s.start, (std::vector<double>{0, 2, 3, 9}));
  EXPECT_EQ(s.makespan, 13);
}

// Excluded ops (-1) vanish with their edges: a partial placement.
TEST(ReferenceHand, ExcludedOpsArePartialPlacements) {
  const Graph g = ref_graph({{2, 5}, {3, 1}, {4, 0}}, {{0, 1}, {1, 2}});
  const Simulator sim(g, Platform::reference(2));
  const std::vector<DeviceId> partial = {0, 1, -1};
  EXPECT_EQ(sim.makespan(partial), 10);
  const std::vector<DeviceId> only_last = {-1, -1, 1};
  EXPECT_EQ(sim.makespan(only_last), 4);
}

TEST(ReferenceHand, RejectsBadAssignments) {
  const Graph g = ref_graph({{1, 1}, {1, 1}}, {{0, 1}});
  const Simulator sim(g, Platform::reference(2));
  const std::vector<DeviceId> short_a = {0};
  const std::vector<DeviceId> bad_dev = {0, 2};
  EXPECT_THROW(sim.makespan(short_a), InputError);
  EXPECT_THROW(sim.makespan(bad_dev), InputError);
  EXPECT_THROW(Simulator(test::phys_graph({{1, 1}}, {}), Platform::reference(2)), InputError);
}

}  // namespace
}  // namespace doppler
