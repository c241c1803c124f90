// Placeto (Addanki et al., NeurIPS 2019) trained by policy gradient on the simulator. An episode
// starts from a fixed initial placement and visits the decided ops once each in topological
// order; at every step the policy, which sees the whole current placement, moves the current op
// to a device, the new placement is simulated and the step's reward is the decrease of the
// makespan, normalised by the initial placement's makespan. One episode costs one simulator call
// per step. Updates learn from batches of episodes of the current policy: the return of step t
// gets the per-step-index baseline of the batch, leave-one-out (the mean of step t's returns in
// the batch's other episodes), the advantages are normalised over the batch, and the loss is
// the PPO clipped surrogate (plain policy gradient with one pass over the batch).
#include <chrono>
#include <cmath>
#include <numeric>
#include <tuple>

#include "policy/nn/placeto_net.hpp"
#include "train/baseline_support.hpp"
#include "train/fused_adam.hpp"
#include "train/update_pace.hpp"

#include "doppler/graph/fingerprint.hpp"

namespace doppler {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Episode steps between two checks of the time limit and of the caller's stop.
constexpr int kCheckSteps = 8;
using detail::since;
using detail::UpdatePace;

BaselineConfig resolved(BaselineConfig c) {
  if (c.hidden == 0) c.hidden = 32;
  if (c.steps == 0) c.steps = 3;
  if (c.lr == 0) c.lr = 1e-3;
  if (c.batch == 0) c.batch = 4;
  if (c.ppo_epochs == 0) c.ppo_epochs = 1;
  return c;
}

nn::PlacetoNetConfig net_config(const BaselineConfig& c) {
  return {c.hidden, c.steps, c.max_devices, c.mean_pool};
}

// The episodes' environment: decided ops, the fixed initial placement and the state tensors.
struct PlacetoEnv {
  const Problem& problem;
  detail::DecisionPlan plan;
  nn::PlacetoGraph graph;
  std::vector<DeviceId> init;
  bool mean_pool;

  PlacetoEnv(const Problem& p, bool mean)
      : problem(p),
        plan(detail::make_decision_plan(p.graph())),
        graph(nn::make_placeto_graph(p.graph(), p.cost())),
        mean_pool(mean) {
    // Placeto's default start: one random placement (seed 0, the same for every run and
    // episode); input ops follow their first consumer.
    std::mt19937_64 rng(0);
    std::uniform_int_distribution<int> dev(0, p.devices() - 1);
    init.assign(static_cast<std::size_t>(p.graph().num_nodes()), 0);
    for (NodeId v : plan.nodes) detail::set_device(plan, init, v, dev(rng));
  }

  int steps() const { return static_cast<int>(plan.nodes.size()); }

  // Allocates B states.
  nn::PlacetoStates alloc(int b) const {
    const int64_t n = graph.num_nodes;
    return {torch::zeros({b, n}, torch::kLong), torch::zeros({b, n, 2}),
            torch::zeros({b}, torch::kLong), torch::zeros({b, 3, n})};
  }

  // Writes row `row` of `s`: step t (ops plan.nodes[0..t) visited) with placement `dev`.
  void fill(nn::PlacetoStates& s, int row, const std::vector<DeviceId>& dev, int t) const {
    const int n = graph.num_nodes;
    const auto r = static_cast<std::size_t>(row), nn = static_cast<std::size_t>(n);
    std::int64_t* d = s.device.data_ptr<std::int64_t>() + r * nn;
    for (int v = 0; v < n; ++v) d[v] = dev[static_cast<std::size_t>(v)];
    float* f = s.flags.data_ptr<float>() + r * nn * 2;
    std::fill(f, f + nn * 2, 0.0f);
    for (int i = 0; i < t; ++i) {
      const NodeId v = plan.nodes[static_cast<std::size_t>(i)];
      f[static_cast<std::size_t>(v) * 2 + 1] = 1.0f;
      for (NodeId u : plan.followers[static_cast<std::size_t>(v)])
        f[static_cast<std::size_t>(u) * 2 + 1] = 1.0f;
    }
    const NodeId cur = plan.nodes[static_cast<std::size_t>(t)];
    f[static_cast<std::size_t>(cur) * 2] = 1.0f;
    s.current.data_ptr<std::int64_t>()[row] = cur;
    nn::placeto_masks(graph, cur, mean_pool, s.masks.data_ptr<float>() + r * 3 * nn);
  }

