// The learned methods as Placers of the one registry: every name is made and places within its
// budget of simulator calls (counted by the simulator itself), unknown options are InputErrors
// naming the option, doppler-search (with the shipped policy, no training) is never worse than
// local-search's list schedulers (with dsc=1 never worse than DSC) and is exactly the annealer
// from the best of them and the policy's samples, doppler-search:train= improves on its own start
// and on random placement, doppler:policy= takes a run directory as well as its checkpoint, and a
// rewritten checkpoint is reloaded.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/doppler_policy.hpp"
#include "doppler/train/learned_placers.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

// Tiny networks and stages so that every method trains in well under a second.
const char* const kTiny = "il=10,hidden=8,mp_steps=1";

std::string spec_of(const std::string& name) {
  if (name == "placeto" || name == "gdp") return name + ":hidden=8";
  if (name == "doppler-search") return name + ":train=0.5," + kTiny + ",samples=8";
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
        make_placer("exhaustive")->place(*in.problem, {}).assignment.device_of);
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
    const PlaceResult placed = placer->place(*in.problem, {7, {budget, 0}});
    const Assignment& a = placed.assignment;
    const std::int64_t used = sim.calls() - before;
    EXPECT_EQ(placed.spent.calls, used) << "spent.calls counts every simulator call";
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
// included: the calls spent are the simulator's own count, within the budget.
TEST(LearnedPlacers, BudgetIsCountedBySimulatorCalls) {
  register_learned_placers();
  const Instance in = small_instance(11, 10, 3, false);
  const Simulator& sim = in.problem->simulator();
  for (const std::int64_t budget : {40, 97}) {
    for (const std::string& spec :
         {std::string("doppler-sim:") + kTiny, std::string("doppler-search:train=0.5,") + kTiny,
          std::string("doppler-search"), std::string("doppler-search:samples=200"),
          std::string("doppler-il:") + kTiny, std::string("placeto:hidden=8"),
          std::string("gdp:hidden=8"), std::string("local-search")}) {
      SCOPED_TRACE(spec + " budget " + std::to_string(budget));
      const auto placer = make_placer(spec);
      const std::int64_t before = sim.calls();
      const PlaceResult placed = placer->place(*in.problem, {1, {budget, 0}});
      const std::int64_t used = sim.calls() - before;
      EXPECT_EQ(placed.spent.calls, used);
      EXPECT_LE(used, budget);
      EXPECT_GT(used, 0);
    }
  }
}

// doppler-search:train=0.5 anneals from the best of its samples: at the same budget it is never
// worse than doppler-sim given the same Stage II (sim = T - 1) and samples, i.e. its own start;
// and on a random graph it beats the mean of random placements by a wide margin.
TEST(LearnedPlacers, TrainingDopplerSearchImprovesOnItsStartAndOnRandom) {
  register_learned_placers();
  const Instance in = small_instance(21, 14, 3, false);
  const Simulator& sim = in.problem->simulator();
  const std::int64_t budget = 400;  // T = 200: Stage II 199 rollouts + greedy, 25 samples
  const PlaceOptions opt{3, {budget, 0}};
  const double search =
      sim.makespan(make_placer("doppler-search:train=0.5,il=30,hidden=8,mp_steps=1")
                       ->place(*in.problem, opt)
                       .assignment.device_of);
  const double start = sim.makespan(make_placer("doppler-sim:il=30,hidden=8,mp_steps=1,sim=199")
                                        ->place(*in.problem, opt)
                                        .assignment.device_of);
  EXPECT_LE(search, start);
  double random_mean = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    random_mean +=
        sim.makespan(make_placer("random")->place(*in.problem, {seed, {}}).assignment.device_of) /
        20;
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
    const PlaceResult placed = placer->place(*in.problem, {});
    EXPECT_EQ(placed.assignment.device_of, r.greedy.device_of);
    EXPECT_EQ(placed.spent.calls, 1);
  }
  EXPECT_NE(test::error_of([&] {
              make_placer("doppler:policy=" + (dir / "missing").string())->place(*in.problem, {});
            }),
            "");
}

// The five list schedulers local-search starts from, in its order.
const std::vector<std::string> kListSchedulers = {"critical-path", "heft", "etf", "m-etf",
                                                  "balanced"};

