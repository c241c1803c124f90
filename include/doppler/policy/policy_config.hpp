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
};

}  // namespace doppler
