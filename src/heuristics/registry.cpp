#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "doppler/heuristics/anneal_options.hpp"
#include "doppler/heuristics/auto_placer.hpp"
#include "doppler/heuristics/clustering.hpp"
#include "doppler/heuristics/critical_path.hpp"
#include "doppler/heuristics/deferred_placers.hpp"
#include "doppler/heuristics/levels.hpp"
#include "doppler/heuristics/list_placers.hpp"
#include "doppler/heuristics/multilevel.hpp"
#include "doppler/heuristics/optimal.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/heuristics/simple_placers.hpp"
#include "doppler/util/components.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler {

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

struct Entry {
  PlacerInfo info;
  PlacerFactory make;               ///< empty for a deferred placer not yet loaded
  std::function<void()> load = {};  ///< a deferred placer's loader (register_deferred_placers)
};

// multilevel's factory: its settings, with `inner` checked now rather than mid-run.
std::unique_ptr<Placer> make_multilevel(PlacerParams& p) {
  MultilevelSettings s;
  s.inner = take_string(p, "inner", s.inner);
  s.coarse_nodes = static_cast<int>(take_integer(p, "multilevel", "coarse", 0, 0, 1 << 30));
  s.cap = take_number(p, "multilevel", "cap", s.cap);
  s.inner_share = take_number(p, "multilevel", "share", s.inner_share);
  s.t0 = take_number(p, "multilevel", "t0", s.t0);
  s.focus = take_fraction(p, "multilevel", "focus", s.focus);
  s.aim = take_fraction(p, "multilevel", "aim", s.aim);
  s.swaps = take_integer(p, "multilevel", "swaps", 1, 0, 1) == 1;
  s.prefix = take_integer(p, "multilevel", "prefix", kPrefixCycles ? 1 : 0, 0, 1) == 1;
  s.tiebreak = take_tiebreak(p, "multilevel");
  s.cycles = static_cast<int>(take_integer(p, "multilevel", "cycles", 1, 1, 1000));
  s.tied = take_number(p, "multilevel", "tied", s.tied);
  s.tied_proxy = static_cast<int>(take_integer(p, "multilevel", "proxy", 0, 0, 1 << 20));
  if (s.inner.empty() || s.inner.rfind("multilevel", 0) == 0)
    throw InputError("method multilevel: option inner must name another method");
  std::string inner = s.inner;
  std::replace(inner.begin(), inner.end(), ';', ',');
  make_placer(inner);  // fails now, naming the method or option, rather than mid-run
  if (!(s.cap > 0) || !(s.inner_share > 0 && s.inner_share < 1) || s.t0 < 0 ||
      !(s.tied >= 0 && s.tied < 1))
    throw InputError(
        "method multilevel: cap must be > 0, share in (0, 1), t0 >= 0 and tied in [0, 1)");
  return std::make_unique<MultilevelPlacer>(s);
}

