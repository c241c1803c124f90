// GDP (Zhou et al. 2019) trained with REINFORCE on the simulator: every episode samples a device
// for every decided op at once from the policy (one simulator call), the reward is
// (baseline - makespan) / baseline with a moving average of the makespans as baseline, and every
// op's log-probability gets that reward.
#include <chrono>

#include "policy/nn/gdp_net.hpp"
#include "train/baseline_support.hpp"
#include "train/fused_adam.hpp"

#include "doppler/graph/fingerprint.hpp"

namespace doppler {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using detail::since;

BaselineConfig resolved(BaselineConfig c) {
  if (c.hidden == 0) c.hidden = 64;
  if (c.steps == 0) c.steps = 3;
  return c;
}

nn::GdpNetConfig net_config(const BaselineConfig& c) {
  if (c.hidden % c.heads != 0)
    throw InputError(
        fmt::format("gdp: hidden ({}) must be a multiple of heads ({})", c.hidden, c.heads));
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
  double baseline = 0;
  while (tokens > 0 && (c.episodes == 0 || r.episodes < c.episodes)) {
    if (c.calls > 0 && r.cost_calls >= c.calls - 1) break;  // one call kept for the greedy one
    const auto t0 = Clock::now();
    BaselineEpisode st;
    st.episode = r.episodes;
    const auto logp = torch::log_softmax(net->forward(graph, p), 1).narrow(1, 0, p);  // [T, P]
    const std::vector<int> actions = choose(logp.exp(), false, rng);
    const std::vector<DeviceId> dev = placement(plan, n, actions);
    st.makespan = sim.makespan(dev);
    ++r.cost_calls;
    st.baseline = r.episodes == 0 ? st.makespan : baseline;
    st.reward = st.baseline > 0 ? (st.baseline - st.makespan) / st.baseline : 0.0;
    baseline = r.episodes == 0 ? st.makespan
                               : c.baseline_decay * baseline + (1 - c.baseline_decay) * st.makespan;
    auto act = torch::empty({tokens}, torch::kLong);
    std::copy(actions.begin(), actions.end(), act.data_ptr<std::int64_t>());
    const auto chosen = logp.gather(1, act.unsqueeze(1)).squeeze(1);
    const auto entropy = -(logp.exp() * logp).sum(1);
    const auto loss = -st.reward * chosen.sum() - c.entropy_weight * entropy.sum();
    opt.zero_grad();
    loss.backward();
    if (c.grad_clip > 0) torch::nn::utils::clip_grad_norm_(net->parameters(), c.grad_clip);
    opt.step();
    if (st.makespan < r.best_makespan) {
      r.best_makespan = st.makespan;
      r.best = {p, dev, plan.order, "gdp"};
    }
    st.decisions = tokens;
    st.loss = loss.item<double>();
    st.entropy = entropy.mean().item<double>();
    st.calls = r.cost_calls;
    st.seconds = since(t0);
    st.best = r.best_makespan;
    r.seconds += st.seconds;
    r.decisions += tokens;
    ++r.episodes;
    files.log(st);
    if (on_episode) on_episode(st);
  }
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
                     fmt::format("this GDP network places on at most {} devices, {} requested",
                                 ck.config.max_devices, problem.devices()));
  nn::GdpNet net(net_config(ck.config));
  detail::load_baseline_net(ck, *net, checkpoint);
  const detail::DecisionPlan plan = detail::make_decision_plan(problem.graph());
  const nn::GdpGraph graph =
      nn::make_gdp_graph(problem.graph(), problem.cost(), problem.analysis(), plan.nodes);
  return {problem.devices(), greedy_placement(net, graph, plan, problem), plan.order, "gdp"};
}

}  // namespace doppler
