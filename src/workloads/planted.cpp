#include "doppler/workloads/planted.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "split_rng.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/types.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/kernels.hpp"

namespace doppler::workloads {

namespace {

constexpr std::int64_t kMaxOps = 1'000'000;
constexpr std::int64_t kMeanTask = 1'000'000'000;  // mean task length on a device with ceil(N/P)
constexpr double kMaxRatio = 100;
constexpr double kMaxDensity = 100;
constexpr double kMaxExtraEdges = 5e7;
constexpr std::int64_t kNearest = 4;  // an extra edge's producer: one of the latest 4 eligible
constexpr int kAttempts = 3;          // tries per extra edge (duplicates and misses are retried)

// The planted generator's stream (salted so it differs from random-dag's for one seed).
class Rng : public SplitRng {
public:
  explicit Rng(std::uint64_t seed) : SplitRng(seed ^ 0x706C616E746564ULL) {}
};

// The planted schedule: on each device, tasks back to back from 0 to `length`.
struct Plan {
  std::int64_t length = 0;                          // L
  std::vector<std::vector<std::int64_t>> start;     // per device, ascending
  std::vector<std::vector<std::int64_t>> end;       // per device, ascending; end[i] = start[i+1]
  std::vector<std::vector<NodeId>> id;              // per device, the tasks' node ids
  std::vector<std::pair<int, std::int64_t>> order;  // (device, index) by start, ties by device
};

struct PlantedEdge {
  NodeId src, dst;
  std::int64_t cost;
  bool same_device;  // free in the planted placement: any cost keeps the optimum
};

void check_params(const PlantedParams& p) {
  if (p.devices < 1 || p.devices > kMaxDevices)
    throw InputError(
        fmt::format("parameter devices must be in 1..{}, got {}", kMaxDevices, p.devices));
  if (p.ops < p.devices || p.ops > kMaxOps)
    throw InputError(fmt::format("parameter ops must be in devices ({})..{}, got {}", p.devices,
                                 kMaxOps, p.ops));
  if (!(p.ratio >= 0 && p.ratio <= kMaxRatio))
    throw InputError(fmt::format("parameter ratio must be in [0, {}], got {}", kMaxRatio, p.ratio));
  if (!(p.density >= 0 && p.density <= kMaxDensity))
    throw InputError(
        fmt::format("parameter density must be in [0, {}], got {}", kMaxDensity, p.density));
  if (static_cast<double>(p.ops) * p.density > kMaxExtraEdges)
    throw InputError(fmt::format("parameters ops x density = {:.3g} extra edges, more than {:.0e}",
                                 static_cast<double>(p.ops) * p.density, kMaxExtraEdges));
}

// Task lengths of one device: each at least half the mean, plus a uniform random composition
// of the rest, so that they sum to `length` exactly.
std::vector<std::int64_t> task_lengths(std::int64_t tasks, std::int64_t length, Rng& rng) {
  const std::int64_t rest = length - tasks * (kMeanTask / 2);
  std::vector<std::int64_t> cuts(static_cast<std::size_t>(tasks - 1));
  for (auto& c : cuts) c = rng.below(rest + 1);
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(rest);
  std::vector<std::int64_t> len(cuts.size());
  for (std::size_t i = 0; i < cuts.size(); ++i)
    len[i] = kMeanTask / 2 + cuts[i] - (i ? cuts[i - 1] : 0);
  return len;
}

// Cuts [0, L] on every device (ceil or floor of N / P tasks each), orders all tasks by start
// time and gives them shuffled node ids.
Plan plan_tasks(const PlantedParams& p, Rng& rng) {
  const std::int64_t per = p.ops / p.devices, extra = p.ops % p.devices;
  Plan plan;
  plan.length = (per + (extra > 0 ? 1 : 0)) * kMeanTask;
  const auto pd = static_cast<std::size_t>(p.devices);
  plan.start.resize(pd);
  plan.end.resize(pd);
  plan.id.resize(pd);
  std::vector<std::tuple<std::int64_t, int, std::int64_t>> by_start;
  by_start.reserve(static_cast<std::size_t>(p.ops));
  for (int d = 0; d < p.devices; ++d) {
    const auto du = static_cast<std::size_t>(d);
    std::int64_t t = 0;
    for (std::int64_t len : task_lengths(per + (d < extra ? 1 : 0), plan.length, rng)) {
      by_start.emplace_back(t, d, static_cast<std::int64_t>(plan.start[du].size()));
      plan.start[du].push_back(t);
      t += len;
      plan.end[du].push_back(t);
    }
    plan.id[du].resize(plan.start[du].size());
  }
  std::sort(by_start.begin(), by_start.end());
  std::vector<NodeId> ids(static_cast<std::size_t>(p.ops));
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<NodeId>(k);
  for (std::size_t k = ids.size(); k > 1; --k)
    std::swap(ids[k - 1], ids[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(k)))]);
  for (std::size_t k = 0; k < by_start.size(); ++k) {
    const auto& [s, d, i] = by_start[k];
    plan.id[static_cast<std::size_t>(d)][static_cast<std::size_t>(i)] = ids[k];
    plan.order.emplace_back(d, i);
  }
  return plan;
}