// The best of local-search's list schedulers, made through the registry: the first of the
// lowest makespan.
std::pair<std::vector<DeviceId>, double> best_list_start(const Problem& problem,
                                                         const PlaceOptions& options) {
  std::pair<std::vector<DeviceId>, double> best{{}, std::numeric_limits<double>::infinity()};
  for (const std::string& spec : kListSchedulers) {
    const Assignment a = make_placer(spec)->place(problem, options).assignment;
    const double ms = problem.simulator().makespan(a.device_of);
    if (ms < best.second) best = {a.device_of, ms};
  }
  return best;
}

// Default doppler-search (the shipped policy, no training) never returns a placement worse than
// the best of the five list schedulers local-search starts from, on graphs of several sizes and
// device counts, at small budgets too.
TEST(LearnedPlacers, DopplerSearchIsNeverWorseThanTheListSchedulers) {
  register_learned_placers();
  for (const auto& [seed, nodes, devices] :
       std::vector<std::tuple<int, int, int>>{{41, 12, 2}, {42, 30, 3}, {43, 60, 4}, {44, 90, 8}}) {
    const Instance in = small_instance(static_cast<std::uint64_t>(seed), nodes, devices, false);
    for (const std::int64_t budget : {8, 200}) {
      SCOPED_TRACE(::testing::Message()
                   << nodes << " ops, " << devices << " devices, budget " << budget);
      const PlaceOptions opt{5, {budget, 0}};
      const double lists = best_list_start(*in.problem, opt).second;
      const Assignment a = make_placer("doppler-search")->place(*in.problem, opt).assignment;
      EXPECT_EQ(a.method, "doppler-search");
      EXPECT_LE(in.problem->simulator().makespan(a.device_of), lists);
      EXPECT_GE(in.problem->simulator().makespan(a.device_of), in.problem->lower_bound());
    }
  }
}

// With dsc=1 DSC's clustering is one more start: on a layered DAG with more devices than its
// widest layer (300 ops, 64 devices, transfers as costly as compute) DSC beats every list
// scheduler, and with a budget too small for the annealer to catch up doppler-search:dsc=1 is
// never worse than DSC's own placement, while the default (no DSC start) is.
TEST(LearnedPlacers, DopplerSearchWithDscStartsIsNeverWorseThanDsc) {
  register_learned_placers();
  const Graph g = workloads::generate_random_dag({300, 32, 0.2, 1.0, 7});
  const Problem problem(g, Platform::reference(64));
  const Simulator& sim = problem.simulator();
  const PlaceOptions opt{3, {12, 0}};
  const double dsc = sim.makespan(make_placer("dsc")->place(problem, opt).assignment.device_of);
  ASSERT_LT(dsc, best_list_start(problem, opt).second) << "the case needs DSC ahead of the lists";
  const double with =
      sim.makespan(make_placer("doppler-search:dsc=1")->place(problem, opt).assignment.device_of);
  const double without =
      sim.makespan(make_placer("doppler-search")->place(problem, opt).assignment.device_of);
  EXPECT_LE(with, dsc);
  EXPECT_GT(without, dsc) << "12 calls should not reach DSC's placement from the list starts";
  EXPECT_NE(test::error_of([] { make_placer("doppler-search:dsc=2"); }), "");
}

// levels=1 makes the level placer's placement a start too (32 of the calls with its chain
// refinement): on a deep DAG on 64 devices, where it beats DSC, the search given 60 calls ends
// at most at that placement, while the same search with DSC's start alone ends above it.
TEST(LearnedPlacers, DopplerSearchWithLevelsStartsIsNeverWorseThanLevels) {
  register_learned_placers();
  const Graph g = workloads::generate_random_dag({2000, 32, 0.2, 1.0, 1});
  const Problem problem(g, Platform::reference(64));
  const Simulator& sim = problem.simulator();
  const PlaceOptions opt{3, {60, 0}};
  const double levels =
      sim.makespan(make_placer("levels")->place(problem, opt).assignment.device_of);
  const double with = sim.makespan(
      make_placer("doppler-search:dsc=1,levels=1")->place(problem, opt).assignment.device_of);
  const double without =
      sim.makespan(make_placer("doppler-search:dsc=1")->place(problem, opt).assignment.device_of);
  EXPECT_LE(with, levels);
  EXPECT_GT(without, levels) << "60 calls should not reach the level placer's from DSC's start";
  EXPECT_NE(test::error_of([] { make_placer("doppler-search:levels=2"); }), "");
}