  Assignment assignment(const std::vector<DeviceId>& dev) const {
    return {problem.devices(), dev, plan.order, "placeto"};
  }
};

// Probabilities of the valid devices for one state (no autograd).
std::vector<float> device_probs(nn::PlacetoNet& net, const PlacetoEnv& env,
                                const nn::PlacetoStates& s) {
  torch::NoGradGuard guard;
  const auto p = nn::placeto_probs(net->forward(env.graph, s, env.problem.devices()))
                     .narrow(1, 0, env.problem.devices())
                     .contiguous();
  return {p.data_ptr<float>(), p.data_ptr<float>() + p.numel()};
}

// The greedy episode: every op moved to its most probable device (no simulator calls).
std::vector<DeviceId> greedy_placement(nn::PlacetoNet& net, const PlacetoEnv& env) {
  std::vector<DeviceId> dev = env.init;
  nn::PlacetoStates s = env.alloc(1);
  std::mt19937_64 unused(0);
  for (int t = 0; t < env.steps(); ++t) {
    env.fill(s, 0, dev, t);
    const auto p = device_probs(net, env, s);
    detail::set_device(env.plan, dev, env.plan.nodes[static_cast<std::size_t>(t)],
                       detail::sample_index(p.data(), env.problem.devices(), true, unused));
  }
  return dev;
}

// One episode of a batch: its actions, their log-probabilities when sampled and the advantages.
struct PlacetoEpisode {
  std::vector<int> actions;
  std::vector<double> old_logp, adv;
};

// One pass of the PPO loss over the batch, divided by `scale` (the batch's decisions): the
// states are rebuilt from the actions and their log-probabilities recomputed with autograd in
// chunks of steps (bounded memory); gradients accumulate over the chunks and episodes, then one
// clipped Adam step. Returns {loss, mean entropy}.
std::pair<double, double> update(nn::PlacetoNet& net, detail::FusedAdam& opt, const PlacetoEnv& env,
                                 const std::vector<PlacetoEpisode>& batch,
                                 const BaselineConfig& c) {
  const int n = env.graph.num_nodes, p = env.problem.devices();
  std::int64_t decisions = 0;
  for (const auto& e : batch) decisions += static_cast<std::int64_t>(e.actions.size());
  const double scale = static_cast<double>(std::max<std::int64_t>(1, decisions));
  opt.zero_grad();
  double loss_sum = 0, entropy_sum = 0;
  for (const auto& e : batch) {
    const int steps = static_cast<int>(e.actions.size());
    const int chunk = std::max(1, std::min(steps, 8192 / std::max(1, n)));
    std::vector<DeviceId> dev = env.init;
    for (int t0 = 0; t0 < steps; t0 += chunk) {
      const int b = std::min(chunk, steps - t0);
      nn::PlacetoStates s = env.alloc(b);
      auto act = torch::empty({b}, torch::kLong);
      auto a = torch::empty({b});
      auto old = torch::empty({b});
      for (int i = 0; i < b; ++i) {
        const auto t = static_cast<std::size_t>(t0 + i);
        env.fill(s, i, dev, t0 + i);
        act[i] = e.actions[t];
        a[i] = static_cast<float>(e.adv[t]);
        old[i] = static_cast<float>(e.old_logp[t]);
        detail::set_device(env.plan, dev, env.plan.nodes[t], e.actions[t]);
      }
      const auto logp = torch::log_softmax(net->forward(env.graph, s, p), 1).narrow(1, 0, p);
      const auto chosen = logp.gather(1, act.unsqueeze(1)).squeeze(1);
      const auto entropy = -(logp.exp() * logp).sum(1);
      const auto loss =
          (detail::ppo_surrogate(chosen, old, a, c.clip) - c.entropy_weight * entropy.sum()) /
          scale;
      loss.backward();
      loss_sum += loss.item<double>();
      entropy_sum += entropy.sum().item<double>();
    }
  }
  if (c.grad_clip > 0) torch::nn::utils::clip_grad_norm_(net->parameters(), c.grad_clip);
  opt.step();
  return {loss_sum, entropy_sum / scale};
}

// Leave-one-out advantages per step index over the batch's returns (episodes may be truncated:
// step t compares the episodes that reached it), normalised by their standard deviation over the
// whole batch. Also returns the baselines of step 0.
std::vector<double> step_baselines(const std::vector<std::vector<double>>& ret,
                                   std::vector<std::vector<double>>& adv) {
  std::size_t longest = 0;
  for (const auto& r : ret) longest = std::max(longest, r.size());
  adv.assign(ret.size(), {});
  for (std::size_t k = 0; k < ret.size(); ++k) adv[k].assign(ret[k].size(), 0.0);
  std::vector<double> base0(ret.size(), 0.0);
  for (std::size_t t = 0; t < longest; ++t) {
    std::vector<double> costs;
    std::vector<std::size_t> who;
    for (std::size_t k = 0; k < ret.size(); ++k)
      if (t < ret[k].size()) {
        costs.push_back(-ret[k][t]);  // a return is a negative cost
        who.push_back(k);
      }
    const std::vector<double> a = leave_one_out_advantages(costs, false);
    const double sum = std::accumulate(costs.begin(), costs.end(), 0.0);
    for (std::size_t i = 0; i < who.size(); ++i) {
      adv[who[i]][t] = a[i];
      if (t == 0)
        base0[who[i]] =
            who.size() > 1 ? -(sum - costs[i]) / static_cast<double>(who.size() - 1) : -costs[i];
    }
  }
  double n = 0, sq = 0;
  for (const auto& a : adv)
    for (double x : a) {
      sq += x * x;
      n += 1;
    }
  const double sd = n > 0 ? std::sqrt(sq / n) : 0.0;  // the advantages have mean 0 per step
  for (auto& a : adv)
    for (double& x : a) x = sd > 1e-12 ? x / sd : 0.0;
  return base0;
}

json checkpoint_meta(const Problem& problem, const BaselineConfig& c, const BaselineResult& r) {
  return {{"config", detail::baseline_config_json(c)},
          {"graph", problem.graph().meta().name},
          {"graph_fingerprint", fingerprint_hex(graph_fingerprint(problem.graph()))},
          {"devices", problem.devices()},
          {"episodes", r.episodes},
          {"cost_calls", r.cost_calls}};
}

}  // namespace

