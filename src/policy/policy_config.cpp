#include "doppler/policy/policy_config.hpp"

#include "doppler/util/error.hpp"

namespace doppler {

std::string policy_variant_name(PolicyVariant v) {
  switch (v) {
    case PolicyVariant::dual:
      return "dual";
    case PolicyVariant::sel_only:
      return "sel";
    case PolicyVariant::plc_only:
      return "plc";
    case PolicyVariant::joint:
      return "joint";
  }
  return "dual";
}

PolicyVariant parse_policy_variant(const std::string& name) {
  if (name == "dual") return PolicyVariant::dual;
  if (name == "sel") return PolicyVariant::sel_only;
  if (name == "plc") return PolicyVariant::plc_only;
  if (name == "joint") return PolicyVariant::joint;
  throw InputError("unknown policy variant '" + name + "' (expected dual, sel, plc or joint)");
}

std::string feature_mode_name(FeatureMode m) {
  return m == FeatureMode::scaled ? "scaled" : "zscore";
}

FeatureMode parse_feature_mode(const std::string& name) {
  if (name == "zscore") return FeatureMode::zscore;
  if (name == "scaled") return FeatureMode::scaled;
  throw InputError("unknown feature mode '" + name + "' (expected zscore or scaled)");
}

int node_feature_count(FeatureMode m) {
  return m == FeatureMode::scaled ? 9 : 5;
}

int device_feature_count(FeatureMode m) {
  return m == FeatureMode::scaled ? 10 : 5;
}

}  // namespace doppler
