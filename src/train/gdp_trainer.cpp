// GDP (Zhou et al. 2019) trained with PPO on the simulator, as in its paper: every update samples
// a batch of placements from the current policy (a device for every decided op at once, one
// simulator call each), gives each the leave-one-out advantage of its makespan within the batch
// (normalised) and minimises the PPO clipped surrogate over every op's decision for a few passes
// over the batch, with an entropy bonus and a scheduled learning rate.
#include <chrono>
#include <cmath>
#include <numeric>

#include "policy/nn/gdp_net.hpp"
#include "train/baseline_support.hpp"
#include "train/fused_adam.hpp"
#include "train/update_pace.hpp"

#include "doppler/graph/fingerprint.hpp"

namespace doppler {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using detail::since;
using detail::UpdatePace;

BaselineConfig resolved(BaselineConfig c) {
  if (c.hidden == 0) c.hidden = 64;
  if (c.steps == 0) c.steps = 3;
  if (c.lr == 0) c.lr = 1e-3;
  if (c.batch == 0) c.batch = 8;
  if (c.ppo_epochs == 0) c.ppo_epochs = 10;
  return c;
}

nn::GdpNetConfig net_config(const BaselineConfig& c) {
  if (c.hidden % c.heads != 0)
    throw InputError("gdp: hidden (" + std::to_string(c.hidden) +
                     ") must be a multiple of heads (" + std::to_string(c.heads) + ")");
  return {c.hidden, c.steps, c.heads, c.layers, c.segment, c.max_devices};
}

// The placement of sampled (or greedy) devices for every token; inputs follow their consumer.
std::vector<DeviceId> placement(const detail::DecisionPlan& plan, int nodes,
                                const std::vector<int>& actions) {
  std::vector<DeviceId> dev(static_cast<std::size_t>(nodes), 0);
  for (std::size_t i = 0; i < plan.nodes.size(); ++i)
    detail::set_device(plan, dev, plan.nodes[i], actions[i]);
  return dev;
}

// One device per token from probabilities [T, P].
std::vector<int> choose(const torch::Tensor& probs, bool greedy, std::mt19937_64& rng) {
  const auto p = probs.detach().contiguous();
  const int t = static_cast<int>(p.size(0)), k = static_cast<int>(p.size(1));
  std::vector<int> out(static_cast<std::size_t>(t));
  const float* data = p.data_ptr<float>();
  for (int i = 0; i < t; ++i)
    out[static_cast<std::size_t>(i)] = detail::sample_index(data + i * k, k, greedy, rng);
  return out;
}

std::vector<DeviceId> greedy_placement(nn::GdpNet& net, const nn::GdpGraph& g,
                                       const detail::DecisionPlan& plan, const Problem& problem) {
  torch::NoGradGuard guard;
  std::mt19937_64 unused(0);
  const auto probs =
      torch::softmax(net->forward(g, problem.devices()), 1).narrow(1, 0, problem.devices());
  return placement(plan, problem.graph().num_nodes(), choose(probs, true, unused));
}

// PPO on one batch: `act` [K, T] holds K placements' choices drawn from `old_logp` [T, P], `adv`
// their advantages; c.ppo_epochs passes at the optimiser's rate, the loss per decision (mean
// over placements and ops). Returns the first pass's loss and mean entropy.
std::pair<double, double> learn(nn::GdpNet& net, detail::FusedAdam& opt, const nn::GdpGraph& graph,
                                const torch::Tensor& old_logp, const torch::Tensor& act,
                                const std::vector<double>& adv, const BaselineConfig& c) {
  const auto k = act.size(0), tokens = act.size(1), p = old_logp.size(1);
  auto adv_t = torch::empty({k, 1});
  for (std::int64_t i = 0; i < k; ++i)
    adv_t[i][0] = static_cast<float>(adv[static_cast<std::size_t>(i)]);
  const auto expand = [&](const torch::Tensor& logp) {  // [T, P] -> chosen [K, T]
    return logp.unsqueeze(0).expand({k, tokens, p}).gather(2, act.unsqueeze(2)).squeeze(2);
  };
  const torch::Tensor old_chosen = expand(old_logp);
  double loss_v = 0, entropy_v = 0;
  for (int e = 0; e < c.ppo_epochs; ++e) {
    const auto logp =
        torch::log_softmax(net->forward(graph, static_cast<int>(p)), 1).narrow(1, 0, p);
    const auto entropy = -(logp.exp() * logp).sum(1);  // [T]
    const auto loss =
        (detail::ppo_surrogate(expand(logp), old_chosen, adv_t.expand({k, tokens}), c.clip) /
             static_cast<double>(k) -
         c.entropy_weight * entropy.sum()) /
        static_cast<double>(tokens);
    opt.zero_grad();
    loss.backward();
    if (c.grad_clip > 0) torch::nn::utils::clip_grad_norm_(net->parameters(), c.grad_clip);
    opt.step();
    if (e == 0) {
      loss_v = loss.item<double>();
      entropy_v = entropy.mean().item<double>();
    }
  }
  return {loss_v, entropy_v};
}

}  // namespace

