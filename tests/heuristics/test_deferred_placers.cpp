// Deferred placers (register_deferred_placers): listed before their code is loaded, loaded once
// by the first make_placer() of one, tried again when a load did not register them, and never in
// place of a placer registered with its code.
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/heuristics/deferred_placers.hpp"
#include "doppler/heuristics/simple_placers.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// Round-robin under another name: what a loader registers for a deferred name.
class Renamed : public Placer {
public:
  explicit Renamed(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override {
    PlaceResult r = RoundRobinPlacer().place_within(problem, options, eval);
    r.assignment.method = name_;
    return r;
  }

private:
  std::string name_;
};

PlacerInfo info_of(const std::string& name) {
  return {name, "round-robin under another name", {}, true, true};
}

void register_renamed(const std::string& name) {
  register_placer(info_of(name), [name](PlacerParams&) -> std::unique_ptr<Placer> {
    return std::make_unique<Renamed>(name);
  });
}

bool listed(const std::string& name) {
  for (const PlacerInfo& info : placer_infos())
    if (info.name == name) return true;
  return false;
}

TEST(DeferredPlacers, ListedAtOnceAndLoadedOnceByTheFirstMake) {
  int loads = 0;
  register_deferred_placers({info_of("deferred-a"), info_of("deferred-b")}, [&] {
    ++loads;
    register_renamed("deferred-a");
    register_renamed("deferred-b");
  });
  EXPECT_TRUE(listed("deferred-a"));
  EXPECT_TRUE(listed("deferred-b"));
  EXPECT_EQ(loads, 0);
  std::mt19937_64 rng(1);
  const Graph g = test::random_dag(rng, {3, 0.0, 10, 10, false});
  const Problem problem(g, Platform::reference(2));
  const Assignment a = make_placer("deferred-a")->place(problem, {}).assignment;
  EXPECT_EQ(a.method, "deferred-a");
  EXPECT_EQ(a.device_of, (std::vector<DeviceId>{0, 1, 0}));  // round-robin over ops 0, 1, 2
  make_placer("deferred-b");
  make_placer("deferred-a");
  EXPECT_EQ(loads, 1);
  // Its options are checked as any placer's.
  EXPECT_NE(test::error_of([] { make_placer("deferred-a:x=1"); }).find("unknown option 'x'"),
            std::string::npos);
}

TEST(DeferredPlacers, ALoadThatRegistersNothingIsAnErrorAndIsTriedAgain) {
  int loads = 0;
  register_deferred_placers({info_of("deferred-late")}, [&] {
    if (++loads == 2) register_renamed("deferred-late");
  });
  EXPECT_THROW(make_placer("deferred-late"), std::runtime_error);
  EXPECT_NO_THROW(make_placer("deferred-late"));
  EXPECT_EQ(loads, 2);
}

TEST(DeferredPlacers, APlacerRegisteredWithItsCodeIsKept) {
  int loads = 0;
  register_deferred_placers({info_of("round-robin")}, [&] { ++loads; });
  std::mt19937_64 rng(2);
  const Graph g = test::random_dag(rng, {2, 0.0, 10, 10, false});
  const Problem problem(g, Platform::reference(2));
  EXPECT_EQ(make_placer("round-robin")->place(problem, {}).assignment.method, "round-robin");
  EXPECT_EQ(loads, 0);
  for (const PlacerInfo& info : placer_infos())
    if (info.name == "round-robin") {
      EXPECT_FALSE(info.learned);
    }
}

}  // namespace
}  // namespace doppler
