// One pretraining update: the batch's rollouts, its loss, and the step of both networks.
#include "train/pretrain_update.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "policy/nn/rollout.hpp"
#include "policy/nn/sampling.hpp"
#include "train/pretrain_distill.hpp"
#include "train/update.hpp"

#include "doppler/train/policy_gradient.hpp"

namespace doppler::detail {

void PretrainNets::build(const PolicyConfig& policy, std::uint64_t seed, double lr,
                         const Checkpoint* init, const std::filesystem::path& init_path) {
  torch::manual_seed(seed);
  agent = std::make_unique<nn::DualAgent>(policy);
  if (init) load_networks(*init, *agent, init_path);
  opt_sel = std::make_unique<FusedAdam>(agent->sel->parameters(), lr);
  opt_plc = std::make_unique<FusedAdam>(agent->plc->parameters(), lr);
  keep_good();
}

std::vector<torch::Tensor> PretrainNets::parameters() const {
  auto p = agent->sel->parameters();
  for (auto& t : agent->plc->parameters()) p.push_back(t);
  return p;
}

double PretrainNets::weight_checksum() const {
  double s = 0, k = 1;
  for (const auto& p : parameters()) s += (k++) * p.to(torch::kDouble).sum().item<double>();
  return s;
}

namespace {

// The RNG of one update on one rank: a function of (seed, update, rank) only, so that a resumed
// run draws exactly what the uninterrupted one drew.
std::mt19937_64 update_rng(std::uint64_t seed, int update, int rank) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(update), static_cast<std::uint32_t>(rank), 0x5eedu};
  return std::mt19937_64(seq);
}

// `k` distinct indices of [0, n) (all of them when k >= n), in draw order.
std::vector<int> choose_distinct(int n, int k, std::mt19937_64& rng) {
  std::vector<int> idx(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) idx[static_cast<std::size_t>(i)] = i;
  const int m = std::min(n, k);
  for (int i = 0; i < m; ++i) {
    const int j = std::uniform_int_distribution<int>(i, n - 1)(rng);
    std::swap(idx[static_cast<std::size_t>(i)], idx[static_cast<std::size_t>(j)]);
  }
  idx.resize(static_cast<std::size_t>(m));
  return idx;
}

// The rollouts of an update: Stage I visits the states of uniform actions (greedy on the
// teacher), Stage II samples at cfg.temperature; the teacher is always recorded.
nn::RolloutOptions rollout_options(const PretrainConfig& cfg, bool il) {
  nn::RolloutOptions o;
  o.epsilon = il ? 1.0 : 0.0;  // Stage I visits the states of uniform actions (as train)
  o.temperature = il ? 1.0 : cfg.temperature;
  o.mode = il ? nn::ActionMode::greedy : nn::ActionMode::sample;
  o.teacher = true;
  o.teacher_kind = nn::parse_teacher(cfg.teacher);
  return o;
}

// One problem's batch: rollouts (already done), advantages, objective (imitation in Stage I,
// the policy gradient with leave-one-out advantages in Stage II).
torch::Tensor objective(nn::DualAgent& agent, const PretrainConfig& cfg, const Problem& p,
                        const nn::Prepared& prep, const std::vector<nn::Sampled>& batch, bool il,
                        UpdateStats& us) {
  std::vector<double> costs;
  for (const auto& b : batch) costs.push_back(b.cost);
  const std::vector<double> adv =
      il ? std::vector<double>(costs.size(), 0.0) : leave_one_out_advantages(costs, true);
  UpdateSettings s;
  s.imitation = il;
  s.entropy = cfg.entropy_weight;
  s.temperature = il ? 1.0 : cfg.temperature;
  s.nodes = p.graph().num_nodes();
  s.devices = p.devices();
  return batch_objective(agent, prep, batch, adv, s, us);
}

