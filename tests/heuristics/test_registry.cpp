// Every registered placer: valid assignments for 1 and 16 devices, determinism with a seed,
// spec parsing.
#include <random>

#include <gtest/gtest.h>

#include "support/sanitized.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

TEST(Registry, EveryPlacerIsValidForOneAndSixteenDevicesAndDeterministic) {
  std::mt19937_64 rng(9);
  const Graph g = test::random_dag(rng, {40, 0.1, 10, 10, true});
  const Graph tiny = test::random_dag(rng, {9, 0.3, 10, 10, true});
  for (const PlacerInfo& info : placer_infos()) {
    SCOPED_TRACE(info.name);
    const Graph& graph = info.name == "exhaustive" ? tiny : g;
    for (int p : {1, 16}) {
      if (info.name == "exhaustive" && p > 3) continue;
      const Problem problem(graph, Platform::reference(p));
      const auto placer = make_placer(info.name);
      const PlaceOptions opt{42, {3000, 0}};
      const Assignment a = placer->place(problem, opt).assignment;
      EXPECT_NO_THROW(a.validate(graph, p));
      EXPECT_EQ(a.method, info.name);
      if (p == 1) {
        for (DeviceId d : a.device_of) EXPECT_EQ(d, 0);
      }
      if (test::kSanitized && p > 1) continue;  // the same code again: half of ASan's 25 s
      const Assignment b = make_placer(info.name)->place(problem, opt).assignment;
      EXPECT_EQ(a.device_of, b.device_of) << "same seed, same result";
    }
  }
}

TEST(Registry, SpecsAndErrors) {
  EXPECT_EQ(make_placer("critical-path:ties=random")->name(), "critical-path");
  EXPECT_EQ(make_placer("m-etf:slack=0.2")->name(), "m-etf");
  const auto err = [](const std::string& spec) {
    try {
      make_placer(spec);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err("magic").substr(0, 41), "unknown method 'magic' (available: critic");
  EXPECT_EQ(err("heft:x=1"), "method heft: unknown option 'x' (accepted: none)");
  EXPECT_EQ(err("m-topo:slack=abc"), "method m-topo: option slack: expected a number, found 'abc'");
  EXPECT_EQ(err("critical-path:ties=max"),
            "method critical-path: option ties must be lowest or random, found 'max'");
  EXPECT_EQ(err("enumopt:limit"), "method enumopt: expected key=value options, found 'limit'");
  // Fractions (take_fraction): the option and its value named, 0 and 1 accepted.
  EXPECT_EQ(err("local-search:aim=2"),
            "method local-search: option aim must be in [0, 1], found '2'");
  EXPECT_EQ(err("multilevel:focus=-0.1"),
            "method multilevel: option focus must be in [0, 1], found '-0.1'");
  EXPECT_EQ(err("local-search:focus=x"),
            "method local-search: option focus: expected a number, found 'x'");
  EXPECT_EQ(make_placer("local-search:focus=1,aim=0")->name(), "local-search");
}

}  // namespace
}  // namespace doppler
