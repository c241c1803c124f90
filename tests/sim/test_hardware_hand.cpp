// Hardware-model makespans computed by hand: link contention, sent-once transfers, shared PCIe
// host bridge, launch overhead, concurrent slots.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/builders.hpp"

#include "doppler/hardware/profile.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {
namespace {

using test::phys_graph;

// Devices at 1 FLOP/s (no overhead) and a topology whose links carry 1 byte/s with no latency,
// so times equal FLOPs and bytes.
HardwareProfile unit_profile(int devices, const std::string& topology, double overhead = 0,
                             int slots = 1, double copy_share = 0) {
  const std::string json = fmt::format(
      R"({{"format": "doppler-hardware", "version": 1, "name": "unit",
          "device": {{"peak_flops": {{"f32": 1}}, "efficiency": 1, "launch_overhead": {}, "slots": {},
                      "copy_share": {}}},
          "count": {}, "topology": {}}})",
      overhead, slots, copy_share, devices, topology);
  return parse_hardware_profile(json, "unit.json");
}

const char* kAllToAll = R"({"kind": "all-to-all", "link": {"bandwidth": 1, "latency": 0}})";

Schedule run(const Graph& g, const HardwareProfile& hw, std::vector<DeviceId> dev) {
  const int p = hw.num_devices();
  const Simulator sim(g, Platform::hardware(hw, p));
  const Assignment a{p, std::move(dev), {}, ""};
  const Schedule s = sim.simulate(a);
  EXPECT_EQ(sim.makespan(a), s.makespan);
  return s;
}

// a (2 FLOPs, 4 bytes) and b (2 FLOPs, 4 bytes) on device 0 run 0-2 and 2-4; their outputs go to
// c and d (1 FLOP each) on device 1 over the single link 0->1: a's transfer 2-6, b's must wait
// for the link: 6-10 (without contention it would be 4-8). c 6-7, d 10-11.
TEST(HardwareHand, LinkContentionIsFifo) {
  const Graph g = phys_graph({{2, 4}, {2, 4}, {1, 0}, {1, 0}}, {{0, 2}, {1, 3}});
  const Schedule s = run(g, unit_profile(2, kAllToAll), {0, 0, 1, 1});
  ASSERT_EQ(s.transfers.size(), 2u);
  EXPECT_EQ(s.transfers[0].start, 2);
  EXPECT_EQ(s.transfers[0].finish, 6);
  EXPECT_EQ(s.transfers[1].start, 6);
  EXPECT_EQ(s.transfers[1].finish, 10);
  EXPECT_EQ(s.start[3], 10);
  EXPECT_EQ(s.makespan, 11);
  EXPECT_EQ(s.cross_bytes, 8);
}

// One producer, two consumers on the same remote device: one transfer (1-4), not two.
TEST(HardwareHand, OneTransferPerDestinationDevice) {
  const Graph g = phys_graph({{1, 3}, {1, 0}, {1, 0}}, {{0, 1}, {0, 2}});
  const Schedule s = run(g, unit_profile(2, kAllToAll), {0, 1, 1});
  EXPECT_EQ(s.cross_transfers, 1);
  EXPECT_EQ(s.start[1], 4);
  EXPECT_EQ(s.start[2], 5);
  EXPECT_EQ(s.makespan, 6);
}

// Separate links per ordered pair: 0->1 and 0->2 proceed in parallel.
TEST(HardwareHand, DistinctLinksDoNotContend) {
  const Graph g = phys_graph({{1, 3}, {1, 0}, {1, 0}}, {{0, 1}, {0, 2}});
  const Schedule s = run(g, unit_profile(3, kAllToAll), {0, 1, 2});
  EXPECT_EQ(s.start[1], 4);
  EXPECT_EQ(s.start[2], 4);
  EXPECT_EQ(s.makespan, 5);
}

// PCIe tree {0,1} {2,3}: device links 2 B/s, switch links 2 B/s, host bridge 1 B/s, no latency.
// a (dev 0) -> c (dev 2) and b (dev 1) -> d (dev 3) both cross the shared host bridge: 4 bytes
// each at 1 B/s: 1-5 then 5-9. A same-switch transfer (0 -> 1) would take 2.
TEST(HardwareHand, PcieHostBridgeIsShared) {
  const char* tree = R"({"kind": "pcie-tree", "switches": [[0, 1], [2, 3]],
      "device_link": {"bandwidth": 2}, "switch_link": {"bandwidth": 2}, "host_bridge": {"bandwidth": 1}})";
  const HardwareProfile hw = unit_profile(4, tree);
  EXPECT_EQ(hw.route(0, 1).size(), 2u);
  EXPECT_EQ(hw.route(0, 2).size(), 5u);
  const Graph g = phys_graph({{1, 4}, {1, 4}, {1, 0}, {1, 0}}, {{0, 2}, {1, 3}});
  const Schedule s = run(g, hw, {0, 1, 2, 3});
  ASSERT_EQ(s.transfers.size(), 2u);
  EXPECT_EQ(s.transfers[0].finish, 5);
  EXPECT_EQ(s.transfers[1].start, 5);
  EXPECT_EQ(s.makespan, 10);
  const Schedule local = run(g, hw, {0, 1, 1, 0});
  EXPECT_EQ(local.makespan, 1 + 2 + 1);  // both transfers within the switch, separate links
}