// Within its call budget, counted by the simulator: the calls spent are the simulator's own count,
// never above the budget, and (once the budget leaves room for the annealer) all of it. Tiny
// budgets cut the list schedulers, never the one sample.
TEST(LearnedPlacers, DopplerSearchSpendsExactlyItsCallBudget) {
  register_learned_placers();
  const Instance in = small_instance(51, 40, 4, false);
  const Simulator& sim = in.problem->simulator();
  for (const std::int64_t budget : {1, 3, 6, 7, 50, 333, 1000}) {
    SCOPED_TRACE(budget);
    const auto placer = make_placer("doppler-search");
    const std::int64_t before = sim.calls();
    const PlaceResult placed = placer->place(*in.problem, {2, {budget, 0}});
    const std::int64_t used = sim.calls() - before;
    EXPECT_EQ(placed.spent.calls, used);
    EXPECT_EQ(used, budget) << "up to 6: 1 sample + min(5, budget - 1) list schedulers; beyond: "
                               "the annealer spends the rest";
  }
  // Time budget alone: spent.calls still counts every call, and the run ends near its limit.
  const auto placer = make_placer("doppler-search");
  const std::int64_t before = sim.calls();
  const auto t0 = std::chrono::steady_clock::now();
  const PlaceResult timed = placer->place(*in.problem, {2, {0, 0.3}});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(timed.spent.calls, sim.calls() - before);
  EXPECT_GT(timed.spent.calls, 6);
  EXPECT_LT(took, 0.3 + 1.0);
  // Both limits: the call budget ends this one long before the time budget.
  const std::int64_t before2 = sim.calls();
  const PlaceResult both = placer->place(*in.problem, {2, {100, 60}});
  EXPECT_EQ(sim.calls() - before2, 100);
  EXPECT_EQ(both.spent.calls, 100);
}

// Sampling within seconds: a time budget too short for one rollout still gets the greedy
// rollout (the first, before any check), not the 64 samples asked for; without one, all 64.
TEST(LearnedPlacers, SamplingStopsAfterTheWaveInWhichTheSecondsRunOut) {
  register_learned_placers();
  const Instance in = small_instance(71, 40, 4, false);
  const auto placer = make_placer("doppler:samples=64");
  const PlaceResult timed = placer->place(*in.problem, {3, {0, 1e-6}});
  EXPECT_EQ(timed.spent.calls, 1);
  const PlaceResult all = placer->place(*in.problem, {3, {64, 0}});
  EXPECT_EQ(all.spent.calls, 64);
  EXPECT_LE(in.problem->simulator().makespan(all.assignment.device_of),
            in.problem->simulator().makespan(timed.assignment.device_of))
      << "the greedy rollout is among the 64";
}

