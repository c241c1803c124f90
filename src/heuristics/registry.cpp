#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "doppler/heuristics/auto_placer.hpp"
#include "doppler/heuristics/clustering.hpp"
#include "doppler/heuristics/critical_path.hpp"
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
  PlacerFactory make;
};

std::vector<Entry>& registry() {
  static std::vector<Entry> entries = {
      {{"critical-path",
        "largest b-level first, on the device where it starts earliest (the paper's baseline, "
        "Stage I teacher)",
        "ties=lowest|random", true},
       [](PlacerParams& p) {
         const std::string ties = take_string(p, "ties", "lowest");
         if (ties != "lowest" && ties != "random")
           throw InputError("method critical-path: option ties must be lowest or random, found '" +
                            ties + "'");
         return std::make_unique<CriticalPathPlacer>(ties == "random");
       }},
      {{"heft", "HEFT: decreasing upward rank, earliest finish time with insertion into idle gaps",
        "", true},
       [](PlacerParams&) { return std::make_unique<HeftPlacer>(); }},
      {{"etf", "ETF: the ready (op, device) pair with the earliest start time, repeatedly", "",
        true},
       [](PlacerParams&) { return std::make_unique<EtfPlacer>(); }},
      {{"m-topo", "Baechi m-TOPO: topological order, filling each device's memory share in turn",
        "slack=0.05", true},
       [](PlacerParams& p) {
         return std::make_unique<MTopoPlacer>(take_number(p, "m-topo", "slack", 0.05));
       }},
      {{"m-etf", "Baechi m-ETF: ETF restricted to devices with memory left in their share",
        "slack=0.1", true},
       [](PlacerParams& p) {
         return std::make_unique<EtfPlacer>(take_number(p, "m-etf", "slack", 0.1));
       }},
      {{"round-robin", "the i-th op in topological order on device i mod P", "", true},
       [](PlacerParams&) { return std::make_unique<RoundRobinPlacer>(); }},
      {{"random", "uniformly random devices", "", false},
       [](PlacerParams&) { return std::make_unique<RandomPlacer>(); }},
      {{"balanced", "topological order, each op on the least-loaded device", "", true},
       [](PlacerParams&) { return std::make_unique<BalancedPlacer>(); }},
      {{"dsc",
        "Dominant Sequence Clustering (unbounded devices, zeroing dominant-sequence edges), "
        "clusters merged onto the devices (merge=best: the best of glb, lpt, eft and comm by "
        "simulation)",
        "merge=best|glb|lpt|eft|comm", true},
       [](PlacerParams& p) {
         return std::make_unique<DscPlacer>(take_string(p, "merge", "best"));
       }},
      {{"enumopt",
        "enumerative optimiser: per tensor op, the best block-to-device mapping by simulation",
        "limit=720,infer=1", false},
       [](PlacerParams& p) {
         return std::make_unique<EnumOptPlacer>(
             static_cast<int>(take_number(p, "enumopt", "limit", 720)),
             take_number(p, "enumopt", "infer", 1) != 0);
       }},
      {{"local-search",
        "simulated annealing + descent from the best list scheduler (budget: evaluations or "
        "seconds)",
        "t0=0.03,polish=0.15,focus=0", false},
       [](PlacerParams& p) {
         const double focus = take_number(p, "local-search", "focus", 0);
         if (!(focus >= 0 && focus <= 1))
           throw InputError("method local-search: focus must be in [0, 1]");
         return std::make_unique<LocalSearchPlacer>(take_number(p, "local-search", "t0", 0.03),
                                                    take_number(p, "local-search", "polish", 0.15),
                                                    focus);
       }},
      {{"multilevel",
        "coarsen (acyclic heavy-edge matching), place the coarse graph with `inner`, refine level "
        "by level with cluster and op moves (budget: evaluations or seconds)",
        "inner=local-search,coarse=0,cap=0.5,share=0.3,t0=0.005,focus=0", false},
       [](PlacerParams& p) {
         MultilevelSettings s;
         s.inner = take_string(p, "inner", s.inner);
         s.coarse_nodes = static_cast<int>(take_integer(p, "multilevel", "coarse", 0, 0, 1 << 30));
         s.cap = take_number(p, "multilevel", "cap", s.cap);
         s.inner_share = take_number(p, "multilevel", "share", s.inner_share);
         s.t0 = take_number(p, "multilevel", "t0", s.t0);
         s.focus = take_number(p, "multilevel", "focus", s.focus);
         if (s.inner.empty() || s.inner.rfind("multilevel", 0) == 0)
           throw InputError("method multilevel: option inner must name another method");
         std::string inner = s.inner;
         std::replace(inner.begin(), inner.end(), ';', ',');
         make_placer(inner);  // fails now, naming the method or option, rather than mid-run
         if (!(s.cap > 0) || !(s.inner_share > 0 && s.inner_share < 1) || s.t0 < 0 ||
             !(s.focus >= 0 && s.focus <= 1))
           throw InputError(
               "method multilevel: cap must be > 0, share in (0, 1), t0 >= 0 and focus in [0, 1]");
         return std::make_unique<MultilevelPlacer>(s);
       }},
      {{"auto",
        "picks and combines methods for the graph, devices and budget: exhaustive on tiny "
        "problems, else a portfolio (multilevel:inner=dsc; local-search on small graphs; "
        "doppler-search on large ones when a policy is available) run side by side on the "
        "threads, then annealing from the best (the note names the winner)",
        "refine=0.25,t0=0.005", false},
       [](PlacerParams& p) {
         const double refine = take_number(p, "auto", "refine", 0.25);
         const double t0 = take_number(p, "auto", "t0", 0.005);
         if (!(refine >= 0 && refine < 1) || !(t0 >= 0))
           throw InputError("method auto: refine must be in [0, 1) and t0 >= 0");
         return std::make_unique<AutoPlacer>(refine, t0);
       }},
      {{"exhaustive", "the optimum by enumeration (tiny graphs only: <= 12 ops, <= 3 devices)",
        "max=531441", true},
       [](PlacerParams& p) {
         return std::make_unique<ExhaustivePlacer>(take_number(p, "exhaustive", "max", 531441));
       }},
      {{"optimal",
        "branch and bound: the proven optimum, or the best found with its gap at the limit "
        "(~20 ops on 4 devices in seconds)",
        "seconds=60,nodes=0", true},
       [](PlacerParams& p) {
         return std::make_unique<OptimalPlacer>(
             take_number(p, "optimal", "seconds", 60),
             take_integer(p, "optimal", "nodes", 0, 0, std::numeric_limits<std::int64_t>::max()));
       }},
  };
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

void register_placer(PlacerInfo info, PlacerFactory make) {
  std::lock_guard lock(registry_mutex());
  for (Entry& e : registry())
    if (e.info.name == info.name) {
      e = {std::move(info), std::move(make)};
      return;
    }
  registry().push_back({std::move(info), std::move(make)});
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

std::unique_ptr<Placer> make_placer(const std::string& spec) {
  auto [name, params] = parse_placer_spec(spec);
  PlacerFactory make;
  std::string accepted, names;
  {
    std::lock_guard lock(registry_mutex());
    for (const Entry& e : registry()) {
      names += (names.empty() ? "" : ", ") + e.info.name;
      if (e.info.name != name) continue;
      make = e.make;
      accepted = e.info.params.empty() ? "none" : e.info.params;
    }
  }
  if (!make && !component_built(Component::torch) && is_learned_method_name(name))
    throw component_absent(fmt::format("method '{}'", name), Component::torch);
  if (!make) throw InputError(fmt::format("unknown method '{}' (available: {})", name, names));
  auto placer = make(params);
  if (!params.empty())
    throw InputError(fmt::format("method {}: unknown option '{}' (accepted: {})", name,
                                 params.begin()->first, accepted));
  return placer;
}

}  // namespace doppler
