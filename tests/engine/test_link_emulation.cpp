// Link emulation: every copy lasts at least latency + bytes / bandwidth (or the profile's route
// time), and the label says so; without it the label is "off".
#include <random>

#include <gtest/gtest.h>

#include "engine_support.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/hardware/shipped.hpp"

namespace doppler {
namespace {

TEST(EngineLinkEmulation, CopiesLastAtLeastTheEmulatedTime) {
  const Graph g = test::small_workloads(2)[1].graph;  // ffnn
  EngineOptions o;
  o.devices = 2;
  o.link = LinkEmulation::from(2e8, 50e-6, "");
  Engine e(g, o);
  EXPECT_NE(e.describe().find("5e-05 s latency"), std::string::npos) << e.describe();
  std::mt19937_64 rng(21);
  const EngineResult r = e.run(test::random_assignment(g, 2, rng));
  ASSERT_GT(r.copies, 0);
  for (const auto& t : r.schedule.transfers)
    EXPECT_GE(t.finish - t.start, 50e-6 + t.bytes / 2e8) << "copy of " << t.src;
}

TEST(EngineLinkEmulation, ProfileRoutesSetTheLeastCopyTime) {
  const LinkEmulation link = LinkEmulation::from(0, 0, "p100");
  const HardwareProfile p = load_hardware_profile("p100");
  EXPECT_TRUE(link.enabled());
  EXPECT_DOUBLE_EQ(link.min_seconds(0, 3, 1e6), p.transfer_time(0, 3, 1e6));
  EXPECT_DOUBLE_EQ(link.min_seconds(2, 2, 1e6), 0);
  EXPECT_NE(link.label().find("4xP100-PCIe"), std::string::npos);
  const Graph g = test::small_workloads(4)[0].graph;
  EngineOptions o;
  o.devices = 4;
  o.link = link;
  Engine e(g, o);
  std::mt19937_64 rng(22);
  for (const auto& t : e.run(test::random_assignment(g, 4, rng)).schedule.transfers)
    EXPECT_GE(t.finish - t.start, p.transfer_time(t.from, t.to, t.bytes));
}

TEST(EngineLinkEmulation, OffByDefault) {
  EXPECT_FALSE(LinkEmulation{}.enabled());
  EXPECT_EQ(LinkEmulation{}.label(), "off");
  EXPECT_DOUBLE_EQ(LinkEmulation::from(1e9, 0, "").min_seconds(0, 1, 1e9), 1.0);
}

}  // namespace
}  // namespace doppler
