#pragma once
// Configuration of the Doppler policies (architecture and episode rules). Torch-free.
#include <string>

namespace doppler {

/// Which decisions are learned.
enum class PolicyVariant {
  dual,      ///< learned SEL + learned PLC (Doppler)
  sel_only,  ///< learned SEL + critical-path PLC (ablation "doppler-sel")
  plc_only,  ///< critical-path SEL + learned PLC (ablation "doppler-plc")
  joint,     ///< one network scoring (op, device) pairs (ablation "doppler-joint")
};

/// Name of a variant: "dual", "sel", "plc" or "joint".
std::string policy_variant_name(PolicyVariant v);
/// Parses a variant name; InputError otherwise.
PolicyVariant parse_policy_variant(const std::string& name);

/// How the policies' inputs are normalised.
enum class FeatureMode {
  /// The paper's: every node and edge feature z-scored per column over the graph, device
  /// features z-scored over the devices. Blind to the transfer/compute ratio and to P.
  zscore,
  /// Scale-aware and size-free: time-valued features divided by one common scale per problem
  /// (the mean compute cost per op, or the critical path for path lengths) and compressed with
  /// log1p, plus global features (transfer/compute ratio, device count, parallelism slack, graph
  /// size) on every node; device features both z-scored over the devices and as gaps to the
  /// best device in mean-op units. Invariant to multiplying every cost by a constant.
  scaled,
};

/// "zscore" or "scaled".
std::string feature_mode_name(FeatureMode m);
/// Parses a feature-mode name; InputError otherwise.
FeatureMode parse_feature_mode(const std::string& name);
/// Columns of the node features under `m` (5, or 5 + 4 global).
int node_feature_count(FeatureMode m);
/// Columns of the device features under `m` (5, or 10).
int device_feature_count(FeatureMode m);

/// Architecture and episode rules. Weights do not depend on the graph size or device count.
struct PolicyConfig {
  PolicyVariant variant = PolicyVariant::dual;
  int hidden = 128;       ///< node embedding size of the message-passing encoders
  int edge_hidden = 128;  ///< hidden size of the edge network (feature -> hidden x hidden matrix)
  int steps = 6;          ///< message-passing steps (shared weights)
  int mlp_hidden = 64;    ///< hidden size of the scoring MLPs (4 x hidden -> mlp_hidden -> 1)
  int max_levels = 64;    ///< distinct edge-feature values before quantile binning
  /// Input ops (kind input) are not decided by the policies: each goes with its first consumer.
  bool defer_inputs = true;
  /// Input normalisation; checkpoints without the field are zscore (the paper's).
  FeatureMode features = FeatureMode::zscore;
};

}  // namespace doppler
