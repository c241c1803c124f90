// The learned methods as Placers of the one registry: every name is made and places within its
// budget of simulator calls (counted by the simulator itself), unknown options are InputErrors
// naming the option, doppler-search improves on its own start and on random placement, and
// doppler:policy= takes a run directory as well as its checkpoint.
#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/train/learned_placers.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// Tiny networks and stages so that every method trains in well under a second.
const char* const kTiny = "il=10,hidden=8,mp_steps=1";

std::string spec_of(const std::string& name) {
  if (name == "placeto" || name == "gdp") return name + ":hidden=8";
  if (name == "doppler-il") return name + ":" + kTiny + ",samples=8";
  return name + ":" + kTiny + ",samples=8";
}

const std::vector<std::string> kTrained = {"doppler-il",  "doppler-sim", "doppler-search",
                                           "doppler-sel", "doppler-plc", "doppler-joint",
                                           "placeto",     "gdp"};

struct Instance {
  Graph g;
  std::unique_ptr<Problem> problem;
  double optimum = 0;
};

Instance small_instance(std::uint64_t seed, int nodes, int devices, bool exhaustive) {
  std::mt19937_64 rng(seed);
  Instance in;
  in.g = test::random_dag(rng, {nodes, 0.25, 9, 9, true});
  in.problem = std::make_unique<Problem>(in.g, Platform::reference(devices));
  if (exhaustive)
    in.optimum = in.problem->simulator().makespan(
        make_placer("exhaustive")->place(*in.problem, {}).device_of);
  return in;
}

// Every learned name is registered and flagged learned, places the graph within the budget it
// is given, counting exactly the simulator calls it made, and no result beats the optimum.
TEST(LearnedPlacers, EveryLearnedMethodPlacesWithinItsBudget) {
  register_learned_placers();
  std::vector<std::string> learned;
  for (const PlacerInfo& info : placer_infos())
    if (info.learned) learned.push_back(info.name);
  for (const std::string& name : kTrained)
    EXPECT_NE(std::find(learned.begin(), learned.end(), name), learned.end()) << name;
  const Instance in = small_instance(3, 8, 2, true);
  const Simulator& sim = in.problem->simulator();
  const std::int64_t budget = 60;
  for (const std::string& name : kTrained) {
    SCOPED_TRACE(name);
    const auto placer = make_placer(spec_of(name));
    EXPECT_EQ(placer->name(), name);
    const std::int64_t before = sim.calls();
    const Assignment a = placer->place(*in.problem, {7, {budget, 0}});
    const std::int64_t used = sim.calls() - before;
    EXPECT_EQ(placer->evaluations(), used) << "evaluations() counts every simulator call";
    EXPECT_LE(used, budget);
    EXPECT_EQ(a.method, name);
    ASSERT_EQ(a.device_of.size(), static_cast<std::size_t>(in.g.num_nodes()));
    for (DeviceId d : a.device_of) {
      EXPECT_GE(d, 0);
      EXPECT_LT(d, 2);
    }
    EXPECT_GE(sim.makespan(a.device_of), in.optimum);
    if (name == "doppler-il") {
      EXPECT_EQ(used, 8) << "min(samples, budget) sampled rollouts";
    }
    if (name == "doppler-sim" || name == "doppler-sel" || name == "doppler-plc" ||
        name == "doppler-joint") {
      EXPECT_EQ(used, budget) << "Stage II rollouts + greedy scoring + samples = the budget";
    }
  }
}

TEST(LearnedPlacers, UnknownOptionsAreInputErrorsNamingTheOption) {
  register_learned_placers();
  for (const std::string& name : kTrained) {
    SCOPED_TRACE(name);
    const std::string msg = test::error_of([&] { make_placer(name + ":bogus_option=1"); });
    EXPECT_NE(msg.find("bogus_option"), std::string::npos) << msg;
  }
  const std::string msg = test::error_of([&] { make_placer("doppler:policy=x,bogus_option=1"); });
  EXPECT_NE(msg.find("bogus_option"), std::string::npos) << msg;
  // Without policy= the shipped model is used; a missing one is named in the error.
  ::setenv("DOPPLER_MODEL", "/nonexistent/model.pt", 1);
  const std::string missing = test::error_of([] { make_placer("doppler"); });
  ::unsetenv("DOPPLER_MODEL");
  EXPECT_NE(missing.find("/nonexistent/model.pt"), std::string::npos) << missing;
  // An explicit sim= that does not fit in the budget is refused.
  const Instance in = small_instance(5, 6, 2, false);
  EXPECT_NE(test::error_of([&] {
              make_placer("doppler-sim:il=0,hidden=8,sim=100,samples=4")
                  ->place(*in.problem, {0, {50, 0}});
            }),
            "");
}