// The list schedulers, the simple baselines, dsc and enumopt, in `--methods all` order.
std::vector<Entry> constructive_entries() {
  using enum OptionType;
  return {
      {{"critical-path",
        "largest b-level first, on the device where it starts earliest (the paper's baseline, "
        "Stage I teacher)",
        {{"ties",
          choice,
          "lowest",
          "ties between ops and between devices: the lowest id, or uniformly random (seeded)",
          {"lowest", "random"}}},
        true},
       [](PlacerParams& p) {
         const std::string ties = take_string(p, "ties", "lowest");
         if (ties != "lowest" && ties != "random")
           throw InputError("method critical-path: option ties must be lowest or random, found '" +
                            ties + "'");
         return std::make_unique<CriticalPathPlacer>(ties == "random");
       }},
      {{"heft",
        "HEFT: decreasing upward rank, earliest finish time with insertion into idle gaps",
        {},
        true},
       [](PlacerParams&) { return std::make_unique<HeftPlacer>(); }},
      {{"etf",
        "ETF: the ready (op, device) pair with the earliest start time, repeatedly",
        {},
        true},
       [](PlacerParams&) { return std::make_unique<EtfPlacer>(); }},
      {{"m-topo",
        "Baechi m-TOPO: topological order, filling each device's memory share in turn",
        {{"slack", number, "0.05",
          "memory slack: each device holds up to (1 + slack) x total op memory / P"}},
        true},
       [](PlacerParams& p) {
         return std::make_unique<MTopoPlacer>(take_number(p, "m-topo", "slack", 0.05));
       }},
      {{"m-etf",
        "Baechi m-ETF: ETF restricted to devices with memory left in their share",
        {{"slack", number, "0.1",
          "memory slack: each device holds up to (1 + slack) x total op memory / P"}},
        true},
       [](PlacerParams& p) {
         return std::make_unique<EtfPlacer>(take_number(p, "m-etf", "slack", 0.1));
       }},
      {{"single",
        "every op on one device (the fastest for the graph): the one-device reference",
        {},
        true},
       [](PlacerParams&) { return std::make_unique<SinglePlacer>(); }},
      {{"round-robin", "the i-th op in topological order on device i mod P", {}, true},
       [](PlacerParams&) { return std::make_unique<RoundRobinPlacer>(); }},
      {{"random", "uniformly random devices", {}, false},
       [](PlacerParams&) { return std::make_unique<RandomPlacer>(); }},
      {{"balanced", "topological order, each op on the least-loaded device", {}, true},
       [](PlacerParams&) { return std::make_unique<BalancedPlacer>(); }},
      {{"dsc",
        "Dominant Sequence Clustering (unbounded devices, zeroing dominant-sequence edges), "
        "clusters merged onto the devices (merge=best: the best of glb, lpt, eft and comm by "
        "simulation)",
        {{"merge",
          choice,
          "best",
          "how clusters are merged onto the devices: guided load balancing (glb), longest work "
          "first (lpt), earliest finish (eft), least transfer (comm), or each of them simulated "
          "once, the shortest kept (best: 4 simulator calls)",
          {"best", "glb", "lpt", "eft", "comm"}}},
        true},
       [](PlacerParams& p) {
         return std::make_unique<DscPlacer>(take_string(p, "merge", "best"));
       }},
      {{"levels",
        "level by level: each topological level's ops matched to devices at once by estimated "
        "finish plus the time after it, that time taken from the previous pass's schedule",
        {{"passes", integer, "30",
          "passes, each scored by one simulator call, split evenly over the sequences"},
         {"tau", number, "0.05",
          "softness of a level's objective (a soft minimum of its latest finish), in mean op "
          "compute times"},
         {"blend", number, "0.8",
          "weight of the last pass's own tails against the ones it was given"},
         {"follow", integer, "1",
          "1: one more forward sequence, whose passes score each op by where the previous pass "
          "put its successors, so that it can join them"},
         {"chains", integer, "8",
          "sweeps of chain refinement of the best placement where devices are plentiful (no "
          "level wider than their count, identical devices and links): one more simulator "
          "call; 0: none"},
         {"sweeps",
          choice,
          "both",
          "which way the passes go: forward from the sources, alternating with the reversed "
          "graph from the sinks, or a sequence of each",
          {"both", "forward", "alternate"}}},
        true},
       [](PlacerParams& p) {
         LevelSettings s;
         s.passes = static_cast<int>(take_integer(p, "levels", "passes", s.passes, 1, 1000000));
         s.tau = take_number(p, "levels", "tau", s.tau);
         s.blend = take_number(p, "levels", "blend", s.blend);
         s.follow = take_integer(p, "levels", "follow", 1, 0, 1) == 1;
         s.chains = static_cast<int>(take_integer(p, "levels", "chains", s.chains, 0, 1000));
         const std::string sweeps = take_string(p, "sweeps", "both");
         if (sweeps == "forward")
           s.sweeps = LevelSweeps::forward;
         else if (sweeps == "alternate")
           s.sweeps = LevelSweeps::alternate;
         else if (sweeps != "both")
           throw InputError(
               "method levels: option sweeps must be both, forward or alternate, found '" + sweeps +
               "'");
         return std::make_unique<LevelsPlacer>(s);
       }},
      {{"enumopt",
        "enumerative optimiser: per tensor op, the best block-to-device mapping by simulation",
        {{"limit", integer, "720",
          "block-to-device mappings tried per tensor op (beyond it, that many random ones)"},
         {"infer", integer, "1",
          "graphs without tensor-op groups: infer the groups (nonzero) or place op by op, "
          "greedily (0)"}},
        false},
       [](PlacerParams& p) {
         return std::make_unique<EnumOptPlacer>(
             static_cast<int>(take_number(p, "enumopt", "limit", 720)),
             take_number(p, "enumopt", "infer", 1) != 0);
       }},
  };
}

