#include "doppler/policy/policy_config.hpp"

#include "doppler/util/enum_names.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace {

constexpr std::array<EnumName<PolicyVariant>, 4> kVariants{{{PolicyVariant::dual, "dual"},
                                                            {PolicyVariant::sel_only, "sel"},
                                                            {PolicyVariant::plc_only, "plc"},
                                                            {PolicyVariant::joint, "joint"}}};
constexpr std::array<EnumName<FeatureMode>, 2> kFeatureModes{
    {{FeatureMode::zscore, "zscore"}, {FeatureMode::scaled, "scaled"}}};

}  // namespace

std::string policy_variant_name(PolicyVariant v) {
  return std::string(enum_name(kVariants, v));
}

PolicyVariant parse_policy_variant(const std::string& name) {
  return parse_enum(kVariants, name, "policy variant");
}

std::string feature_mode_name(FeatureMode m) {
  return std::string(enum_name(kFeatureModes, m));
}

FeatureMode parse_feature_mode(const std::string& name) {
  return parse_enum(kFeatureModes, name, "feature mode");
}

int node_feature_count(FeatureMode m) {
  return m == FeatureMode::scaled ? 9 : 5;
}

int device_feature_count(FeatureMode m) {
  return m == FeatureMode::scaled ? 10 : 5;
}

}  // namespace doppler
