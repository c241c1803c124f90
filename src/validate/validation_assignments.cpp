// The assignments validate_sim() measures: every heuristic once, then random, skewed random and
// perturbed ones, no placement twice.
#include <iterator>
#include <random>

#include <fmt/format.h>

#include "doppler/heuristics/placer.hpp"
#include "doppler/validate/sim_to_real.hpp"

namespace doppler {

namespace {

constexpr const char* kHeuristics[] = {"critical-path", "heft",    "etf",
                                       "m-topo",        "m-etf",   "round-robin",
                                       "balanced",      "enumopt", "local-search"};
constexpr double kFractions[] = {0.05, 0.1, 0.2, 0.35, 0.5, 0.75};
// How many duplicate fillers are skipped before duplicates are let in (a graph with fewer
// distinct placements than `count`, e.g. one device).
constexpr int kDuplicateTriesPerCase = 10;

bool same_placement(const Assignment& a, const Assignment& b) {
  return a.device_of == b.device_of && a.order == b.order;
}

// Index of the case with the same placement as `a`, or -1.
int find_placement(const std::vector<NamedAssignment>& cases, const Assignment& a) {
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (same_placement(cases[i].assignment, a)) return static_cast<int>(i);
  return -1;
}

// Every op on a device drawn with the same per-assignment weights, themselves drawn from a flat
// Dirichlet (independent Exp(1) draws): device shares range from one device holding nearly
// everything to balanced, unlike uniformly random devices, whose shares are all about 1/P.
Assignment skewed_random(const Problem& problem, std::mt19937_64& rng) {
  std::exponential_distribution<double> exp1(1.0);
  std::vector<double> w(static_cast<std::size_t>(problem.devices()));
  for (double& x : w) x = exp1(rng);
  std::discrete_distribution<int> pick(w.begin(), w.end());
  std::vector<DeviceId> dev(static_cast<std::size_t>(problem.graph().num_nodes()));
  for (DeviceId& d : dev) d = static_cast<DeviceId>(pick(rng));
  return {problem.devices(), std::move(dev), problem.graph().topo_order(), "random-skew"};
}

// `base` with each op moved to a uniformly random device with probability `fraction`.
Assignment perturbed(const Assignment& base, double fraction, int devices, std::mt19937_64& rng) {
  Assignment a = base;
  a.method = "perturbed";
  std::bernoulli_distribution move(fraction);
  for (auto& d : a.device_of)
    if (move(rng)) d = static_cast<DeviceId>(rng() % static_cast<unsigned>(devices));
  return a;
}

// The i-th filler: uniformly random, skewed random and perturbed in turn.
NamedAssignment filler(const Problem& problem, const Assignment& base, const PlaceOptions& po,
                       int i, std::mt19937_64& rng) {
  const int k = i / 3;
  switch (i % 3) {
    case 0: {
      PlaceOptions ro = po;
      ro.seed = po.seed + static_cast<std::uint64_t>(i);
      return {fmt::format("random:{}", k), make_placer("random")->place(problem, ro).assignment};
    }
    case 1:
      return {fmt::format("random-skew:{}", k), skewed_random(problem, rng)};
    default: {
      const double f = kFractions[static_cast<std::size_t>(k) % std::size(kFractions)];
      return {fmt::format("perturbed:{}:{}", f, k), perturbed(base, f, problem.devices(), rng)};
    }
  }
}

}  // namespace

std::vector<NamedAssignment> validation_assignments(const Problem& problem, int count,
                                                    std::uint64_t seed,
                                                    std::int64_t search_budget) {
  const Graph& g = problem.graph();
  PlaceOptions po;
  po.seed = seed;
  po.budget.evaluations = search_budget;
  std::vector<NamedAssignment> out;
  for (const char* m : kHeuristics) {
    Assignment a = make_placer(m)->place(problem, po).assignment;
    if (a.order.empty()) a.order = g.topo_order();
    const int same = find_placement(out, a);
    if (same >= 0)
      out[static_cast<std::size_t>(same)].method += std::string("=") + m;
    else
      out.push_back({m, std::move(a)});
  }
  const Assignment base = out.front().assignment;
  std::mt19937_64 rng(seed ^ 0x5eedULL);
  int skipped = 0;
  for (int i = 0; static_cast<int>(out.size()) < count; ++i) {
    NamedAssignment c = filler(problem, base, po, i, rng);
    if (c.assignment.order.empty()) c.assignment.order = g.topo_order();
    if (find_placement(out, c.assignment) >= 0 && skipped++ < kDuplicateTriesPerCase * count)
      continue;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace doppler