// The searches and the exact methods.
std::vector<Entry> search_entries() {
  using enum OptionType;
  return {
      {{"local-search",
        "simulated annealing + descent from the best list scheduler (budget: evaluations or "
        "seconds)",
        {{"t0", number, "0.03", "annealing start temperature, as a fraction of the start makespan"},
         {"polish", number, "0.15",
          "fraction of the budget left, at the end, to descent and iterated local search"},
         focus_option(),
         aim_option(),
         swaps_option(),
         prefix_option(),
         tiebreak_option(),
         {"dsc", integer, "0", "1: DSC's clustering is a start too (one more call)"},
         {"levels", integer, "0",
          "1: the level placer's placement is a start too (its own calls, about thirty, and one "
          "more)"}},
        false},
       [](PlacerParams& p) {
         LocalSearchSettings s;
         s.t0 = take_number(p, "local-search", "t0", 0.03);
         s.polish = take_number(p, "local-search", "polish", 0.15);
         s.focus = take_fraction(p, "local-search", "focus", 0);
         s.aim = take_fraction(p, "local-search", "aim", 0);
         s.swaps = take_integer(p, "local-search", "swaps", 1, 0, 1) == 1;
         s.prefix = take_integer(p, "local-search", "prefix", kPrefixCycles ? 1 : 0, 0, 1) == 1;
         s.tiebreak = take_tiebreak(p, "local-search");
         s.dsc = take_integer(p, "local-search", "dsc", 0, 0, 1) == 1;
         s.levels = take_integer(p, "local-search", "levels", 0, 0, 1) == 1;
         return std::make_unique<LocalSearchPlacer>(s);
       }},
      {{"multilevel",
        "coarsen (acyclic heavy-edge matching), place the coarse graph with `inner`, refine level "
        "by level with cluster and op moves (budget: evaluations or seconds)",
        {{"inner", string, "local-search",
          "spec of the method placing the coarsest graph, its options joined by ';' (e.g. "
          "doppler:samples=16;temperature=0.5); not multilevel"},
         {"coarse", integer, "0",
          "stop coarsening at or below this many nodes (0: max(256, 16 P))"},
         {"cap", number, "0.5",
          "largest cluster, as a fraction of one device's share of the work (> 0)"},
         {"share", number, "0.3", "fraction of the budget given to the inner method, in (0, 1)"},
         {"t0", number, "0.005",
          "refinement's annealing start temperature, as a fraction of the makespan"},
         {"cycles", integer, "1",
          "passes of refinement (V-cycles); each after the first coarsens again within the "
          "devices of the placement so far, with other clusters (>= 1)"},
         focus_option("the refinement's "),
         aim_option(),
         swaps_option(),
         prefix_option(" (the refinement's; the inner method takes its own)"),
         tiebreak_option("; the refinement's"),
         {"tied", number, "0",
          "on graphs with repeated layers (names such as layers.3.wq): share of the budget, in "
          "[0, 1), after which a search that places every layer alike (moves of one role in "
          "every layer at once) hands over to the refinement; 0: none"},
         {"proxy", integer, "0",
          "with tied: layers of a stand-in graph (the first ones and the ops outside the layers) "
          "on which the tied search spends 3/4 of its share, many times cheaper to simulate; 0: "
          "none, else at least 1 and at most half the layers"}},
        false},
       [](PlacerParams& p) { return make_multilevel(p); }},
      {{"auto",
        "picks and combines methods for the graph, devices and budget: exhaustive on tiny "
        "problems, optimal (branch and bound) beside local-search up to 30 ops, else a portfolio "
        "(multilevel:inner=dsc; doppler-search when a policy is "
        "available on large graphs and on small ones under short budgets, else local-search on "
        "small ones; "
        "multilevel:inner=dsc,cycles=2 in between) run side by side on the "
        "threads after the level placer's placement (a sixteenth of the budget at most) and "
        "the one-device placement (single: one call), then annealing from the best (the note "
        "names the winner); under 200 "
        "simulator calls per op the annealing starts cold; from 10,000 ops mostly in repeated "
        "layers under ten calls per op multilevel's tied search runs alone, and on other large "
        "graphs under 32 calls per op doppler-search",
        {{"refine", number, "(rule)",
          "fraction of the budget, in [0, 1), for the final annealing from the best member "
          "(by the rule: 0.25, or 0 up to 30 ops and where doppler-search runs alone)"},
         {"t0", number, "(rule)",
          "final annealing's start temperature, as a fraction of the makespan (>= 0; by the "
          "rule: 0.005, or 0.0005 under 200 simulator calls per op)"},
         tiebreak_option("; for every annealing member and the final annealing")},
        false},
       [](PlacerParams& p) {
         constexpr double by_rule = -1;  // AutoPlacer: absent, the rule's value
         const bool refine_given = p.count("refine") > 0, t0_given = p.count("t0") > 0;
         const double refine = take_number(p, "auto", "refine", by_rule);
         const double t0 = take_number(p, "auto", "t0", by_rule);
         if ((refine_given && !(refine >= 0 && refine < 1)) || (t0_given && !(t0 >= 0)))
           throw InputError("method auto: refine must be in [0, 1) and t0 >= 0");
         return std::make_unique<AutoPlacer>(refine, t0, take_tiebreak(p, "auto"));
       }},
      {{"exhaustive",
        "the optimum by enumeration (tiny graphs only: <= 12 ops, <= 3 devices)",
        {{"max", integer, "531441",
          "most assignments (P^ops) enumerated; larger problems are refused"}},
        true},
       [](PlacerParams& p) {
         return std::make_unique<ExhaustivePlacer>(take_number(p, "exhaustive", "max", 531441));
       }},
      {{"optimal",
        "branch and bound: the proven optimum, or the best found with its gap at the limit "
        "(~20 ops on 4 devices in seconds)",
        {{"seconds", number, "60",
          "wall-clock limit of the search, in seconds (--time-budget overrides it)"},
         {"nodes", integer, "-1",
          "limit of branch-and-bound nodes (0: none; -1: 20 per simulator call, at least "
          "100,000, under a call budget without seconds (--budget alone, seconds= not given), "
          "else none)"}},
        true},
       [](PlacerParams& p) {
         // seconds= given alone asks for a search limited by time: no node limit from the calls.
         const bool timed = p.count("seconds") > 0 && p.count("nodes") == 0;
         const double seconds = take_number(p, "optimal", "seconds", 60);
         static_assert(OptimalPlacer::kNodesFromCalls == -1);
         const std::int64_t nodes =
             take_integer(p, "optimal", "nodes", -1, -1, std::numeric_limits<std::int64_t>::max());
         return std::make_unique<OptimalPlacer>(seconds, timed ? 0 : nodes);
       }},
  };
}

