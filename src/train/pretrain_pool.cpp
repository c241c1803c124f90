// The pretraining pool: drawing the problems and their references.
#include "train/pretrain_pool.hpp"

#include <algorithm>
#include <memory>

#include "doppler/graph/fingerprint.hpp"
#include "doppler/heuristics/placer.hpp"

namespace doppler::detail {

// Makespans of `spec` on every problem, on the threads (one placer each: the registry and a
// placer's counters are not shared across threads).
std::vector<double> simulate_placer(const std::vector<PoolProblem>& problems,
                                    const std::string& spec, std::int64_t budget, int threads) {
  std::vector<std::unique_ptr<Placer>> placers;
  for (std::size_t i = 0; i < problems.size(); ++i) placers.push_back(make_placer(spec));
  std::vector<double> out(problems.size());
  parallel_for(static_cast<int>(problems.size()), threads, [&](int i) {
    const auto k = static_cast<std::size_t>(i);
    PlaceOptions o;
    o.budget.evaluations = budget;
    const Problem& p = *problems[k].problem;
    SimWorkspace ws;
    out[k] = p.simulator().makespan(placers[k]->place(p, o).assignment.device_of, ws);
  });
  return out;
}

std::int64_t PretrainPool::draw(const PretrainSpec& spec, const PolicyConfig& policy, int threads) {
  held = held_out_problems(spec);
  std::vector<std::uint64_t> excluded;
  for (const auto& h : held) excluded.push_back(graph_fingerprint(*h.graph));
  pool = draw_pool(spec, excluded);
  pool_gt.resize(pool.size());
  parallel_for(static_cast<int>(pool.size()), threads, [&](int i) {
    pool_gt[static_cast<std::size_t>(i)] =
        nn::problem_tensors(*pool[static_cast<std::size_t>(i)].problem, policy);
  });
  pool_cp = simulate_placer(pool, "critical-path", 0, threads);
  return static_cast<std::int64_t>(pool.size());
}

void PretrainPool::reference_held_out(const PolicyConfig& policy, std::int64_t eval_budget,
                                      int threads) {
  if (held_cp.size() == held.size()) return;
  for (const auto& h : held) held_gt.push_back(nn::problem_tensors(*h.problem, policy));
  held_cp = simulate_placer(held, "critical-path", 0, threads);
  held_ls = simulate_placer(held, "local-search", eval_budget, threads);
}

}  // namespace doppler::detail