// Without training (train=0, the default) doppler-search is exactly the annealer with PLC's
// proposal, started from the best of local-search's list schedulers and the shipped policy's
// best of S = min(64, budget / 16) samples: rebuilt here from the public pieces, the assignment
// is the same; the same seed gives the same assignment; samples= and mix= are used.
TEST(LearnedPlacers, DefaultDopplerSearchIsTheAnnealerFromTheBestStartWithoutTraining) {
  register_learned_placers();
  const Instance in = small_instance(61, 50, 4, false);
  const Problem& problem = *in.problem;
  const std::int64_t budget = 480;  // S = 30 samples, 5 list schedulers, 445 annealer calls
  const PlaceOptions opt{9, {budget, 0}};
  const Assignment a = make_placer("doppler-search")->place(problem, opt).assignment;
  EXPECT_EQ(make_placer("doppler-search")->place(problem, opt).assignment.device_of, a.device_of);

  auto [start, start_ms] = best_list_start(problem, opt);
  DopplerPolicy policy = DopplerPolicy::load(default_policy_path());
  SampleOptions so;
  so.samples = 30;
  so.seed = opt.seed;
  const SampledPlacement sp = policy.sample(problem, so);
  if (sp.best_makespan < start_ms) {
    start = sp.best.device_of;
    start_ms = sp.best_makespan;
  }
  const MoveProposal proposal{sp.proposal, 0.5};
  AnnealSettings settings;
  settings.proposal = &proposal;
  BudgetedEvaluator rest(problem.simulator(), {budget - 30 - 5, 0});
  const AnnealResult r = anneal(problem, start, start_ms, rest, settings, opt.seed);
  const std::vector<DeviceId> expected = r.best_makespan < start_ms ? r.best : start;
  EXPECT_EQ(a.device_of, expected);
  // The shipped policy's best sample is a start: never worse than doppler:samples=30.
  EXPECT_LE(problem.simulator().makespan(a.device_of),
            problem.simulator().makespan(
                make_placer("doppler:samples=30")->place(problem, opt).assignment.device_of));
  // Another mix= changes the proposal's share, hence (here) the search.
  EXPECT_NE(make_placer("doppler-search:mix=1")->place(problem, opt).assignment.device_of,
            a.device_of);
}

// Missing policies and training options without training are one-line InputErrors naming them.
TEST(LearnedPlacers, DopplerSearchOptionErrorsNameTheCulprit) {
  register_learned_placers();
  const Instance in = small_instance(81, 8, 2, false);
  const std::string missing = test::error_of([&] {
    make_placer("doppler-search:policy=/nonexistent/run-dir/x.pt")
        ->place(*in.problem, {})
        .assignment;
  });
  EXPECT_NE(missing.find("/nonexistent/run-dir/x.pt"), std::string::npos) << missing;
  ::setenv("DOPPLER_MODEL", "/nonexistent/shipped.pt", 1);
  const std::string shipped = test::error_of([] { make_placer("doppler-search"); });
  ::unsetenv("DOPPLER_MODEL");
  EXPECT_NE(shipped.find("/nonexistent/shipped.pt"), std::string::npos) << shipped;
  for (const std::string option : {"il=5", "sim=10", "hidden=8", "lr=0.01", "preset=paper"}) {
    const std::string msg = test::error_of([&] { make_placer("doppler-search:" + option); });
    const std::string key = option.substr(0, option.find('='));
    EXPECT_NE(msg.find(key + "="), std::string::npos) << msg;
    EXPECT_NE(msg.find("train="), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_NE(test::error_of([] { make_placer("doppler-search:mix=2"); }), "");
  EXPECT_NE(test::error_of([] { make_placer("doppler-search:train=-1"); }), "");
  EXPECT_EQ(test::error_of([] { make_placer("doppler-search:train=0,samples=8,mix=0.3"); }), "");
}

// A checkpoint rewritten in place is reloaded (the policy cache is keyed by modification time
// and size): the placement follows the file's current contents.
TEST(LearnedPlacers, ARewrittenCheckpointIsReloaded) {
  register_learned_placers();
  const Instance in = small_instance(71, 16, 3, false);
  TrainConfig c;
  c.stage = TrainStage::imitation;
  c.episodes = 10;
  c.policy.hidden = 8;
  c.policy.steps = 1;
  c.parallel = false;
  test::TempDir dir;
  DopplerTrainer trainer(*in.problem, c);
  trainer.set_run_dir(dir / "tiny");
  const Assignment tiny = trainer.train().greedy;
  const std::filesystem::path ckpt = dir / "ckpt.pt";
  const auto greedy_of = [&] {
    return make_placer("doppler:samples=1,policy=" + ckpt.string())
        ->place(*in.problem, {})
        .assignment.device_of;
  };
  std::filesystem::copy_file(dir / "tiny" / "ckpt.pt", ckpt);
  EXPECT_EQ(greedy_of(), tiny.device_of);
  const std::vector<DeviceId> shipped =
      DopplerPolicy::load(default_policy_path()).place(*in.problem).device_of;
  ASSERT_NE(shipped, tiny.device_of) << "precondition: the two policies place differently";
  std::filesystem::copy_file(default_policy_path(), ckpt,
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(greedy_of(), shipped);
}

}  // namespace
}  // namespace doppler
