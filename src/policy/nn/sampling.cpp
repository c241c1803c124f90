#include "policy/nn/sampling.hpp"

#include <algorithm>
#include <chrono>
#include <future>

namespace doppler::nn {

std::vector<Sampled> sample_rollouts(const Problem& problem, const PolicyConfig& config,
                                     const EpisodeNets& nets, const RolloutOptions& options,
                                     const std::vector<std::uint64_t>& seeds, bool simulate,
                                     int threads) {
  std::vector<Sampled> out(seeds.size());
  const int t = std::max(1, std::min<int>(threads, static_cast<int>(seeds.size())));
  const auto work = [&](int worker) {
    SimWorkspace ws;
    for (std::size_t k = static_cast<std::size_t>(worker); k < seeds.size();
         k += static_cast<std::size_t>(t)) {
      std::mt19937_64 rng(seeds[k]);
      out[k].episode = rollout(problem, config, nets, options, rng);
      if (simulate)
        out[k].cost = problem.simulator().makespan(out[k].episode.assignment.device_of, ws);
    }
  };
  std::vector<std::future<void>> helpers;
  for (int w = 1; w < t; ++w) helpers.push_back(std::async(std::launch::async, work, w));
  work(0);
  for (auto& f : helpers) f.get();
  return out;
}

std::vector<Sampled> sample_rollouts_in_waves(
    const Problem& problem, const PolicyConfig& config, const EpisodeNets& nets,
    const RolloutOptions& options, const std::vector<std::uint64_t>& seeds, bool simulate,
    int threads, std::size_t wave, const std::function<bool(const std::vector<Sampled>&)>& go_on) {
  if (wave == 0) wave = std::max<std::size_t>(1, seeds.size());
  std::vector<Sampled> all;
  for (std::size_t i = 0; i < seeds.size(); i += wave) {
    const std::vector<std::uint64_t> part(
        seeds.begin() + static_cast<std::ptrdiff_t>(i),
        seeds.begin() + static_cast<std::ptrdiff_t>(std::min(seeds.size(), i + wave)));
    auto more = sample_rollouts(problem, config, nets, options, part, simulate, threads);
    for (auto& m : more) all.push_back(std::move(m));
    if (go_on && !go_on(all)) break;
  }
  return all;
}

SampledPlacement sample_placement(const Problem& problem, DualAgent& agent, const GraphTensors& gt,
                                  const SampleOptions& o, Teacher teacher) {
  torch::NoGradGuard no_grad;
  const Prepared prep = agent.prepare(gt, false, false);
  RolloutOptions ro;
  ro.mode = ActionMode::greedy;
  ro.learned_sel = agent.learns_sel();
  ro.learned_plc = agent.learns_plc();
  ro.joint = agent.joint();
  ro.teacher = !ro.learned_sel || !ro.learned_plc;
  ro.teacher_kind = teacher;
  ro.record_plc_probs = true;
  ro.record_states = false;
  ro.temperature = o.temperature;
  const auto start = std::chrono::steady_clock::now();
  std::vector<Sampled> all = sample_rollouts(problem, agent.config(), prep.nets, ro, {0}, true, 1);
  // Progress with `more` rollouts beside `all`.
  const auto go_on = [&](const std::vector<Sampled>& more) {
    if (!o.progress) return true;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double best = all[static_cast<std::size_t>(best_index(all))].cost;
    if (!more.empty()) best = std::min(best, more[static_cast<std::size_t>(best_index(more))].cost);
    return o.progress({s, static_cast<std::int64_t>(all.size() + more.size()), best});
  };
  if (o.samples > 1 && go_on({})) {
    std::mt19937_64 rng(o.seed ^ 0x5a3b1e5ULL);
    std::vector<std::uint64_t> seeds(static_cast<std::size_t>(o.samples - 1));
    for (auto& s : seeds) s = rng();
    ro.mode = ActionMode::sample;
    // In waves when someone watches, so that progress is told and a stop takes effect.
    const std::size_t wave = o.progress ? static_cast<std::size_t>(std::max(1, o.threads) * 2) : 0;
    auto more = sample_rollouts_in_waves(problem, agent.config(), prep.nets, ro, seeds, true,
                                         o.threads, wave, go_on);
    for (auto& m : more) all.push_back(std::move(m));
  }
  const auto b = static_cast<std::size_t>(best_index(all));
  SampledPlacement out;
  out.best = all[b].episode.assignment;
  out.best.method = "doppler";
  out.best_makespan = all[b].cost;
  out.calls = static_cast<std::int64_t>(all.size());
  out.proposal.assign(static_cast<std::size_t>(problem.graph().num_nodes()), {});
  for (const Step& st : all[b].episode.steps)
    if (!st.plc_probs.empty())
      out.proposal[static_cast<std::size_t>(st.op)].assign(st.plc_probs.begin(),
                                                           st.plc_probs.end());
  return out;
}

int best_index(const std::vector<Sampled>& batch) {
  int best = -1;
  for (std::size_t k = 0; k < batch.size(); ++k)
    if (best < 0 || batch[k].cost < batch[static_cast<std::size_t>(best)].cost)
      best = static_cast<int>(k);
  return best;
}

}  // namespace doppler::nn
