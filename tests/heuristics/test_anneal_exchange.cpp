// The parallel chains' meeting point (src/heuristics/anneal_exchange.hpp): the best offer is
// published, and so is the merge of the chains' changes since the last published assignment
// when it is better; a chain adopts what beats its own best.
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "heuristics/anneal_exchange.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/budget.hpp"
#include "doppler/heuristics/placer.hpp"

namespace doppler {
namespace {

using Devices = std::vector<DeviceId>;

// What one chain got back from a meeting: the published assignment and makespan, or nothing.
struct Got {
  bool adopted = false;
  Devices devices;
  double ms = 0;
};

// Two chains meet once through `x`, offering (a, a_ms) and (b, b_ms); what each got back.
std::pair<Got, Got> meet_once(detail::Exchange& x, const BudgetedEvaluator& clock, const Devices& a,
                              double a_ms, const Devices& b, double b_ms) {
  Got ga, gb;
  const auto meet = [&](int c, const Devices& offer, double ms, Got& got) {
    const Devices* p = x.meet(c, clock, offer, ms, got.ms);
    got.adopted = p != nullptr;
    if (p) got.devices = *p;
  };
  {
    std::jthread other([&] { meet(1, b, b_ms, gb); });
    meet(0, a, a_ms, ga);
  }
  return {ga, gb};
}

class AnnealExchange : public ::testing::Test {
protected:
  // The evaluator only times meetings here: any small problem does.
  std::mt19937_64 rng_{1};
  Graph g_ = test::random_dag(rng_, {4, 0.5, 10, 10, false});
  Problem problem_{g_, Platform::reference(3)};
  BudgetedEvaluator clock_{problem_.simulator(), {0, 100}};
  detail::MeetingPlan plan_{1, 0, true};
  std::vector<Devices> asked_;  // the merges the exchange evaluated
  // A merge evaluator that answers `ms` and records what it was asked.
  detail::MergeEvaluator answer(double ms) {
    return [this, ms](const Devices& d) {
      asked_.push_back(d);
      return ms;
    };
  }
};

TEST_F(AnnealExchange, TheMergeOfTheChainsChangesIsPublishedWhenItIsBetter) {
  detail::Exchange x(2, plan_, {0, 0, 0, 0}, 4.0, answer(2.0));
  // Chain 0 moved op 0 and op 1, chain 1 op 1 (against chain 0) and op 2: the better chain keeps
  // its op 1, the other's op 2 joins.
  const auto [a, b] = meet_once(x, clock_, {1, 2, 0, 0}, 3.0, {0, 1, 1, 0}, 3.5);
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0], (Devices{1, 2, 1, 0}));
  ASSERT_TRUE(a.adopted && b.adopted);
  EXPECT_EQ(a.devices, (Devices{1, 2, 1, 0}));
  EXPECT_EQ(b.devices, a.devices);
  EXPECT_EQ(a.ms, 2.0);
  EXPECT_EQ(x.merges(), 1);
  EXPECT_EQ(x.merges_published(), 1);

  // The next merge starts from the published assignment: only changes against it count (chain
  // 1 moved op 1 back, chain 0 moved op 3).
  const auto [c, d] = meet_once(x, clock_, {1, 2, 1, 2}, 1.5, {1, 0, 1, 0}, 1.8);
  ASSERT_EQ(asked_.size(), 2u);
  EXPECT_EQ(asked_[1], (Devices{1, 0, 1, 2}));
  EXPECT_FALSE(c.adopted);  // the merge (2.0) loses to chain 0's 1.5, published
  ASSERT_TRUE(d.adopted);
  EXPECT_EQ(d.devices, (Devices{1, 2, 1, 2}));
  EXPECT_EQ(d.ms, 1.5);
}

TEST_F(AnnealExchange, AWorseOrRefusedMergeLeavesTheBestOffer) {
  for (double merged_ms : {5.0, std::numeric_limits<double>::infinity()}) {
    asked_.clear();
    detail::Exchange x(2, plan_, {0, 0, 0, 0}, 4.0, answer(merged_ms));
    const auto [a, b] = meet_once(x, clock_, {0, 0, 0, 1}, 3.5, {2, 0, 0, 0}, 3.0);
    EXPECT_EQ(asked_.size(), 1u);
    EXPECT_FALSE(b.adopted);  // chain 1's own offer is the best
    ASSERT_TRUE(a.adopted);
    EXPECT_EQ(a.devices, (Devices{2, 0, 0, 0}));
    EXPECT_EQ(a.ms, 3.0);
    EXPECT_EQ(x.merges_published(), 0);
  }
}

TEST_F(AnnealExchange, NoMergeWithoutOtherChangesOrWithoutMergesLeft) {
  {  // chain 1 offers the start itself: the merge would be chain 0's offer
    detail::Exchange x(2, plan_, {0, 0, 0, 0}, 4.0, answer(1.0));
    meet_once(x, clock_, {1, 0, 0, 0}, 3.0, {0, 0, 0, 0}, 4.0);
    EXPECT_TRUE(asked_.empty());
    EXPECT_EQ(x.merges(), 0);
  }
  {  // a plan without merges (a call-budgeted run)
    detail::MeetingPlan calls_only = plan_;
    calls_only.merge = false;
    detail::Exchange x(2, calls_only, {0, 0, 0, 0}, 4.0, answer(1.0));
    const auto [a, b] = meet_once(x, clock_, {1, 0, 0, 0}, 3.0, {0, 0, 2, 0}, 3.5);
    EXPECT_TRUE(asked_.empty());
    EXPECT_FALSE(a.adopted);
    EXPECT_EQ(b.devices, (Devices{1, 0, 0, 0}));
  }
}

TEST(ParallelSearch, TimeBudgetedChainsThatMergeReportTheirAssignmentsMakespan) {
  // Under a time budget alone the chains meet on the clock too and merge; the result must
  // still be an assignment whose simulation gives the reported makespan, and no worse than the
  // start (the best list scheduler).
  std::mt19937_64 rng(21);
  const Graph g = test::random_dag(rng, {300, 0.02, 10, 12, true});
  const Problem problem(g, Platform::reference(4));
  for (const char* spec : {"local-search", "multilevel"}) {
    PlaceOptions o;
    o.budget = {0, 0.4};
    o.threads = 2;
    o.lanes = 1;
    const PlaceResult r = make_placer(spec)->place(problem, o);
    const double ms = problem.simulator().makespan(r.assignment.device_of);
    ASSERT_FALSE(r.curve.empty()) << spec;
    // No point of the curve (merges report theirs) claims less than was found.
    EXPECT_GE(r.curve.back().makespan, ms * (1 - 1e-12)) << spec;
    const PlaceResult etf = make_placer("etf")->place(problem, PlaceOptions{});
    EXPECT_LE(ms, problem.simulator().makespan(etf.assignment.device_of)) << spec;
  }
}

}  // namespace
}  // namespace doppler