// Mean compute cost of a task: P x L / N.
double mean_compute(const PlantedParams& p, const Plan& plan) {
  return static_cast<double>(plan.length) * p.devices / static_cast<double>(p.ops);
}

// Draws edge costs: a uniform integer in [0, 2T] plus part of the running shortfall (what
// slack-capped edges could not carry), so that the mean cost approaches T.
class CostDraw {
public:
  explicit CostDraw(double mean) : hi_(std::llround(2 * mean)) {}
  // The cost an edge should have; call accept() with the cost it got.
  std::int64_t want(Rng& rng) {
    drawn_ = rng.below(hi_ + 1);
    return drawn_ + static_cast<std::int64_t>(std::clamp(debt_, 0.0, static_cast<double>(hi_)));
  }
  // Records the cost of the edge of the last want().
  void accept(std::int64_t cost) { debt_ += static_cast<double>(drawn_ - cost); }

private:
  std::int64_t hi_;
  std::int64_t drawn_ = 0;
  double debt_ = 0;
};

// Adds the in-edges of every task, in planted start order.
class EdgePlanter {
public:
  EdgePlanter(const PlantedParams& p, const Plan& plan, Rng& rng)
      : p_(p), plan_(plan), rng_(rng), cost_(p.ratio * mean_compute(p, plan)) {}

  std::vector<PlantedEdge> run() {
    const double whole = std::floor(p_.density);
    for (const auto& [d, i] : plan_.order) {
      srcs_.clear();
      if (i > 0)  // the chain edge, same device
        add(at(plan_.id, d, i - 1), at(plan_.id, d, i), cost_.want(rng_), true);
      const int extra = static_cast<int>(whole) + (rng_.uniform() < p_.density - whole ? 1 : 0);
      for (int k = 0; k < extra; ++k)
        for (int attempt = 0; attempt < kAttempts; ++attempt)
          if (try_extra(d, i)) break;
    }
    return std::move(edges_);
  }

private:
  template <class T>
  static T at(const std::vector<std::vector<T>>& v, int d, std::int64_t i) {
    return v[static_cast<std::size_t>(d)][static_cast<std::size_t>(i)];
  }

  void add(NodeId u, NodeId v, std::int64_t cost, bool same_device) {
    srcs_.push_back(u);
    cost_.accept(cost);
    edges_.push_back({u, v, cost, same_device});
  }

  // One extra in-edge of task i of device d from a random device: on the same device, from a
  // task before its chain predecessor (any cost); from another device, from a task ending at
  // least the wanted cost before it starts (else from its first task, at cost = slack).
  bool try_extra(int d, std::int64_t i) {
    const int sd = static_cast<int>(rng_.below(p_.devices));
    std::int64_t cost = cost_.want(rng_), j = 0;
    if (sd == d) {
      if (i < 2) return false;
      j = i - 2 - rng_.below(std::min(kNearest, i - 1));
    } else {
      const auto& ends = plan_.end[static_cast<std::size_t>(sd)];
      const std::int64_t s = at(plan_.start, d, i);
      const auto last =
          std::upper_bound(ends.begin(), ends.end(), s - cost) - ends.begin() - std::int64_t{1};
      if (last >= 0) {
        j = last - rng_.below(std::min(kNearest, last + 1));
      } else {
        if (ends.front() > s) return false;
        cost = s - ends.front();
      }
    }
    const NodeId u = at(plan_.id, sd, j);
    if (std::find(srcs_.begin(), srcs_.end(), u) != srcs_.end()) return false;
    add(u, at(plan_.id, d, i), cost, sd == d);
    return true;
  }

  const PlantedParams& p_;
  const Plan& plan_;
  Rng& rng_;
  CostDraw cost_;
  std::vector<NodeId> srcs_;  // producers of the current task's in-edges
  std::vector<PlantedEdge> edges_;
};