BaselineResult train_placeto(const Problem& problem, const BaselineConfig& config,
                             const BaselineCallback& on_episode) {
  const BaselineConfig c = resolved(config);
  detail::check_baseline_config(c, problem, "placeto", 3);
  use_single_threaded_math();
  torch::manual_seed(c.seed);
  nn::PlacetoNet net(net_config(c));
  detail::FusedAdam opt(net->parameters(), c.lr);
  std::mt19937_64 rng(c.seed);
  const PlacetoEnv env(problem, c.mean_pool);
  const detail::BaselineRunFiles files(c.run_dir, BaselineMethod::placeto,
                                       detail::baseline_config_json(c));
  const Simulator& sim = problem.simulator();
  const int steps = env.steps(), p = problem.devices();

  BaselineResult r;
  r.decisions_per_episode = steps;
  const double m0 = sim.makespan(env.init);
  const double scale = m0 > 0 ? m0 : 1.0;  // rewards are normalised by the initial makespan
  r.cost_calls = 1;
  r.best_makespan = m0;
  r.best = env.assignment(env.init);
  // Episodes of `steps` calls each; the initial evaluation and the greedy one are reserved.
  const std::vector<int> batches =
      steps > 0 ? detail::batch_plan(c, c.batch, steps, 1) : std::vector<int>{};
  const int updates = static_cast<int>(batches.size());
  nn::PlacetoStates state = env.alloc(1);
  // An episode of a large graph takes minutes (one simulation per op): the time limit and the
  // caller's stop are also checked every kCheckSteps steps, ending the run without its update.
  UpdatePace pace(c.seconds);
  const auto must_stop = [&] {
    return !pace.within_limit() || (c.on_update && !c.on_update(r.best_makespan));
  };
  bool stopped = false;
  for (int u = 0; u < updates && !stopped; ++u) {
    if (!pace.may_start_update()) break;  // the time limit: no update that would end past it
    const int k = batches[static_cast<std::size_t>(u)];
    const auto t0 = Clock::now();
    std::vector<PlacetoEpisode> batch(static_cast<std::size_t>(k));
    std::vector<std::vector<double>> ret(static_cast<std::size_t>(k)), adv;
    std::vector<BaselineEpisode> stats(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) {
      // One call stays reserved for the greedy placement's evaluation.
      const std::int64_t left = c.calls > 0 ? c.calls - 1 - r.cost_calls : steps;
      const int t_end = static_cast<int>(std::clamp<std::int64_t>(left, 0, steps));
      auto& e = batch[static_cast<std::size_t>(i)];
      std::vector<DeviceId> dev = env.init;
      std::vector<double> reward;
      double prev = m0;
      for (int t = 0; t < t_end && !stopped; ++t) {
        if (t % kCheckSteps == kCheckSteps - 1 && must_stop()) {
          stopped = true;
          break;
        }
        env.fill(state, 0, dev, t);
        const auto probs = device_probs(net, env, state);
        const int a = detail::sample_index(probs.data(), p, false, rng);
        e.actions.push_back(a);
        e.old_logp.push_back(std::log(std::max(probs[static_cast<std::size_t>(a)], 1e-30f)));
        detail::set_device(env.plan, dev, env.plan.nodes[static_cast<std::size_t>(t)], a);
        const double m = sim.makespan(dev);
        ++r.cost_calls;
        reward.push_back((prev - m) / scale);
        prev = m;
        if (m < r.best_makespan) {
          r.best_makespan = m;
          r.best = env.assignment(dev);
        }
      }
      auto& rt = ret[static_cast<std::size_t>(i)];
      rt.assign(reward.size(), 0.0);
      double acc = 0;
      for (int t = static_cast<int>(reward.size()) - 1; t >= 0; --t)
        rt[static_cast<std::size_t>(t)] = acc = reward[static_cast<std::size_t>(t)] + c.gamma * acc;
      auto& st = stats[static_cast<std::size_t>(i)];
      st.decisions = static_cast<int>(reward.size());
      st.makespan = prev;
      st.reward = rt.empty() ? 0.0 : rt[0];
      st.calls = r.cost_calls;
    }
    if (stopped) break;  // no update from a cut batch: the best so far is the answer
    const double rolled = since(t0);
    pace.expect_greedy(rolled / k);              // the greedy placement: about one episode
    const bool learns = pace.may_learn(rolled);  // else its samples count, nothing is learnt
    const std::vector<double> base0 = step_baselines(ret, adv);
    double loss = kNaN, entropy = kNaN;
    if (learns) {
      for (int i = 0; i < k; ++i)
        batch[static_cast<std::size_t>(i)].adv = adv[static_cast<std::size_t>(i)];
      opt.set_lr(detail::baseline_lr(c, u, updates));
      for (int e = 0; e < c.ppo_epochs; ++e) {
        const auto [l, h] = update(net, opt, env, batch, c);
        if (e == 0) std::tie(loss, entropy) = std::pair{l, h};
      }
      ++r.updates;
    }
    const double seconds = since(t0);
    pace.record(rolled, learns ? seconds - rolled : 0.0);
    r.seconds += seconds;
    for (int i = 0; i < k; ++i) {
      auto& st = stats[static_cast<std::size_t>(i)];
      st.episode = r.episodes;
      st.baseline = base0[static_cast<std::size_t>(i)];
      st.advantage =
          adv[static_cast<std::size_t>(i)].empty() ? 0.0 : adv[static_cast<std::size_t>(i)][0];
      st.loss = loss;
      st.entropy = entropy;
      st.seconds = seconds / k;
      st.best = r.best_makespan;
      r.decisions += st.decisions;
      ++r.episodes;
      files.log(st);
      if (on_episode) on_episode(st);
    }
    stopped = c.on_update && !c.on_update(r.best_makespan);  // the caller stops the run
  }
  if (!stopped && pace.may_place_greedily()) {  // another episode's time: skipped when stopped
                                                // or when it would end past the seconds
    const auto g0 = Clock::now();
    const std::vector<DeviceId> greedy = greedy_placement(net, env);
    r.greedy_seconds = since(g0);
    r.greedy = env.assignment(greedy);
    r.greedy_makespan = sim.makespan(greedy);
    ++r.cost_calls;
    if (r.greedy_makespan < r.best_makespan) {
      r.best_makespan = r.greedy_makespan;
      r.best = r.greedy;
    }
  }
  files.finish(r, *net, checkpoint_meta(problem, c, r));
  return r;
}

Assignment place_placeto(const Problem& problem, const std::filesystem::path& checkpoint) {
  use_single_threaded_math();
  detail::BaselineCheckpoint ck =
      detail::open_baseline_checkpoint(checkpoint, BaselineMethod::placeto);
  if (problem.devices() > ck.config.max_devices)
    throw InputError(checkpoint.string(), 0,
                     "this Placeto network places on at most " +
                         std::to_string(ck.config.max_devices) + " devices, " +
                         std::to_string(problem.devices()) + " requested");
  nn::PlacetoNet net(net_config(ck.config));
  detail::load_baseline_net(ck, *net, checkpoint);
  const PlacetoEnv env(problem, ck.config.mean_pool);
  return env.assignment(greedy_placement(net, env));
}

}  // namespace doppler
