// The optimal placer: depth-first branch and bound over device assignments (see optimal.hpp;
// the bounds are in optimal_bounds.cpp).
#include "doppler/heuristics/optimal.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <queue>

#include <fmt/format.h>

#include "optimal_bounds.hpp"

#include "doppler/util/error.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

namespace {

using Clock = Stopwatch::Clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A topological order that takes the ready op of largest b-level first (ties: lower id).
std::vector<NodeId> branch_order(const Problem& problem) {
  const Graph& g = problem.graph();
  const std::vector<double>& bl = problem.analysis().b_level();
  const auto later = [&](NodeId a, NodeId b) {
    const auto au = static_cast<std::size_t>(a), bu = static_cast<std::size_t>(b);
    return bl[au] != bl[bu] ? bl[au] < bl[bu] : a > b;
  };
  std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> ready(later);
  std::vector<int> pending(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    pending[static_cast<std::size_t>(v)] = static_cast<int>(g.predecessors(v).size());
    if (pending[static_cast<std::size_t>(v)] == 0) ready.push(v);
  }
  std::vector<NodeId> order;
  while (!ready.empty()) {
    const NodeId v = ready.top();
    ready.pop();
    order.push_back(v);
    for (NodeId w : g.successors(v))
      if (--pending[static_cast<std::size_t>(w)] == 0) ready.push(w);
  }
  return order;
}

// Relabels devices by first use along `order`, the canonical form under interchangeable devices.
std::vector<DeviceId> canonical(const std::vector<DeviceId>& dev, const std::vector<NodeId>& order,
                                int p) {
  std::vector<DeviceId> label(static_cast<std::size_t>(p), -1), out(dev.size());
  DeviceId next = 0;
  for (const NodeId v : order) {
    DeviceId& l = label[static_cast<std::size_t>(dev[static_cast<std::size_t>(v)])];
    if (l < 0) l = next++;
    out[static_cast<std::size_t>(v)] = l;
  }
  return out;
}

// The best of the quick heuristics and local searches from fixed seeds 0..kRestarts-1 (20,000
// simulations each, or together half of the caller's budget of evaluations, so the result does not
// depend on the caller's seed; together capped at a quarter of the time limit, which only binds on
// graphs far too big to prove): the initial incumbent. A good incumbent prunes from the first node;
// 30-op graphs take ~0.2 s here.
constexpr int kRestarts = 8;
struct Incumbent {
  std::vector<DeviceId> device_of;
  double makespan = kInf;  // infinity when the budget allowed no simulation
};
Incumbent initial_incumbent(const Problem& problem, const PlaceOptions& options, double seconds,
                            BudgetedEvaluator& eval) {
  Incumbent best;
  SimWorkspace ws;
  const auto consider = [&](const char* spec, std::uint64_t seed, std::int64_t evals,
                            double limit) {
    PlaceOptions o = options;
    o.seed = seed;
    o.budget = {evals, limit};
    BudgetedEvaluator part = eval.part(o.budget);
    o.budget = part.limits();
    const Assignment a = make_placer(spec)->place_within(problem, o, part).assignment;
    const std::optional<double> ms = eval.makespan(a.device_of, ws);
    if (best.device_of.empty() || (ms && *ms < best.makespan))
      best = {a.device_of, ms.value_or(kInf)};
  };
  for (const char* spec : {"critical-path", "heft", "etf", "balanced", "dsc"})
    consider(spec, 0, 2000, 0.25 * seconds);
  // A caller's simulator-call budget caps the restarts together at half of it.
  const std::int64_t budget = eval.limits().evaluations;
  const std::int64_t each =
      budget > 0 ? std::clamp<std::int64_t>(budget / (2 * kRestarts), 1, kDefaultSearchCalls)
                 : kDefaultSearchCalls;
  for (int seed = 0; seed < kRestarts && !eval.spent(); ++seed)
    consider("local-search", static_cast<std::uint64_t>(seed), each, 0.25 * seconds / kRestarts);
  return best;
}

// One child of a search node: a device for the next op and the bound it gives.
struct Child {
  double bound;
  int rank;  // 0 for the incumbent's device, 1 otherwise
  DeviceId device;
  bool operator<(const Child& o) const {
    return bound != o.bound ? bound < o.bound : rank != o.rank ? rank < o.rank : device < o.device;
  }
};

// Depth-first branch and bound state.
class Search {
public:
  Search(const Problem& problem, BudgetedEvaluator& eval, bool symmetric, double seconds,
         std::int64_t nodes)
      : problem_(problem),
        eval_(eval),
        order_(branch_order(problem)),
        bound_(problem, order_, false),
        symmetric_(symmetric),
        seconds_(seconds),
        max_nodes_(nodes),
        n_(problem.graph().num_nodes()),
        p_(problem.devices()) {
    dev_.assign(static_cast<std::size_t>(n_), -1);
    children_.resize(static_cast<std::size_t>(n_));
  }