// Scales the costs so that their mean is `mean` (rounded down to integers): all of them down
// (which keeps every cross edge within its slack), or only the same-device ones up (free in the
// planted placement). Short only when there are no same-device edges to raise.
void match_mean(std::vector<PlantedEdge>& edges, double mean) {
  double sum = 0, free_sum = 0, free_count = 0;
  for (const PlantedEdge& e : edges) {
    sum += static_cast<double>(e.cost);
    free_sum += e.same_device ? static_cast<double>(e.cost) : 0.0;
    free_count += e.same_device ? 1 : 0;
  }
  const double target = mean * static_cast<double>(edges.size());
  if (sum > target) {
    for (PlantedEdge& e : edges)
      e.cost = static_cast<std::int64_t>(std::floor(static_cast<double>(e.cost) * target / sum));
  } else if (sum < target && free_count > 0) {
    const double gap = target - sum;
    for (PlantedEdge& e : edges) {
      if (!e.same_device) continue;
      const double c = static_cast<double>(e.cost);
      e.cost += static_cast<std::int64_t>(
          std::floor(free_sum > 0 ? gap * c / free_sum : gap / free_count));
    }
  }
}

// Mean transfer cost of the edges (all, or only the planted cross-device ones) over mean task
// compute cost; 0 without such edges.
double achieved_ratio(const PlantedParams& p, const Plan& plan,
                      const std::vector<PlantedEdge>& edges, bool cross_only) {
  double sum = 0, count = 0;
  for (const PlantedEdge& e : edges)
    if (!cross_only || !e.same_device) {
      sum += static_cast<double>(e.cost);
      ++count;
    }
  return count > 0 ? sum / count / mean_compute(p, plan) : 0.0;
}

Graph build_graph(const PlantedParams& p, const Plan& plan, const std::vector<PlantedEdge>& edges) {
  const auto n = static_cast<std::size_t>(p.ops);
  std::vector<std::int64_t> compute(n), out_max(n, 0);
  for (std::size_t d = 0; d < plan.id.size(); ++d)
    for (std::size_t i = 0; i < plan.id[d].size(); ++i)
      compute[static_cast<std::size_t>(plan.id[d][i])] = plan.end[d][i] - plan.start[d][i];
  for (const PlantedEdge& e : edges) {
    auto& m = out_max[static_cast<std::size_t>(e.src)];
    m = std::max(m, e.cost);
  }
  GraphBuilder b;
  for (std::size_t v = 0; v < n; ++v) {
    Node node;
    node.kind = OpKind::other;
    node.compute_cost = static_cast<double>(compute[v]);
    node.transfer_cost = 0.0;
    node.flops = 2 * *node.compute_cost;
    node.out_bytes = static_cast<double>(out_max[v]);
    b.add_node(std::move(node));
  }
  for (const PlantedEdge& e : edges)
    b.add_edge(e.src, e.dst, static_cast<double>(e.cost), static_cast<double>(e.cost));
  GraphMeta meta;
  meta.name = "planted";
  meta.origin = "generated";
  meta.params = {{"ops", std::to_string(p.ops)},
                 {"devices", std::to_string(p.devices)},
                 {"optimum", std::to_string(plan.length)},
                 {"ratio", fmt::format("{:.6g}", achieved_ratio(p, plan, edges, false))},
                 {"cross_ratio", fmt::format("{:.6g}", achieved_ratio(p, plan, edges, true))},
                 {"target_ratio", fmt::format("{}", p.ratio)},
                 {"density", fmt::format("{}", p.density)},
                 {"seed", std::to_string(p.seed)}};
  b.set_meta(std::move(meta));
  return b.build();
}

Assignment planted_assignment(const PlantedParams& p, const Plan& plan) {
  Assignment a;
  a.devices = p.devices;
  a.method = "planted";
  a.device_of.assign(static_cast<std::size_t>(p.ops), 0);
  a.order.reserve(static_cast<std::size_t>(p.ops));
  for (const auto& [d, i] : plan.order) {
    const NodeId v = plan.id[static_cast<std::size_t>(d)][static_cast<std::size_t>(i)];
    a.device_of[static_cast<std::size_t>(v)] = d;
    a.order.push_back(v);
  }
  return a;
}

}  // namespace

PlantedInstance generate_planted(const PlantedParams& p) {
  check_params(p);
  Rng rng(p.seed);
  const Plan plan = plan_tasks(p, rng);
  std::vector<PlantedEdge> edges = EdgePlanter(p, plan, rng).run();
  match_mean(edges, p.ratio * mean_compute(p, plan));
  PlantedInstance out;
  out.graph = build_graph(p, plan, edges);
  out.assignment = planted_assignment(p, plan);
  out.optimum = static_cast<double>(plan.length);
  return out;
}

}  // namespace doppler::workloads