// Replaces every gradient of `params` by its mean over the ranks (zeros where a parameter has
// none); nothing for one rank.
void average_gradients(std::vector<torch::Tensor> params, const DataParallel& dp) {
  if (dp.ranks <= 1 || !dp.average) return;
  std::size_t n = 0;
  for (auto& p : params) n += static_cast<std::size_t>(p.numel());
  std::vector<float> flat(n);
  std::size_t at = 0;
  for (auto& p : params) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    const auto g = p.grad().contiguous();
    std::copy_n(g.data_ptr<float>(), g.numel(), flat.begin() + static_cast<std::ptrdiff_t>(at));
    at += static_cast<std::size_t>(g.numel());
  }
  dp.average(flat);
  at = 0;
  for (auto& p : params) {
    auto g = p.mutable_grad();
    std::copy_n(flat.begin() + static_cast<std::ptrdiff_t>(at), g.numel(), g.data_ptr<float>());
    at += static_cast<std::size_t>(g.numel());
  }
}

// Backward pass, averaged gradients, clipping and the step at st.lr; st.loss is the loss. False
// when the loss, a gradient norm or a weight is not finite.
bool step_networks(PretrainNets& nets, const PretrainConfig& cfg, const DataParallel& dp,
                   torch::Tensor loss, PretrainStats& st) {
  nets.opt_sel->zero_grad();
  nets.opt_plc->zero_grad();
  st.loss = loss.item<double>();
  if (!std::isfinite(st.loss)) return false;
  loss.backward();
  average_gradients(nets.parameters(), dp);
  for (torch::nn::Module* net : {static_cast<torch::nn::Module*>(nets.agent->sel.get()),
                                 static_cast<torch::nn::Module*>(nets.agent->plc.get())})
    if (cfg.grad_clip > 0 &&
        !std::isfinite(torch::nn::utils::clip_grad_norm_(net->parameters(), cfg.grad_clip)))
      return false;
  nets.opt_sel->set_lr(st.lr);
  nets.opt_plc->set_lr(st.lr);
  nets.opt_sel->step();
  nets.opt_plc->step();
  return all_finite(*nets.agent->sel) && all_finite(*nets.agent->plc);
}

// The batch of one update: the chosen pool problems, a seed per rollout, and per problem its
// encoders' outputs and its rollouts.
struct Batch {
  std::vector<int> chosen;                         // pool indices
  int k = 0;                                       // rollouts per problem
  std::vector<std::uint64_t> seeds;                // per rollout (problem-major)
  std::vector<nn::Prepared> prep;                  // per chosen problem
  std::vector<std::vector<nn::Sampled>> rollouts;  // per chosen problem: its k rollouts
  int size() const { return static_cast<int>(chosen.size()); }
};

// Draws the problems and the rollouts' seeds (a function of seed, update and rank only, so that
// a resumed run draws exactly what the uninterrupted one drew), then runs the encoders of every
// chosen problem (with autograd), one problem after the other, SEL and PLC on two threads. Not
// one problem per thread: autograd orders the backward pass by per-thread sequence numbers, so
// problems taken by whichever thread is free would make the gradient sums (and the run) depend
// on the scheduling.
Batch prepare_batch(nn::DualAgent& agent, const PretrainPool& pool, const PretrainConfig& cfg,
                    const DataParallel& dp, int update) {
  Batch b;
  std::mt19937_64 rng = update_rng(cfg.seed, update, dp.rank);
  b.chosen = choose_distinct(pool.size(), cfg.batch, rng);
  b.k = cfg.rollouts;
  b.seeds.resize(static_cast<std::size_t>(b.size() * b.k));
  for (auto& s : b.seeds) s = rng();
  b.prep.resize(static_cast<std::size_t>(b.size()));
  for (int j = 0; j < b.size(); ++j)
    b.prep[static_cast<std::size_t>(j)] =
        agent.prepare(pool.pool_gt[static_cast<std::size_t>(b.chosen[static_cast<std::size_t>(j)])],
                      true, cfg.threads > 1);
  return b;
}