  // Runs the search from the incumbent `start` until done or a limit is hit.
  void run(const Incumbent& start, Clock::time_point t0) {
    t0_ = t0;
    best_ = symmetric_ ? canonical(start.device_of, order_, p_) : start.device_of;
    const std::optional<double> ms = eval_.makespan(best_, ws_);
    call_hit_ = !ms;
    best_ms_ = ms.value_or(start.makespan);
    root_bound_ = std::max(problem_.transfer_lower_bound(), bound_(dev_));
    if (root_bound_ < best_ms_) descend(0, -1);
  }

  const std::vector<DeviceId>& best() const { return best_; }
  double best_makespan() const { return best_ms_; }
  bool aborted() const { return time_hit_ || node_hit_ || call_hit_; }
  bool time_hit() const { return time_hit_; }
  bool node_hit() const { return node_hit_; }
  bool call_hit() const { return call_hit_; }
  std::int64_t nodes() const { return nodes_; }
  // Lower bound on the optimum: proven makespan, or the least bound of an unexplored subtree.
  double lower_bound() const {
    if (!aborted()) return best_ms_;
    return std::min(best_ms_, std::max(root_bound_, open_bound_));
  }

private:
  // Scores every allowed device for op order_[k] into children_[k], best first.
  void expand(int k, DeviceId max_used) {
    const NodeId v = order_[static_cast<std::size_t>(k)];
    const auto vu = static_cast<std::size_t>(v);
    const DeviceId hi = symmetric_ ? std::min<DeviceId>(p_ - 1, max_used + 1) : p_ - 1;
    std::vector<Child>& kids = children_[static_cast<std::size_t>(k)];
    kids.clear();
    for (DeviceId d = 0; d <= hi; ++d) {
      dev_[vu] = d;
      kids.push_back({bound_(dev_, best_ms_), d == best_[vu] ? 0 : 1, d});
    }
    dev_[vu] = -1;
    std::sort(kids.begin(), kids.end());
  }

  // Counts a node; false once a limit is hit (checked on the clock every 256 nodes).
  bool admit() {
    if (max_nodes_ > 0 && nodes_ >= max_nodes_) node_hit_ = true;
    if ((nodes_ & 255) == 0 && Stopwatch::seconds_since(t0_) > seconds_) time_hit_ = true;
    if (aborted()) return false;
    ++nodes_;
    return true;
  }

  // Simulates the complete assignment and keeps it when it is better.
  void leaf() {
    const std::optional<double> ms = eval_.makespan(dev_, ws_);
    call_hit_ = call_hit_ || !ms;
    if (ms && *ms < best_ms_) {
      best_ms_ = *ms;
      best_ = dev_;
    }
  }

  void descend(int k, DeviceId max_used) {
    if (k == n_) return leaf();
    expand(k, max_used);
    const NodeId v = order_[static_cast<std::size_t>(k)];
    for (const Child& c : children_[static_cast<std::size_t>(k)]) {
      if (c.bound >= best_ms_) break;  // sorted: every later child is pruned too
      if (!admit()) {
        open_bound_ = std::min(open_bound_, c.bound);
        continue;
      }
      dev_[static_cast<std::size_t>(v)] = c.device;
      descend(k + 1, std::max(max_used, c.device));
      dev_[static_cast<std::size_t>(v)] = -1;
      if (aborted()) open_bound_ = std::min(open_bound_, c.bound);
    }
  }

  const Problem& problem_;
  BudgetedEvaluator& eval_;
  std::vector<NodeId> order_;
  detail::PartialBound bound_;
  bool symmetric_;
  double seconds_;
  std::int64_t max_nodes_;
  int n_, p_;
  std::vector<DeviceId> dev_, best_;
  std::vector<std::vector<Child>> children_;
  SimWorkspace ws_;
  Clock::time_point t0_;
  double best_ms_ = kInf, root_bound_ = 0, open_bound_ = kInf;
  std::int64_t nodes_ = 0;
  bool time_hit_ = false, node_hit_ = false, call_hit_ = false;
};

}  // namespace

double OptimalResult::gap() const {
  return proven || lower_bound <= 0 ? 0.0 : makespan / lower_bound - 1;
}

