// validation_assignments(): every heuristic, no placement measured twice, and skewed random
// assignments whose device shares spread where uniformly random ones cluster at 1/P.
#include <algorithm>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/builders.hpp"

#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/validate/sim_to_real.hpp"

namespace doppler {
namespace {

// `width` independent chains of `length` equal ops, all joined by one last op.
Graph chains(int width, int length) {
  std::vector<test::PhysNode> nodes;
  std::vector<std::pair<int, int>> edges;
  for (int c = 0; c < width; ++c)
    for (int i = 0; i < length; ++i) {
      const int v = static_cast<int>(nodes.size());
      nodes.push_back({1e9, 4e6});
      if (i > 0) edges.emplace_back(v - 1, v);
    }
  const int sink = static_cast<int>(nodes.size());
  nodes.push_back({1e9, 4e6});
  for (int c = 0; c < width; ++c) edges.emplace_back(c * length + length - 1, sink);
  return test::phys_graph(nodes, edges);
}

double share_of_device0(const Assignment& a) {
  return static_cast<double>(std::count(a.device_of.begin(), a.device_of.end(), 0)) /
         static_cast<double>(a.device_of.size());
}

std::vector<std::string> split_names(const std::string& method) {
  std::vector<std::string> out;
  std::istringstream in(method);
  for (std::string s; std::getline(in, s, '=');) out.push_back(s);
  return out;
}

// Four chains on 4 devices: several list schedulers give the same placement. Each heuristic is
// still named once, no two cases share devices and order, and the count is as asked.
TEST(ValidationAssignments, EveryHeuristicOnceAndNoPlacementTwice) {
  const Graph g = chains(4, 3);
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 4));
  const auto cases = validation_assignments(problem, 30, 0, 200);
  ASSERT_EQ(cases.size(), 30u);
  std::multiset<std::string> names;
  for (const auto& c : cases)
    for (const auto& n : split_names(c.method)) names.insert(n);
  for (const char* h : {"critical-path", "heft", "etf", "m-topo", "m-etf", "round-robin",
                        "balanced", "enumopt", "local-search"})
    EXPECT_EQ(names.count(h), 1u) << h;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    cases[i].assignment.validate(g, 4);
    EXPECT_EQ(cases[i].assignment.order.size(), static_cast<std::size_t>(g.num_nodes()));
    for (std::size_t j = 0; j < i; ++j)
      EXPECT_FALSE(cases[i].assignment.device_of == cases[j].assignment.device_of &&
                   cases[i].assignment.order == cases[j].assignment.order)
          << cases[i].method << " repeats " << cases[j].method;
  }
}

// 400 ops on 2 devices: a uniformly random assignment puts 50% +- 2.5% (one sigma) of the ops on
// device 0; skewed ones, with a weight drawn per assignment, range far wider (their share is
// uniform on [0, 1]: 7 of them span 0.75 on average).
TEST(ValidationAssignments, SkewedRandomSharesSpreadWhereUniformOnesCluster) {
  const Graph g = chains(4, 100);
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 2));
  double skew_lo = 1, skew_hi = 0;
  int uniform = 0, skewed = 0;
  for (const auto& c : validation_assignments(problem, 30, 3, 100)) {
    const double s = share_of_device0(c.assignment);
    if (c.method.starts_with("random:")) {
      ++uniform;
      EXPECT_NEAR(s, 0.5, 0.1) << c.method;
    } else if (c.method.starts_with("random-skew:")) {
      ++skewed;
      skew_lo = std::min(skew_lo, s);
      skew_hi = std::max(skew_hi, s);
    }
  }
  EXPECT_GE(uniform, 6);
  EXPECT_GE(skewed, 6);
  EXPECT_GT(skew_hi - skew_lo, 0.4);
}

// One device has one placement per order: the random fillers all repeat it. The list still has
// `count` cases (duplicates let in after the retries) instead of drawing forever.
TEST(ValidationAssignments, FewDistinctPlacementsStillGiveTheCount) {
  const Graph g = chains(2, 2);
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 1));
  EXPECT_EQ(validation_assignments(problem, 12, 0, 50).size(), 12u);
}

}  // namespace
}  // namespace doppler
