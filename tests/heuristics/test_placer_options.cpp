// The non-learned placers' declared options against their factories: every declared option is
// accepted at its default (a choice at every choice), the declared defaults are the factories'
// (a spec spelling them all places exactly as the bare name), a made-up option or one that only
// another method declares is refused by name, and options_text() is the listings' compact form.
#include <algorithm>
#include <map>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "support/placer_options.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

std::vector<PlacerInfo> non_learned() {
  std::vector<PlacerInfo> out;
  for (const PlacerInfo& info : placer_infos())
    if (!info.learned) out.push_back(info);
  return out;
}

// "name:k=v,..." with every option that has a fixed default at that default.
std::string all_defaults_spec(const PlacerInfo& info) {
  std::string spec = info.name;
  char sep = ':';
  for (const PlacerOption& o : info.options)
    if (has_fixed_default(o)) {
      spec += sep + o.name + "=" + o.default_value;
      sep = ',';
    }
  return spec;
}

TEST(PlacerOptions, DeclarationsAreWellFormed) {
  const std::vector<PlacerInfo> infos = non_learned();
  ASSERT_GE(infos.size(), 15u);
  for (const PlacerInfo& info : infos) test::expect_well_formed(info);
}

TEST(PlacerOptions, EveryDeclaredOptionIsAcceptedAtItsDefaultAndEveryChoice) {
  for (const PlacerInfo& info : non_learned()) {
    for (const PlacerOption& o : info.options) {
      const std::string spec = info.name + ":" + o.name + "=" + test::sample_value(o);
      EXPECT_EQ(test::error_of([&] { make_placer(spec); }), "") << spec;
      for (const std::string& c : o.choices)
        EXPECT_EQ(test::error_of([&] { make_placer(info.name + ":" + o.name + "=" + c); }), "")
            << info.name << " " << o.name << "=" << c;
    }
    EXPECT_EQ(test::error_of([&] { make_placer(all_defaults_spec(info)); }), "")
        << all_defaults_spec(info);
  }
}

// A spec giving every declared default places exactly as the bare name (same seed and budget):
// the declared defaults are the ones the factories use.
TEST(PlacerOptions, DeclaredDefaultsAreTheFactoriesDefaults) {
  std::mt19937_64 rng(11);
  const Graph tiny = test::random_dag(rng, {9, 0.3, 10, 10, true});
  const Graph g = test::random_dag(rng, {60, 0.1, 10, 10, true});
  const Problem small(tiny, Platform::reference(3)), large(g, Platform::reference(4));
  const PlaceOptions opt{5, {600, 0}};
  for (const PlacerInfo& info : non_learned()) {
    const std::string spec = all_defaults_spec(info);
    if (spec == info.name) continue;
    SCOPED_TRACE(spec);
    const bool exact = info.name == "exhaustive" || info.name == "optimal";
    const Problem& problem = exact ? small : large;
    const PlaceResult bare = make_placer(info.name)->place(problem, opt);
    const PlaceResult spelt = make_placer(spec)->place(problem, opt);
    EXPECT_EQ(bare.assignment.device_of, spelt.assignment.device_of);
    EXPECT_EQ(bare.spent.calls, spelt.spent.calls);
  }
}

TEST(PlacerOptions, AMadeUpOptionIsRefusedNamingItAndTheDeclaredOnes) {
  for (const PlacerInfo& info : non_learned()) {
    const std::string msg = test::error_of([&] { make_placer(info.name + ":no_such_option=1"); });
    const std::string accepted = info.options.empty() ? "none" : options_text(info);
    EXPECT_EQ(msg, "method " + info.name +
                       ": unknown option 'no_such_option' (accepted: " + accepted + ")");
  }
}

// Every option name some method declares, with a value for it, is refused by every method that
// does not declare it: no factory reads an option it does not declare.
TEST(PlacerOptions, OptionsOnlyOtherMethodsDeclareAreRefused) {
  const std::vector<PlacerInfo> infos = non_learned();
  std::map<std::string, std::string> every;  // name -> a value
  for (const PlacerInfo& info : infos)
    for (const PlacerOption& o : info.options) every.emplace(o.name, test::sample_value(o));
  for (const PlacerInfo& info : infos)
    for (const auto& [key, value] : every) {
      if (test::declares(info, key)) continue;
      const std::string spec = info.name + ":" + key + "=" + value;
      EXPECT_NE(test::error_of([&] { make_placer(spec); }).find("unknown option '" + key + "'"),
                std::string::npos)
          << spec;
    }
}

// Every option the registry's factories read (their take_* calls in the source) is declared: by
// the method the call names, or (take_string) by some method.
TEST(PlacerOptions, EveryOptionTheFactoriesReadIsDeclared) {
  std::map<std::string, PlacerInfo> by_name;
  for (const PlacerInfo& info : non_learned()) by_name.emplace(info.name, info);
  const auto reads = test::options_read(test::source_dir() / "src/heuristics/registry.cpp");
  ASSERT_GE(reads.size(), 15u) << "the factories' calls were not found";
  for (const test::OptionRead& r : reads) {
    SCOPED_TRACE(r.method + " " + r.key);
    if (!r.method.empty()) {
      ASSERT_EQ(by_name.count(r.method), 1u);
      EXPECT_TRUE(test::declares(by_name.at(r.method), r.key));
      continue;
    }
    EXPECT_TRUE(std::any_of(by_name.begin(), by_name.end(),
                            [&](const auto& e) { return test::declares(e.second, r.key); }));
  }
}

TEST(PlacerOptions, CompactTextIsTheListingsForm) {
  std::map<std::string, std::string> text;
  for (const PlacerInfo& info : non_learned()) text[info.name] = options_text(info);
  EXPECT_EQ(text["local-search"],
            "t0=0.03,polish=0.15,focus=0,aim=0,swaps=1,prefix=0,tiebreak=0,dsc=0,levels=0");
  EXPECT_EQ(text["critical-path"], "ties=lowest|random");
  EXPECT_EQ(text["dsc"], "merge=best|glb|lpt|eft|comm");
  EXPECT_EQ(text["multilevel"],
            "inner=local-search,coarse=0,cap=0.5,share=0.3,t0=0.005,cycles=1,"
            "focus=0,aim=0,swaps=1,prefix=0,tiebreak=0,tied=0,proxy=0");
  EXPECT_EQ(text["heft"], "");
  // Derived or absent defaults: "(derived)" kept, a choice lists its values, a path says PATH.
  using enum OptionType;
  const PlacerInfo made{"m",
                        "",
                        {{"calls", integer, "(budget)", "d"},
                         {"baseline", choice, "(preset)", "d", {"loo", "mean"}},
                         {"policy", path, "", "d"},
                         {"hidden", integer, "", "d"}},
                        true};
  EXPECT_EQ(options_text(made), "calls=(budget),baseline=loo|mean,policy=PATH,hidden");
  EXPECT_FALSE(has_fixed_default(made.options[0]));
  EXPECT_FALSE(has_fixed_default(made.options[2]));
  EXPECT_TRUE(has_fixed_default({"t0", number, "0.03", "d"}));
  EXPECT_EQ(option_type_name(number), "number");
  EXPECT_EQ(option_type_name(integer), "integer");
  EXPECT_EQ(option_type_name(choice), "choice");
  EXPECT_EQ(option_type_name(string), "string");
  EXPECT_EQ(option_type_name(path), "path");
}

}  // namespace
}  // namespace doppler
