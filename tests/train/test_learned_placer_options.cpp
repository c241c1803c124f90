// The learned placers' declared options against their factories, cheaply (making a placer trains
// and loads nothing; the shipped policy is stood in for by an empty file): every declared option
// other than a path is accepted at its default or a value of its type (doppler-search's training
// options with train > 0), a choice at every choice; a made-up option, or one that only other
// methods declare, is refused by name.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/placer_options.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/train/learned_infos.hpp"
#include "doppler/train/learned_placers.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// doppler-search's own options; its others are training options, accepted with train > 0 only.
const std::set<std::string> kSearchOwn = {"policy", "train",  "mix",     "focus",
                                          "aim",    "swaps",  "prefix",  "tiebreak",
                                          "dsc",    "levels", "samples", "temperature"};

// Options a factory accepts although they change nothing for that method, left undeclared:
// doppler-search's train= and mix= (and doppler-sys's repeat=) in the other trained methods,
// gdp's architecture in placeto.
const std::map<std::string, std::set<std::string>> kWithoutEffect = {
    {"doppler-il", {"train", "mix", "repeat"}},    {"doppler-sim", {"train", "mix", "repeat"}},
    {"doppler-sel", {"train", "mix", "repeat"}},   {"doppler-plc", {"train", "mix", "repeat"}},
    {"doppler-joint", {"train", "mix", "repeat"}}, {"doppler-sys", {"train", "mix"}},
    {"placeto", {"heads", "layers", "segment"}}};

// The shipped policy replaced by an empty file for the test's duration (placers only check that
// it exists when they are made).
class StandInPolicy {
public:
  StandInPolicy() {
    std::ofstream(dir_ / "model.pt").put('\n');
    ::setenv("DOPPLER_MODEL", (dir_ / "model.pt").c_str(), 1);
  }
  ~StandInPolicy() { ::unsetenv("DOPPLER_MODEL"); }
  StandInPolicy(const StandInPolicy&) = delete;
  StandInPolicy& operator=(const StandInPolicy&) = delete;

private:
  test::TempDir dir_;
};

std::vector<PlacerInfo> learned() {
  register_learned_placers();
  std::vector<PlacerInfo> out;
  for (const PlacerInfo& info : placer_infos())
    if (info.learned) out.push_back(info);
  return out;
}

// The spec setting `key=value` on `info` (doppler-search's training options with train=0.5).
std::string spec_with(const PlacerInfo& info, const std::string& key, const std::string& value) {
  const bool training = info.name == "doppler-search" && !kSearchOwn.count(key);
  return info.name + ":" + (training ? "train=0.5," : "") + key + "=" + value;
}

// The infos a torch-free program lists (learned_infos.hpp) name kLearnedMethodNames, in order,
// each learned and seeded, and each is made by the factory registered under its name.
TEST(LearnedPlacerOptions, TheTorchFreeInfosNameTheRegisteredMethods) {
  const std::vector<PlacerInfo> infos = learned_placer_infos();
  ASSERT_EQ(infos.size(), std::size(kLearnedMethodNames));
  const StandInPolicy policy;
  register_learned_placers();
  for (std::size_t i = 0; i < infos.size(); ++i) {
    EXPECT_EQ(infos[i].name, kLearnedMethodNames[i]);
    EXPECT_TRUE(infos[i].learned && !infos[i].deterministic) << infos[i].name;
    const std::string spec = infos[i].name == "placeto" || infos[i].name == "gdp"
                                 ? infos[i].name + ":calls=10"
                                 : infos[i].name;
    EXPECT_EQ(make_placer(spec)->name(), infos[i].name);
  }
}

TEST(LearnedPlacerOptions, DeclarationsAreWellFormed) {
  const std::vector<PlacerInfo> infos = learned();
  ASSERT_EQ(infos.size(), std::size(kLearnedMethodNames));
  for (const PlacerInfo& info : infos) {
    test::expect_well_formed(info);
    EXPECT_TRUE(is_learned_method_name(info.name)) << info.name;
  }
}

TEST(LearnedPlacerOptions, EveryDeclaredOptionIsAcceptedAtItsDefaultAndEveryChoice) {
  const StandInPolicy policy;
  for (const PlacerInfo& info : learned())
    for (const PlacerOption& o : info.options) {
      if (o.type == OptionType::path) continue;
      const std::string spec = spec_with(info, o.name, test::sample_value(o));
      EXPECT_EQ(test::error_of([&] { make_placer(spec); }), "") << spec;
      for (const std::string& c : o.choices) {
        const std::string each = spec_with(info, o.name, c);
        EXPECT_EQ(test::error_of([&] { make_placer(each); }), "") << each;
      }
    }
}

TEST(LearnedPlacerOptions, AMadeUpOptionIsRefusedNamingIt) {
  const StandInPolicy policy;
  for (const PlacerInfo& info : learned()) {
    const std::string msg = test::error_of([&] { make_placer(info.name + ":no_such_option=1"); });
    EXPECT_NE(msg.find("'no_such_option'"), std::string::npos) << info.name << ": " << msg;
  }
  // focus= is doppler-search's without training (declared "train=0 only").
  EXPECT_NE(test::error_of([] { make_placer("doppler-search:train=0.5,focus=0"); }).find("focus"),
            std::string::npos);
}

// Every option name any method declares (learned or not; paths aside), with a value for it, is
// refused by each learned method that neither declares it nor lists it in kWithoutEffect.
TEST(LearnedPlacerOptions, OptionsOnlyOtherMethodsDeclareAreRefused) {
  const StandInPolicy policy;
  const std::vector<PlacerInfo> infos = learned();
  std::map<std::string, std::string> every;  // name -> a value
  for (const PlacerInfo& info : placer_infos())
    for (const PlacerOption& o : info.options)
      if (o.type != OptionType::path) every.emplace(o.name, test::sample_value(o));
  for (const PlacerInfo& info : infos)
    for (const auto& [key, value] : every) {
      const auto skip = kWithoutEffect.find(info.name);
      if (test::declares(info, key) || (skip != kWithoutEffect.end() && skip->second.count(key)))
        continue;
      const std::string spec = info.name + ":" + key + "=" + value;
      EXPECT_NE(test::error_of([&] { make_placer(spec); }).find(key), std::string::npos) << spec;
    }
}

// Every option the learned factories read (their take_* calls in src/train/placers) is declared
// by some learned method.
TEST(LearnedPlacerOptions, EveryOptionTheFactoriesReadIsDeclared) {
  const std::vector<PlacerInfo> infos = learned();
  std::size_t calls = 0;
  for (const auto& file :
       std::filesystem::directory_iterator(test::source_dir() / "src/train/placers")) {
    if (file.path().extension() != ".cpp") continue;
    for (const test::OptionRead& r : test::options_read(file.path())) {
      ++calls;
      EXPECT_TRUE(std::any_of(infos.begin(), infos.end(),
                              [&](const PlacerInfo& i) { return test::declares(i, r.key); }))
          << r.key << " read in " << file.path().filename();
    }
  }
  EXPECT_GE(calls, 30u) << "the factories' calls were not found";
}

}  // namespace
}  // namespace doppler