// Rollouts of every problem of `b` on the threads; costs are simulated when `simulate`, else the
// rollouts' list-schedule estimates.
void roll_out(Batch& b, const PretrainPool& pool, const PretrainConfig& cfg, const UpdatePlan& plan,
              bool simulate) {
  const nn::RolloutOptions ro = rollout_options(cfg, plan.imitation);
  const int k = b.k;
  b.rollouts.assign(static_cast<std::size_t>(b.size()),
                    std::vector<nn::Sampled>(static_cast<std::size_t>(k)));
  parallel_for(b.size() * k, cfg.threads, [&](int job) {
    const int j = job / k;
    const auto i = static_cast<std::size_t>(b.chosen[static_cast<std::size_t>(j)]);
    const PoolProblem& pp = pool.pool[i];
    std::mt19937_64 r(b.seeds[static_cast<std::size_t>(job)]);
    nn::Sampled& out = b.rollouts[static_cast<std::size_t>(j)][static_cast<std::size_t>(job % k)];
    nn::RolloutOptions o = ro;
    if (plan.distill) {
      o.expert = &(*plan.experts)[i];
      o.expert_mix = cfg.expert_mix;
    }
    out.episode =
        nn::rollout(*pp.problem, cfg.policy, b.prep[static_cast<std::size_t>(j)].nets, o, r);
    thread_local SimWorkspace ws;  // a simulator's own workspace is not for concurrent calls
    out.cost = simulate ? pp.problem->simulator().makespan(out.episode.assignment.device_of, ws)
                        : out.episode.estimate;
  });
}

// One loss over all problems of `b` (each problem its own baseline), and the batch's ratios,
// entropies and problem names in `st`.
torch::Tensor batch_loss(nn::DualAgent& agent, const PretrainPool& pool, const PretrainConfig& cfg,
                         const UpdatePlan& plan, const Batch& b, PretrainStats& st) {
  const int n = b.size();
  torch::Tensor loss = torch::zeros({});
  double ratio = 0, best_ratio = 0;
  for (int j = 0; j < n; ++j) {
    const int i = b.chosen[static_cast<std::size_t>(j)];
    const auto& batch = b.rollouts[static_cast<std::size_t>(j)];
    UpdateStats us;
    const nn::Prepared& pj = b.prep[static_cast<std::size_t>(j)];
    const Problem& p = *pool.pool[static_cast<std::size_t>(i)].problem;
    loss = loss + (plan.distill ? distill_objective(agent, cfg, p, pj, batch, us)
                                : objective(agent, cfg, p, pj, batch, plan.imitation, us)) /
                      n;
    double mean = 0, best = std::numeric_limits<double>::infinity();
    for (const auto& s : batch) {
      mean += s.cost / b.k;
      best = std::min(best, s.cost);
    }
    ratio += mean / pool.pool_cp[static_cast<std::size_t>(i)] / n;
    best_ratio += best / pool.pool_cp[static_cast<std::size_t>(i)] / n;
    st.entropy_sel += us.entropy_sel / n;
    st.entropy_plc += us.entropy_plc / n;
    st.problems.push_back(pool.pool[static_cast<std::size_t>(i)].name);
  }
  st.ratio = ratio;
  st.best_ratio = best_ratio;
  return loss;
}

}  // namespace

UpdateOutcome run_update(PretrainNets& nets, const PretrainPool& pool, const PretrainConfig& cfg,
                         const DataParallel& dp, const UpdatePlan& plan) {
  UpdateOutcome out;
  PretrainStats& st = out.stats;
  st.update = plan.update;
  st.imitation = plan.imitation;
  st.lr = plan.lr;
  st.distill = plan.distill;
  Batch b = prepare_batch(*nets.agent, pool, cfg, dp, plan.update);
  // RL rollouts are simulated (and distillation's when it adds the policy gradient).
  const bool simulate = !plan.imitation && (!plan.distill || cfg.pg_weight > 0);
  roll_out(b, pool, cfg, plan, simulate);
  if (simulate) out.simulations = static_cast<std::int64_t>(b.size() * b.k);
  const torch::Tensor loss = batch_loss(*nets.agent, pool, cfg, plan, b, st);
  out.stepped = step_networks(nets, cfg, dp, loss, st);
  return out;
}

}  // namespace doppler::detail