std::vector<Entry>& registry() {
  static std::vector<Entry> entries = [] {
    std::vector<Entry> all = constructive_entries();
    for (Entry& e : search_entries()) all.push_back(std::move(e));
    return all;
  }();
  return entries;
}

}  // namespace

double take_number(PlacerParams& params, const std::string& method, const std::string& key,
                   double fallback) {
  const auto it = params.find(key);
  if (it == params.end()) return fallback;
  double x = 0;
  std::string why;
  if (!parse_finite_double(it->second, x, why))
    throw InputError(fmt::format("method {}: option {}: {}", method, key, why));
  params.erase(it);
  return x;
}

double take_fraction(PlacerParams& params, const std::string& method, const std::string& key,
                     double fallback) {
  const auto it = params.find(key);
  if (it == params.end()) return fallback;
  const std::string text = it->second;
  const double x = take_number(params, method, key, fallback);
  if (!(x >= 0 && x <= 1))
    throw InputError(
        fmt::format("method {}: option {} must be in [0, 1], found '{}'", method, key, text));
  return x;
}

std::int64_t take_integer(PlacerParams& params, const std::string& method, const std::string& key,
                          std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  const auto it = params.find(key);
  if (it == params.end()) return fallback;
  std::int64_t v = 0;
  std::string why;
  if (!parse_int64(it->second, v, why) || v < lo || v > hi)
    throw InputError(fmt::format("method {}: option {} must be an integer in [{}, {}], found '{}'",
                                 method, key, lo, hi, it->second));
  params.erase(it);
  return v;
}

std::string take_string(PlacerParams& params, const std::string& key, const std::string& fallback) {
  const auto it = params.find(key);
  if (it == params.end()) return fallback;
  std::string v = it->second;
  params.erase(it);
  return v;
}

std::string_view option_type_name(OptionType type) {
  switch (type) {
    case OptionType::number:
      return "number";
    case OptionType::integer:
      return "integer";
    case OptionType::choice:
      return "choice";
    case OptionType::string:
      return "string";
    case OptionType::path:
      return "path";
  }
  return "?";
}

bool has_fixed_default(const PlacerOption& option) {
  return !option.default_value.empty() && option.default_value.front() != '(';
}

