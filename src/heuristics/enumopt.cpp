#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <set>

#include "doppler/heuristics/groups.hpp"
#include "doppler/heuristics/search_placers.hpp"

namespace doppler {

namespace {

using Mapping = std::vector<DeviceId>;

// Balanced mappings of k blocks onto p devices (device counts differ by at most one), in
// lexicographic order, stopping after `limit` + 1 of them.
void balanced_mappings(int k, int p, std::size_t limit, std::vector<Mapping>& out) {
  const int lo = k / p, extra = k % p;  // `extra` devices take lo + 1 blocks
  std::vector<int> count(static_cast<std::size_t>(p), 0);
  Mapping cur(static_cast<std::size_t>(k));
  int with_extra = 0;
  const auto rec = [&](auto&& self, int i) -> void {
    if (out.size() > limit) return;
    if (i == k) {
      out.push_back(cur);
      return;
    }
    for (DeviceId d = 0; d < p; ++d) {
      int& c = count[static_cast<std::size_t>(d)];
      const bool takes_extra = c == lo;
      if (c > lo || (takes_extra && with_extra == extra)) continue;
      ++c;
      with_extra += takes_extra;
      cur[static_cast<std::size_t>(i)] = d;
      self(self, i + 1);
      --c;
      with_extra -= takes_extra;
    }
  };
  rec(rec, 0);
}

// A random balanced mapping.
Mapping random_balanced(int k, int p, std::mt19937_64& rng) {
  Mapping m(static_cast<std::size_t>(k));
  std::vector<DeviceId> devs(static_cast<std::size_t>(p));
  std::iota(devs.begin(), devs.end(), 0);
  std::shuffle(devs.begin(), devs.end(), rng);  // which devices take the extra blocks
  for (int i = 0; i < k; ++i)
    m[static_cast<std::size_t>(i)] = devs[static_cast<std::size_t>(i % p)];
  std::shuffle(m.begin(), m.end(), rng);
  return m;
}

// Candidate mappings of a k-block group: structured ones first (round-robin and contiguous
// blocks, each rotated by every offset), then every balanced mapping (permutations when k == p)
// or, beyond `limit`, random balanced ones.
std::vector<Mapping> candidate_mappings(int k, int p, std::size_t limit, std::mt19937_64& rng) {
  std::vector<Mapping> out;
  std::set<Mapping> seen;
  const auto add = [&](Mapping m) {
    if (seen.insert(m).second) out.push_back(std::move(m));
  };
  for (DeviceId off = 0; off < p; ++off) {
    Mapping rr(static_cast<std::size_t>(k)), block(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) {
      rr[static_cast<std::size_t>(i)] = (i + off) % p;
      block[static_cast<std::size_t>(i)] =
          static_cast<DeviceId>((static_cast<long>(i) * p / k + off) % p);
    }
    add(rr);
    add(block);
  }
  if (k == 1) return out;
  std::vector<Mapping> all;
  balanced_mappings(k, p, limit, all);
  if (all.size() <= limit) {
    for (auto& m : all) add(std::move(m));
  } else {
    for (std::size_t tries = 0; out.size() < limit && tries < 4 * limit; ++tries)
      add(random_balanced(k, p, rng));
  }
  return out;
}

}  // namespace

PlaceResult EnumOptPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                        BudgetedEvaluator& eval) const {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const auto groups = tensor_groups(g, infer_);
  std::size_t limit = static_cast<std::size_t>(std::max(1, limit_));
  if (options.budget.evaluations > 0 && !groups.empty())
    limit =
        std::max<std::size_t>(static_cast<std::size_t>(p),
                              static_cast<std::size_t>(options.budget.evaluations) / groups.size());
  std::mt19937_64 rng(options.seed);
  std::vector<DeviceId> dev(static_cast<std::size_t>(g.num_nodes()), -1);
  SimWorkspace ws;
  // Input ops follow their first consumer (when colocating): groups of inputs are not
  // enumerated; an unplaced input goes where the block reading it goes.
  const auto deferred = [&](NodeId v) {
    return options.colocate_inputs && g.node(v).kind == OpKind::input && !g.successors(v).empty();
  };
  for (const auto& grp : groups) {
    bool all_inputs = true;
    for (NodeId v : grp) all_inputs = all_inputs && deferred(v);
    if (all_inputs) continue;
    const auto k = static_cast<int>(grp.size());
    std::vector<std::pair<NodeId, int>> feeds;  // unplaced input, index of its reader in grp
    for (int i = 0; i < k; ++i)
      for (NodeId u : g.predecessors(grp[static_cast<std::size_t>(i)]))
        if (deferred(u) && dev[static_cast<std::size_t>(u)] < 0 &&
            std::find_if(feeds.begin(), feeds.end(), [&](const auto& f) { return f.first == u; }) ==
                feeds.end())
          feeds.push_back({u, i});
    double best = std::numeric_limits<double>::infinity();
    Mapping best_m;
    const auto apply = [&](const Mapping& m) {
      for (int i = 0; i < k; ++i)
        dev[static_cast<std::size_t>(grp[static_cast<std::size_t>(i)])] =
            m[static_cast<std::size_t>(i)];
      for (const auto& [u, i] : feeds)
        dev[static_cast<std::size_t>(u)] = m[static_cast<std::size_t>(i)];
    };
    for (const Mapping& m : candidate_mappings(k, p, limit, rng)) {
      apply(m);
      const std::optional<double> ms = eval.makespan(dev, ws);
      if (!ms) {  // the budget is spent: this group and the later ones keep their first mapping
        if (best_m.empty()) best_m = m;
        break;
      }
      if (*ms < best) {
        best = *ms;
        best_m = m;
      }
    }
    apply(best_m);
  }
  return Assignment{p, dev, {}, name()};
}

}  // namespace doppler