// Compute = launch overhead + flops / (peak x efficiency); latency adds to each transfer.
TEST(HardwareHand, OverheadAndLatency) {
  const char* lat = R"({"kind": "all-to-all", "link": {"bandwidth": 2, "latency": 0.5}})";
  const Graph g = phys_graph({{4, 6}, {2, 0}}, {{0, 1}});
  const Schedule s = run(g, unit_profile(2, lat, 0.25), {0, 1});
  // a: 0.25 + 4 = 4.25; transfer 0.5 + 6 / 2 = 3.5 -> 7.75; b: 0.25 + 2 -> 10.
  EXPECT_DOUBLE_EQ(s.start[1], 7.75);
  EXPECT_DOUBLE_EQ(s.makespan, 10.0);
}

// A link's delay is pipelined: a (1 FLOP) and b (1 FLOP) on device 0 run 0-1 and 1-2, each
// sending 2 bytes to device 1 over a link of 1 B/s, latency 1 and delay 4. a's transfer occupies
// the link 1-4 and arrives at 8; b's waits for the link only (4-7) and arrives at 11, not after
// a's delay. c 8-9, d 11-12. With the delay counted as latency (occupying): b's transfer would
// start at 8 and arrive at 15.
TEST(HardwareHand, LinkDelayIsPipelined) {
  const char* delayed =
      R"({"kind": "all-to-all", "link": {"bandwidth": 1, "latency": 1, "delay": 4}})";
  const HardwareProfile hw = unit_profile(2, delayed);
  EXPECT_DOUBLE_EQ(hw.transfer_time(0, 1, 2), 7.0);  // uncontended: latency + delay + bytes / bw
  const Graph g = phys_graph({{1, 2}, {1, 2}, {1, 0}, {1, 0}}, {{0, 2}, {1, 3}});
  const Schedule s = run(g, hw, {0, 0, 1, 1});
  ASSERT_EQ(s.transfers.size(), 2u);
  EXPECT_DOUBLE_EQ(s.transfers[1].start, 4.0);
  EXPECT_DOUBLE_EQ(s.start[2], 8.0);
  EXPECT_DOUBLE_EQ(s.start[3], 11.0);
  EXPECT_DOUBLE_EQ(s.makespan, 12.0);
  const char* occupied = R"({"kind": "all-to-all", "link": {"bandwidth": 1, "latency": 5}})";
  EXPECT_DOUBLE_EQ(run(g, unit_profile(2, occupied), {0, 0, 1, 1}).makespan, 16.0);
}

// Copies on the destination's core (copy_share): a (2 FLOPs, 4 bytes) on device 0 runs 0-2 and
// sends 4 bytes to b (1 FLOP) on device 1, whose link is busy 2-6; c (10 FLOPs) runs on device 1
// from 0. Without charge: c 0-10, b 10-11. With copy_share 1 the copy sent at 2 takes 4 of c's
// time: c 0-14, b 14-15; with 0.5: c 0-12, b 12-13. The arrival (6) does not change.
TEST(HardwareHand, CopiesAreChargedToTheOpRunningOnTheDestination) {
  const Graph g = phys_graph({{2, 4}, {1, 0}, {10, 0}}, {{0, 1}});
  for (const auto& [share, c_end] : {std::pair{0.0, 10.0}, {1.0, 14.0}, {0.5, 12.0}}) {
    const Schedule s = run(g, unit_profile(2, kAllToAll, 0, 1, share), {0, 1, 1});
    ASSERT_EQ(s.transfers.size(), 1u);
    EXPECT_DOUBLE_EQ(s.transfers[0].finish, 6.0) << share;
    EXPECT_DOUBLE_EQ(s.finish[2], c_end) << share;
    EXPECT_DOUBLE_EQ(s.start[1], c_end) << share;
    EXPECT_DOUBLE_EQ(s.makespan, c_end + 1) << share;
    EXPECT_DOUBLE_EQ(s.busy[1], c_end + 1) << share;
  }
}

// A copy to an idle device takes nothing from any op: a 0-2, copy 2-6, b 6-7 whatever the share.
TEST(HardwareHand, CopiesToAnIdleDeviceCostOnlyTheirTransfer) {
  const Graph g = phys_graph({{2, 4}, {1, 0}}, {{0, 1}});
  EXPECT_DOUBLE_EQ(run(g, unit_profile(2, kAllToAll, 0, 1, 1.0), {0, 1}).makespan, 7.0);
}

