#pragma once
// Internal: one ASSIGN episode of the dual policy, run step by step in plain C++ from the
// per-episode network outputs (no autograd; the log-probabilities are recomputed in one batch
// by the trainer). SEL picks a candidate, PLC a device for it, the list schedule advances.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "policy/nn/expert_label.hpp"

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/list_schedule.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/policy_config.hpp"

namespace doppler::nn {

/// The per-episode outputs of the networks the rollout needs (row-major float arrays).
struct EpisodeNets {
  int hidden = 0, mlp = 0;
  FeatureMode features = FeatureMode::zscore;  ///< how device features are normalised
  double unit = 1;                             ///< the problem's feature unit (scaled mode)
  std::vector<float> sel_score;  ///< [N] SEL score of every op (static within an episode)
  std::vector<float> h;          ///< [N, H] PLC node embeddings
  std::vector<float> node_pre;   ///< [N, M] PLC first layer: [proj(x_v), H_v] part + bias
  std::vector<float> proj_y_wt;  ///< [F, H] (F = device_feature_count(features)): proj_y's
                                 ///< weight, transposed (the scoring loop's layout)
  std::vector<float> proj_y_b;   ///< [H]
  std::vector<float> fc1_y;      ///< [M, H] first layer, device-feature part
  std::vector<float> fc1_s;      ///< [M, H] first layer, device-sum part
  std::vector<float> fc2_w;      ///< [M]
  float fc2_b = 0;
};

/// How actions are chosen.
enum class ActionMode {
  sample,  ///< with probability epsilon uniform, else sampled from the policy
  greedy,  ///< with probability epsilon uniform, else the most probable action (the reference's)
};

/// Which list scheduler's decisions are recorded as the teacher's (Stage I targets).
enum class Teacher {
  critical_path,  ///< largest b-level first, earliest-start device (the paper's)
  etf,            ///< the candidates that can start earliest on some device, earliest-start device
  heft,           ///< largest upward rank first, earliest-finish device
};

/// "critical-path", "etf" or "heft".
std::string teacher_name(Teacher t);
/// Parses a teacher name; InputError otherwise.
Teacher parse_teacher(const std::string& name);

/// Options of one rollout.
struct RolloutOptions {
  double epsilon = 0;  ///< probability of a uniform action instead of the policy's (both policies)
  double temperature = 1;  ///< the policies sample from softmax(scores / temperature)
  ActionMode mode = ActionMode::greedy;
  bool greedy_sel = false;        ///< SEL takes its most probable op whatever `mode` (a frozen SEL)
  bool record_plc_probs = false;  ///< keep PLC's distribution of every step (Step::plc_probs)
  Teacher teacher_kind = Teacher::critical_path;  ///< whose decisions are recorded
  bool learned_sel = true;  ///< false: critical-path selection (largest b-level, lowest id)
  bool learned_plc = true;  ///< false: critical-path device (earliest start, lowest id)
  bool joint = false;       ///< one network picks (op, device) pairs (PolicyVariant::joint)
  bool teacher = true;      ///< record the critical-path teacher's tied best actions
  /// Record the states the losses read (Step::y, Step::ns: O(P x H) floats per step); false
  /// for inference, whose steps keep only the actions (and plc_probs when asked).
  bool record_states = true;
  /// When set, the recorded teacher actions are this expert's (expert_label.hpp) instead of
  /// `teacher_kind`'s: DAgger labels of the policy's own states. Not for the joint variant.
  const ExpertLabel* expert = nullptr;
  /// With an expert: the probability that a step takes the expert's action (its first tied op
  /// and device) instead of the policy's, DAgger's mixture of the two (0: the policy's states).
  double expert_mix = 0;
};

/// One step of an episode.
struct Step {
  std::vector<NodeId> candidates;  ///< ascending
  NodeId op = 0;                   ///< chosen op
  DeviceId device = 0;             ///< chosen device
  std::vector<float> y;  ///< [P, F] device features, normalised (normalise_device_features)
  std::vector<NodeId> teacher_ops;        ///< candidates with the largest b-level
  std::vector<DeviceId> teacher_devices;  ///< devices where `op` starts earliest
  bool sel_greedy_match = false;          ///< the policy's most probable op is a teacher op
  bool plc_greedy_match = false;          ///< the policy's most probable device is a teacher device
  float sel_prob = 1, plc_prob = 1;       ///< probabilities of the chosen actions under the policy
  /// Probabilities of the chosen actions under the behaviour distribution (the policy mixed with
  /// epsilon-uniform, or the greedy choice): the importance weight of a step is prob / behaviour.
  float sel_behaviour = 1, plc_behaviour = 1;
  std::vector<float> plc_probs;  ///< [P] PLC's distribution (with RolloutOptions::record_plc_probs)
  /// [P, H] z-scored device sums PLC saw (learned PLC): the loss treats them as an observed
  /// state (no gradient through them) unless the exact gradient is asked for.
  std::vector<float> ns;
  // Joint variant: pairs (candidates[c], d) are flattened as c * P + d.
  std::vector<float> joint_y;      ///< [C, P, F] device features of every candidate, normalised
  int joint_index = 0;             ///< the chosen pair
  std::vector<int> joint_teacher;  ///< the teacher's tied best pairs
};

/// A finished episode.
struct Episode {
  std::vector<Step> steps;
  Assignment assignment;  ///< device_of of every op; order = selection order (inputs first)
  double estimate = 0;    ///< the list-schedule makespan estimate
};

/// Runs one episode. `nets` may be empty for a policy that is not learned.
Episode rollout(const Problem& problem, const PolicyConfig& config, const EpisodeNets& nets,
                const RolloutOptions& options, std::mt19937_64& rng);

/// The episode that takes exactly the decisions of `a` (a rollout's assignment: its order is the
/// selection order, deferred inputs with their consumer): the steps record the states, candidates
/// and teacher actions as a rollout would, so that a policy's log-likelihood of `a` can be taken
/// (self-imitation). Not for the joint variant. std::logic_error when `a` is not such an order.
Episode replay(const Problem& problem, const PolicyConfig& config, const Assignment& a,
               Teacher teacher);

/// One step of the joint variant: scores every (candidate, device) pair, picks one, records
/// the features and the teacher's pairs in `st` (whose candidates and teacher_ops are set).
void joint_step(const ListSchedule& s, const EpisodeNets& nets, Step& st, std::vector<double>& sums,
                const RolloutOptions& o, std::mt19937_64& rng);

/// Softmax of `scores` restricted to `idx` (helper shared with the tests).
std::vector<double> masked_softmax(const std::vector<float>& scores,
                                   const std::vector<NodeId>& idx);

/// PLC scores of every device for op v given raw device features y [P, 5] (normalised here) and
/// the device sums S [P, H] (z-scored here; the z-scored sums are copied to `ns_out` when
/// given). Exposed for the consistency tests.
std::vector<float> plc_scores(const EpisodeNets& nets, NodeId v, std::vector<float> y,
                              const std::vector<double>& s, int p,
                              std::vector<float>* ns_out = nullptr);

/// Scratch buffers of plc_scores_into(), reused across the steps of a rollout.
struct PlcScratch {
  std::vector<float> ns;          ///< [P, H] the z-scored device sums of the last call
  std::vector<float> py, pre;     ///< [P, H] projected device features, [P, M] first layer
  std::vector<float> out;         ///< [P] the scores of the last call
  std::vector<double> mean, var;  ///< [H] per-column statistics of the sums
};

/// plc_scores() into `w` without allocating once `w` has grown: y [P, F] already normalised
/// (normalise_device_features); the z-scored sums are left in w.ns. Returns w.out.
const std::vector<float>& plc_scores_into(const EpisodeNets& nets, NodeId v,
                                          const std::vector<float>& y, const std::vector<double>& s,
                                          int p, PlcScratch& w);

/// Device sums S [P, H] z-scored over the devices (population std + 1e-6).
std::vector<float> zscore_device_sums(const std::vector<double>& s, int p, int hidden);

/// Recomputes every step's z-scored device sums (Step::ns) from the embeddings of `nets` (for
/// episodes recorded under older weights, e.g. self-imitation targets).
void refresh_device_sums(Episode& ep, const EpisodeNets& nets, int p);

}  // namespace doppler::nn