namespace {

// One option as "key=default", "key=a|b|c" (a choice, its default first), "key=PATH" or "key".
std::string option_text(const PlacerOption& o) {
  if (o.type == OptionType::choice) {
    std::string out = o.name + "=" + (has_fixed_default(o) ? o.default_value : "");
    for (const std::string& c : o.choices)
      if (!has_fixed_default(o) || c != o.default_value) out += (out.back() == '=' ? "" : "|") + c;
    return out;
  }
  if (!o.default_value.empty()) return o.name + "=" + o.default_value;
  return o.type == OptionType::path ? o.name + "=PATH" : o.name;
}

}  // namespace

std::string options_text(const PlacerInfo& info) {
  std::string out;
  for (const PlacerOption& o : info.options) out += (out.empty() ? "" : ",") + option_text(o);
  return out;
}

std::vector<PlacerInfo> placer_infos() {
  std::mutex& m = registry_mutex();
  std::lock_guard lock(m);
  std::vector<PlacerInfo> out;
  for (const Entry& e : registry())
    if (!e.info.learned) out.push_back(e.info);
  for (const Entry& e : registry())
    if (e.info.learned) out.push_back(e.info);
  return out;
}

namespace {

// The registry's entry named `name`, or nullptr; the caller holds registry_mutex().
Entry* find_entry(const std::string& name) {
  for (Entry& e : registry())
    if (e.info.name == name) return &e;
  return nullptr;
}

}  // namespace

void register_placer(PlacerInfo info, PlacerFactory make) {
  std::lock_guard lock(registry_mutex());
  if (Entry* e = find_entry(info.name))
    *e = {std::move(info), std::move(make), {}};
  else
    registry().push_back({std::move(info), std::move(make), {}});
}

void register_deferred_placers(std::vector<PlacerInfo> infos, std::function<void()> load) {
  std::lock_guard lock(registry_mutex());
  for (PlacerInfo& info : infos) {
    Entry* e = find_entry(info.name);
    if (e == nullptr)
      registry().push_back({std::move(info), {}, load});
    else if (!e->make)
      *e = {std::move(info), {}, load};
  }
}

std::pair<std::string, PlacerParams> parse_placer_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  PlacerParams params;
  if (colon != std::string::npos) {
    for (std::string_view kv : split_fields(std::string_view(spec).substr(colon + 1), ',')) {
      kv = trim(kv);
      const auto eq = kv.find('=');
      if (eq == std::string_view::npos || eq == 0)
        throw InputError(
            fmt::format("method {}: expected key=value options, found '{}'", name, kv));
      params[std::string(trim(kv.substr(0, eq)))] = std::string(trim(kv.substr(eq + 1)));
    }
  }
  return {name, params};
}

bool is_learned_method_name(std::string_view name) {
  for (std::string_view learned : kLearnedMethodNames)
    if (name == learned) return true;
  return false;
}

namespace {

// The factory of registered placer `name` and its accepted options ("none" when it has none),
// or an empty factory, with `names` listing the registered ones; `load` is set for a deferred
// placer not yet loaded.
struct Lookup {
  PlacerFactory make;
  std::function<void()> load;
  std::string accepted, names;
};

Lookup look_up(const std::string& name) {
  Lookup out;
  std::lock_guard lock(registry_mutex());
  for (const Entry& e : registry()) {
    out.names += (out.names.empty() ? "" : ", ") + e.info.name;
    if (e.info.name != name) continue;
    out.make = e.make;
    out.load = e.make ? nullptr : e.load;
    out.accepted = e.info.options.empty() ? "none" : options_text(e.info);
  }
  return out;
}

}  // namespace

std::unique_ptr<Placer> make_placer(const std::string& spec) {
  auto [name, params] = parse_placer_spec(spec);
  Lookup found = look_up(name);
  if (!found.make && found.load) {
    found.load();  // registers the deferred placers' factories (outside the registry's lock)
    found = look_up(name);
    if (!found.make)
      throw std::runtime_error(fmt::format("method '{}' was not registered by its loader", name));
  }
  if (!found.make && !component_built(Component::torch) && is_learned_method_name(name))
    throw component_absent(fmt::format("method '{}'", name), Component::torch);
  if (!found.make)
    throw InputError(fmt::format("unknown method '{}' (available: {})", name, found.names));
  auto placer = found.make(params);
  if (!params.empty())
    throw InputError(fmt::format("method {}: unknown option '{}' (accepted: {})", name,
                                 params.begin()->first, found.accepted));
  return placer;
}

}  // namespace doppler