std::string OptimalResult::describe() const {
  const std::string stats = fmt::format("{} nodes, {:.3g} s", nodes, seconds);
  if (proven) return fmt::format("proven optimal, makespan {:.6g} ({})", makespan, stats);
  return fmt::format("best found {:.6g}, lower bound {:.6g} (gap {:.1f}%), {} limit hit ({})",
                     makespan, lower_bound, 100 * gap(),
                     time_limit_hit ? "time" : (node_limit_hit ? "node" : "simulator-call"), stats);
}

std::int64_t optimal_node_limit(const Budget& budget) {
  constexpr std::int64_t kNodesPerCall = 20, kMinNodes = 100000;
  if (budget.evaluations <= 0 || budget.seconds > 0) return 0;
  return std::max(kMinNodes, kNodesPerCall * budget.evaluations);
}

bool devices_interchangeable(const Problem& problem) {
  const Platform& pl = problem.platform();
  if (pl.is_reference()) return true;
  const CostModel& c = problem.cost();
  const DeviceCosts& dc = c.device_costs();
  const int p = problem.devices();
  const auto pu = static_cast<std::size_t>(p);
  for (std::size_t d = 1; d < pu; ++d)
    if (dc.time_per_work[d] != dc.time_per_work[0] || dc.overhead[d] != dc.overhead[0] ||
        dc.slots[d] != dc.slots[0] ||
        (!dc.copy_share.empty() && dc.copy_share[d] != dc.copy_share[0]) ||
        (!dc.contention.empty() && dc.contention[d] != dc.contention[0]))
      return false;
  // Routes: one dedicated link per ordered pair, all of the same latency and bandwidth.
  const HardwareProfile& hw = pl.profile();
  std::vector<char> used(hw.links.size(), 0);
  const LinkSpec* first = nullptr;
  for (int s = 0; s < p; ++s)
    for (int d = 0; d < p; ++d) {
      if (s == d) continue;
      const std::vector<int>& r = hw.route(s, d);
      if (r.size() != 1 || used[static_cast<std::size_t>(r[0])]) return false;
      used[static_cast<std::size_t>(r[0])] = 1;
      const LinkSpec& l = hw.links[static_cast<std::size_t>(r[0])];
      if (!first) first = &l;
      if (l.bandwidth != first->bandwidth || l.latency != first->latency || l.delay != first->delay)
        return false;
    }
  return true;
}

double optimal_lower_bound(const Problem& problem, std::span<const DeviceId> device_of) {
  const Graph& g = problem.graph();
  if (static_cast<int>(device_of.size()) != g.num_nodes())
    throw InputError(fmt::format("partial assignment has {} entries, the graph has {} nodes",
                                 device_of.size(), g.num_nodes()));
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const DeviceId d = device_of[static_cast<std::size_t>(v)];
    if (d < -1 || d >= problem.devices())
      throw InputError(
          fmt::format("node {} is on device {}, outside -1..{}", v, d, problem.devices() - 1));
    for (NodeId u : g.predecessors(v))
      if (d >= 0 && device_of[static_cast<std::size_t>(u)] < 0)
        throw InputError(fmt::format("node {} is assigned but its predecessor {} is not", v, u));
  }
  detail::PartialBound bound(problem);
  return bound(device_of);
}

OptimalOutcome OptimalPlacer::solve(const Problem& problem, const PlaceOptions& options,
                                    BudgetedEvaluator& eval) const {
  const auto t0 = Clock::now();
  const double seconds = options.budget.seconds > 0 ? options.budget.seconds : seconds_;
  const std::int64_t nodes =
      nodes_ == kNodesFromCalls ? optimal_node_limit(options.budget) : nodes_;
  Search search(problem, eval, devices_interchangeable(problem), seconds, nodes);
  search.run(initial_incumbent(problem, options, seconds, eval), t0);
  OptimalOutcome out;
  out.assignment = {problem.devices(), search.best(), {}, name()};
  OptimalResult& r = out.result;
  r.makespan = search.best_makespan();
  r.lower_bound = search.lower_bound();
  r.proven = !search.aborted();
  r.time_limit_hit = search.time_hit();
  r.node_limit_hit = search.node_hit();
  r.call_limit_hit = search.call_hit();
  r.nodes = search.nodes();
  r.seconds = Stopwatch::seconds_since(t0);
  return out;
}

OptimalOutcome OptimalPlacer::solve(const Problem& problem, const PlaceOptions& options) const {
  BudgetedEvaluator eval(problem.simulator(), resolve(options.budget, default_calls()));
  return solve(problem, options, eval);
}

PlaceResult OptimalPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                        BudgetedEvaluator& eval) const {
  OptimalOutcome out = solve(problem, options, eval);
  return {std::move(out.assignment), out.result.describe()};
}

}  // namespace doppler