BaselineResult train_gdp(const Problem& problem, const BaselineConfig& config,
                         const BaselineCallback& on_episode) {
  const BaselineConfig c = resolved(config);
  detail::check_baseline_config(c, problem, "gdp", 2);
  const nn::GdpNetConfig nc = net_config(c);
  use_single_threaded_math();
  torch::manual_seed(c.seed);
  nn::GdpNet net(nc);
  detail::FusedAdam opt(net->parameters(), c.lr);
  std::mt19937_64 rng(c.seed);
  const detail::DecisionPlan plan = detail::make_decision_plan(problem.graph());
  const nn::GdpGraph graph =
      nn::make_gdp_graph(problem.graph(), problem.cost(), problem.analysis(), plan.nodes);
  const detail::BaselineRunFiles files(c.run_dir, BaselineMethod::gdp,
                                       detail::baseline_config_json(c));
  const Simulator& sim = problem.simulator();
  const int p = problem.devices(), n = problem.graph().num_nodes();
  const int tokens = static_cast<int>(plan.nodes.size());

  BaselineResult r;
  r.decisions_per_episode = tokens;
  r.best_makespan = std::numeric_limits<double>::infinity();
  const std::vector<int> batches =
      tokens > 0 ? detail::batch_plan(c, c.batch, 1, 0) : std::vector<int>{};
  const int updates = static_cast<int>(batches.size());
  UpdatePace pace(c.seconds);
  for (int u = 0; u < updates; ++u) {
    if (!pace.may_start_update()) break;  // the time limit: no update that would end past it
    const int k = batches[static_cast<std::size_t>(u)];
    const auto t0 = Clock::now();
    // Rollouts: the policy has no state, one forward pass gives every placement's distribution.
    torch::Tensor old_logp;  // [T, P]
    {
      torch::NoGradGuard guard;
      old_logp = torch::log_softmax(net->forward(graph, p), 1).narrow(1, 0, p).contiguous();
    }
    pace.expect_greedy(since(t0));  // the greedy placement: one forward pass
    const torch::Tensor old_probs = old_logp.exp();
    auto act = torch::empty({k, tokens}, torch::kLong);  // [K, T]
    std::vector<double> makespans(static_cast<std::size_t>(k));
    std::vector<std::vector<DeviceId>> devs(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) {
      const std::vector<int> actions = choose(old_probs, false, rng);
      std::copy(actions.begin(), actions.end(), act[i].data_ptr<std::int64_t>());
      devs[static_cast<std::size_t>(i)] = placement(plan, n, actions);
      makespans[static_cast<std::size_t>(i)] = sim.makespan(devs[static_cast<std::size_t>(i)]);
      ++r.cost_calls;
      if (makespans[static_cast<std::size_t>(i)] < r.best_makespan) {
        r.best_makespan = makespans[static_cast<std::size_t>(i)];
        r.best = {p, devs[static_cast<std::size_t>(i)], plan.order, "gdp"};
      }
    }
    const double rolled = since(t0);
    const bool learns = pace.may_learn(rolled);  // else its samples count, nothing is learnt
    const std::vector<double> adv = leave_one_out_advantages(makespans, true);
    double loss_v = kNaN, entropy_v = kNaN;
    if (learns) {
      opt.set_lr(detail::baseline_lr(c, u, updates));
      std::tie(loss_v, entropy_v) = learn(net, opt, graph, old_logp, act, adv, c);
      ++r.updates;
    }
    const double seconds = since(t0);
    pace.record(rolled, learns ? seconds - rolled : 0.0);
    r.seconds += seconds;
    const double total = std::accumulate(makespans.begin(), makespans.end(), 0.0);
    for (int i = 0; i < k; ++i) {
      BaselineEpisode st;
      st.episode = r.episodes;
      st.decisions = tokens;
      st.makespan = makespans[static_cast<std::size_t>(i)];
      st.baseline = k > 1 ? (total - st.makespan) / (k - 1) : st.makespan;
      st.reward = st.baseline > 0 ? (st.baseline - st.makespan) / st.baseline : 0.0;
      st.advantage = adv[static_cast<std::size_t>(i)];
      st.loss = loss_v;
      st.entropy = entropy_v;
      st.calls = r.cost_calls - (k - 1 - i);
      st.seconds = seconds / k;
      st.best = r.best_makespan;
      r.decisions += tokens;
      ++r.episodes;
      files.log(st);
      if (on_episode) on_episode(st);
    }
    if (c.on_update && !c.on_update(r.best_makespan)) break;  // the caller stops the run
  }
  // The greedy placement, unless it would end past the seconds (then the best sample stands).
  if (pace.may_place_greedily() || !std::isfinite(r.best_makespan)) {
    const auto g0 = Clock::now();
    const std::vector<DeviceId> greedy = greedy_placement(net, graph, plan, problem);
    r.greedy_seconds = since(g0);
    r.greedy = {p, greedy, plan.order, "gdp"};
    r.greedy_makespan = sim.makespan(greedy);
    ++r.cost_calls;
    if (r.greedy_makespan < r.best_makespan) {
      r.best_makespan = r.greedy_makespan;
      r.best = r.greedy;
    }
  }
  const json meta = {{"config", detail::baseline_config_json(c)},
                     {"graph", problem.graph().meta().name},
                     {"graph_fingerprint", fingerprint_hex(graph_fingerprint(problem.graph()))},
                     {"devices", p},
                     {"episodes", r.episodes},
                     {"cost_calls", r.cost_calls}};
  files.finish(r, *net, meta);
  return r;
}

Assignment place_gdp(const Problem& problem, const std::filesystem::path& checkpoint) {
  use_single_threaded_math();
  detail::BaselineCheckpoint ck = detail::open_baseline_checkpoint(checkpoint, BaselineMethod::gdp);
  if (problem.devices() > ck.config.max_devices)
    throw InputError(checkpoint.string(), 0,
                     "this GDP network places on at most " + std::to_string(ck.config.max_devices) +
                         " devices, " + std::to_string(problem.devices()) + " requested");
  nn::GdpNet net(net_config(ck.config));
  detail::load_baseline_net(ck, *net, checkpoint);
  const detail::DecisionPlan plan = detail::make_decision_plan(problem.graph());
  const nn::GdpGraph graph =
      nn::make_gdp_graph(problem.graph(), problem.cost(), problem.analysis(), plan.nodes);
  return {problem.devices(), greedy_placement(net, graph, plan, problem), plan.order, "gdp"};
}

}  // namespace doppler