// Copies sent while an op runs on for earlier copies are charged too. Device 0: a (2 FLOPs,
// 4 bytes) 0-2, e (9 FLOPs, 2 bytes) 2-11; device 1: c (10 FLOPs) from 0, b after a, f after e.
// a's copy (sent at 2, link 2-6) makes c run on to 14; e's copy (sent at 11, link 11-13) is sent
// while c still runs: c finishes at 16. b 16-17, f 17-18. Without charge: c 0-10, b 10-11,
// f 13-14.
TEST(HardwareHand, CopiesSentWhileAnOpRunsOnAreChargedToo) {
  const Graph g = phys_graph({{2, 4}, {1, 0}, {10, 0}, {9, 2}, {1, 0}}, {{0, 1}, {0, 3}, {3, 4}});
  const std::vector<DeviceId> dev = {0, 1, 1, 0, 1};
  const Schedule s = run(g, unit_profile(2, kAllToAll, 0, 1, 1.0), dev);
  EXPECT_DOUBLE_EQ(s.finish[2], 16.0);
  EXPECT_DOUBLE_EQ(s.start[1], 16.0);
  EXPECT_DOUBLE_EQ(s.start[4], 17.0);
  EXPECT_DOUBLE_EQ(s.makespan, 18.0);
  EXPECT_DOUBLE_EQ(run(g, unit_profile(2, kAllToAll), dev).makespan, 14.0);
}

// Contention 0.2 on 2 devices: a (10 FLOPs) on device 0 and b (5 FLOPs) on device 1 start at 0.
// b runs beside a all along: it owes 0.2 of its whole run, b = 5 + 0.2 b, so it ends at 6.25.
// a ran beside b for 6.25: a = 10 + 0.2 x 6.25 = 11.25. Alone on one device: 10 + 5 = 15.
TEST(HardwareHand, ContentionSlowsOpsForTheTimeOtherDevicesCompute) {
  const Graph g = phys_graph({{10, 0}, {5, 0}}, {});
  HardwareProfile hw = unit_profile(2, kAllToAll);
  for (DeviceSpec& d : hw.devices) d.contention = 0.2;
  const Schedule s = run(g, hw, {0, 1});
  EXPECT_NEAR(s.finish[1], 6.25, 1e-5);
  EXPECT_NEAR(s.finish[0], 11.25, 1e-5);
  EXPECT_NEAR(s.makespan, 11.25, 1e-5);
  EXPECT_NEAR(s.busy[0] + s.busy[1], 17.5, 1e-5);
  EXPECT_DOUBLE_EQ(run(g, hw, {0, 0}).makespan, 15.0);
  EXPECT_DOUBLE_EQ(run(g, unit_profile(2, kAllToAll), {0, 1}).makespan, 10.0);
}

// Contention counts the share of the other devices computing: on 3 devices with contention 0.5,
// a (12 FLOPs) on device 0 beside b (4 FLOPs) on device 1 (device 2 idle) runs beside half the
// others for b's run: b = 4 + 0.5 x 0.5 b, ends at 16/3; a = 12 + 0.25 x 16/3 = 40/3.
TEST(HardwareHand, ContentionIsWeightedByTheShareOfOtherDevicesComputing) {
  const Graph g = phys_graph({{12, 0}, {4, 0}}, {});
  HardwareProfile hw = unit_profile(3, kAllToAll);
  for (DeviceSpec& d : hw.devices) d.contention = 0.5;
  const Schedule s = run(g, hw, {0, 1});
  EXPECT_NEAR(s.finish[1], 16.0 / 3, 1e-5);
  EXPECT_NEAR(s.makespan, 40.0 / 3, 1e-5);
}

// Two slots per device: independent ops run at the same time.
TEST(HardwareHand, SlotsRunOpsConcurrently) {
  const Graph g = phys_graph({{3, 0}, {3, 0}, {3, 0}}, {});
  EXPECT_EQ(run(g, unit_profile(1, kAllToAll, 0, 2), {0, 0, 0}).makespan, 6);
  EXPECT_EQ(run(g, unit_profile(1, kAllToAll, 0, 1), {0, 0, 0}).makespan, 9);
}

// A ring of 4: 0 -> 2 takes two hops clockwise and shares link 1->2 with a 1 -> 2 transfer.
TEST(HardwareHand, RingRoutesShareHops) {
  const char* ring = R"({"kind": "ring", "link": {"bandwidth": 1}})";
  const HardwareProfile hw = unit_profile(4, ring);
  EXPECT_EQ(hw.route(0, 2).size(), 2u);
  EXPECT_EQ(hw.route(0, 3).size(), 1u);  // counter-clockwise is shorter
  const Graph g = phys_graph({{1, 2}, {1, 2}, {1, 0}, {1, 0}}, {{0, 2}, {1, 3}});
  // a (dev 0) -> c (dev 2): links 0->1, 1->2 from 1 to 3. b (dev 1) -> d (dev 2): link 1->2 busy
  // until 3, then 3-5.
  const Schedule s = run(g, hw, {0, 1, 2, 2});
  EXPECT_EQ(s.start[2], 3);
  EXPECT_EQ(s.start[3], 5);
  EXPECT_EQ(s.makespan, 6);
}

}  // namespace
}  // namespace doppler