// The budget rule holds for the methods that search or train with the simulator, local-search
// included: evaluations() is the simulator's own count, within the budget.
TEST(LearnedPlacers, BudgetIsCountedBySimulatorCalls) {
  register_learned_placers();
  const Instance in = small_instance(11, 10, 3, false);
  const Simulator& sim = in.problem->simulator();
  for (const std::int64_t budget : {40, 97}) {
    for (const std::string& spec :
         {std::string("doppler-sim:") + kTiny, std::string("doppler-search:") + kTiny,
          std::string("doppler-il:") + kTiny, std::string("placeto:hidden=8"),
          std::string("gdp:hidden=8"), std::string("local-search")}) {
      SCOPED_TRACE(spec + " budget " + std::to_string(budget));
      const auto placer = make_placer(spec);
      const std::int64_t before = sim.calls();
      placer->place(*in.problem, {1, {budget, 0}});
      const std::int64_t used = sim.calls() - before;
      EXPECT_EQ(placer->evaluations(), used);
      EXPECT_LE(used, budget);
      EXPECT_GT(used, 0);
    }
  }
}

// doppler-search anneals from the best of its samples: at the same budget it is never worse
// than doppler-sim given the same Stage II (sim = T - 1) and samples, i.e. its own start; and on
// a random graph it beats the mean of random placements by a wide margin.
TEST(LearnedPlacers, DopplerSearchImprovesOnItsStartAndOnRandom) {
  register_learned_placers();
  const Instance in = small_instance(21, 14, 3, false);
  const Simulator& sim = in.problem->simulator();
  const std::int64_t budget = 400;  // T = 200: Stage II 199 rollouts + greedy, 25 samples
  const PlaceOptions opt{3, {budget, 0}};
  const double search = sim.makespan(
      make_placer("doppler-search:il=30,hidden=8,mp_steps=1")->place(*in.problem, opt).device_of);
  const double start = sim.makespan(make_placer("doppler-sim:il=30,hidden=8,mp_steps=1,sim=199")
                                        ->place(*in.problem, opt)
                                        .device_of);
  EXPECT_LE(search, start);
  double random_mean = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    random_mean +=
        sim.makespan(make_placer("random")->place(*in.problem, {seed, {}}).device_of) / 20;
  EXPECT_LT(search, 0.8 * random_mean) << "random mean " << random_mean;
  EXPECT_GE(search, in.problem->lower_bound());
}

// doppler:policy= takes a run directory or its ckpt.pt; with samples=1 it is the trained policy's
// greedy placement.
TEST(LearnedPlacers, DopplerPolicyTakesARunDirectoryOrItsCheckpoint) {
  register_learned_placers();
  const Instance in = small_instance(31, 12, 3, false);
  TrainConfig c;
  c.stage = TrainStage::imitation;
  c.episodes = 20;
  c.lr = 3e-3;
  c.policy.hidden = 8;
  c.policy.steps = 1;
  c.parallel = false;
  test::TempDir dir;
  DopplerTrainer trainer(*in.problem, c);
  trainer.set_run_dir(dir.path());
  const TrainResult r = trainer.train();
  for (const std::string& path : {dir.path().string(), (dir / "ckpt.pt").string()}) {
    SCOPED_TRACE(path);
    const auto placer = make_placer("doppler:samples=1,policy=" + path);
    const Assignment a = placer->place(*in.problem, {});
    EXPECT_EQ(a.device_of, r.greedy.device_of);
    EXPECT_EQ(placer->evaluations(), 1);
  }
  EXPECT_NE(test::error_of([&] {
              make_placer("doppler:policy=" + (dir / "missing").string())->place(*in.problem, {});
            }),
            "");
}

}  // namespace
}  // namespace doppler
