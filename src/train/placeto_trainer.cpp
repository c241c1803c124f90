// Placeto (Addanki et al., NeurIPS 2019) trained with REINFORCE on the simulator. An episode
// starts from a fixed initial placement and visits the decided ops once each in topological
// order; at every step the policy, which sees the whole current placement, moves the current op
// to a device, the new placement is simulated and the step's reward is the decrease of the
// makespan, normalised by the initial placement's makespan. Returns get a per-step-index
// baseline (mean over the last episodes). One episode costs one simulator call per step.
#include <chrono>
#include <cmath>
#include <deque>
#include <numeric>

#include "policy/nn/placeto_net.hpp"
#include "train/baseline_support.hpp"
#include "train/fused_adam.hpp"

#include "doppler/graph/fingerprint.hpp"

namespace doppler {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using detail::since;

BaselineConfig resolved(BaselineConfig c) {
  if (c.hidden == 0) c.hidden = 32;
  if (c.steps == 0) c.steps = 3;
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

// The REINFORCE update of one episode: the states are rebuilt from the actions and their
// log-probabilities recomputed with autograd in chunks of steps (bounded memory); gradients
// accumulate over the chunks, then one clipped Adam step. Returns {loss, mean entropy}.
std::pair<double, double> update(nn::PlacetoNet& net, detail::FusedAdam& opt, const PlacetoEnv& env,
                                 const std::vector<int>& actions, const std::vector<double>& adv,
                                 const BaselineConfig& c) {
  const int steps = static_cast<int>(actions.size());
  const int n = env.graph.num_nodes, p = env.problem.devices();
  const int chunk = std::max(1, std::min(steps, 8192 / std::max(1, n)));
  opt.zero_grad();
  std::vector<DeviceId> dev = env.init;
  double loss_sum = 0, entropy_sum = 0;
  for (int t0 = 0; t0 < steps; t0 += chunk) {
    const int b = std::min(chunk, steps - t0);
    nn::PlacetoStates s = env.alloc(b);
    auto act = torch::empty({b}, torch::kLong);
    auto a = torch::empty({b});
    for (int i = 0; i < b; ++i) {
      const int t = t0 + i;
      env.fill(s, i, dev, t);
      act[i] = actions[static_cast<std::size_t>(t)];
      a[i] = static_cast<float>(adv[static_cast<std::size_t>(t)]);
      detail::set_device(env.plan, dev, env.plan.nodes[static_cast<std::size_t>(t)],
                         actions[static_cast<std::size_t>(t)]);
    }
    const auto logp = torch::log_softmax(net->forward(env.graph, s, p), 1).narrow(1, 0, p);
    const auto chosen = logp.gather(1, act.unsqueeze(1)).squeeze(1);
    const auto entropy = -(logp.exp() * logp).sum(1);
    const auto loss = -(a * chosen).sum() - c.entropy_weight * entropy.sum();
    loss.backward();
    loss_sum += loss.item<double>();
    entropy_sum += entropy.sum().item<double>();
  }
  if (c.grad_clip > 0) torch::nn::utils::clip_grad_norm_(net->parameters(), c.grad_clip);
  opt.step();
  return {loss_sum, steps ? entropy_sum / steps : 0.0};
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
  std::vector<std::deque<double>> history(static_cast<std::size_t>(steps));
  nn::PlacetoStates state = env.alloc(1);
  while (steps > 0 && (c.episodes == 0 || r.episodes < c.episodes)) {
    // One call stays reserved for the greedy placement's evaluation.
    const std::int64_t left = c.calls > 0 ? c.calls - 1 - r.cost_calls : steps;
    if (left <= 0) break;
    const int t_end = static_cast<int>(std::min<std::int64_t>(steps, left));
    const auto t0 = Clock::now();
    BaselineEpisode st;
    st.episode = r.episodes;
    std::vector<DeviceId> dev = env.init;
    std::vector<int> actions;
    std::vector<double> reward;
    double prev = m0;
    for (int t = 0; t < t_end; ++t) {
      env.fill(state, 0, dev, t);
      const auto probs = device_probs(net, env, state);
      const int a = detail::sample_index(probs.data(), p, false, rng);
      actions.push_back(a);
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
    // Returns, per-step-index baselines (mean over the window, this episode included, as in
    // Placeto's code) and advantages.
    std::vector<double> ret(reward.size()), adv(reward.size());
    double acc = 0;
    for (int t = t_end - 1; t >= 0; --t)
      ret[static_cast<std::size_t>(t)] = acc = reward[static_cast<std::size_t>(t)] + c.gamma * acc;
    for (int t = 0; t < t_end; ++t) {
      auto& h = history[static_cast<std::size_t>(t)];
      h.push_back(ret[static_cast<std::size_t>(t)]);
      if (static_cast<int>(h.size()) > c.baseline_window) h.pop_front();
      const double b = std::accumulate(h.begin(), h.end(), 0.0) / static_cast<double>(h.size());
      adv[static_cast<std::size_t>(t)] = ret[static_cast<std::size_t>(t)] - b;
      if (t == 0) st.baseline = b;
    }
    const auto [loss, entropy] = update(net, opt, env, actions, adv, c);
    st.decisions = t_end;
    st.makespan = prev;
    st.reward = ret.empty() ? 0.0 : ret[0];
    st.loss = loss;
    st.entropy = entropy;
    st.calls = r.cost_calls;
    st.seconds = since(t0);
    st.best = r.best_makespan;
    r.seconds += st.seconds;
    r.decisions += t_end;
    ++r.episodes;
    files.log(st);
    if (on_episode) on_episode(st);
  }
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
  files.finish(r, *net, checkpoint_meta(problem, c, r));
  return r;
}

Assignment place_placeto(const Problem& problem, const std::filesystem::path& checkpoint) {
  use_single_threaded_math();
  detail::BaselineCheckpoint ck =
      detail::open_baseline_checkpoint(checkpoint, BaselineMethod::placeto);
  if (problem.devices() > ck.config.max_devices)
    throw InputError(checkpoint.string(), 0,
                     fmt::format("this Placeto network places on at most {} devices, {} requested",
                                 ck.config.max_devices, problem.devices()));
  nn::PlacetoNet net(net_config(ck.config));
  detail::load_baseline_net(ck, *net, checkpoint);
  const PlacetoEnv env(problem, ck.config.mean_pool);
  return env.assignment(greedy_placement(net, env));
}

}  // namespace doppler
