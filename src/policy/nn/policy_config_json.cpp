#include "policy/nn/policy_config_json.hpp"

namespace doppler::detail {

using nlohmann::json;

json to_json(const PolicyConfig& c) {
  return {{"variant", policy_variant_name(c.variant)},
          {"hidden", c.hidden},
          {"edge_hidden", c.edge_hidden},
          {"steps", c.steps},
          {"mlp_hidden", c.mlp_hidden},
          {"max_levels", c.max_levels},
          {"defer_inputs", c.defer_inputs},
          {"features", feature_mode_name(c.features)}};
}

PolicyConfig policy_config_from_json(const json& j) {
  PolicyConfig c;
  c.variant = parse_policy_variant(j.at("variant").get<std::string>());
  c.hidden = j.at("hidden").get<int>();
  c.edge_hidden = j.at("edge_hidden").get<int>();
  c.steps = j.at("steps").get<int>();
  c.mlp_hidden = j.at("mlp_hidden").get<int>();
  c.max_levels = j.at("max_levels").get<int>();
  c.defer_inputs = j.at("defer_inputs").get<bool>();
  c.features = parse_feature_mode(j.value("features", std::string("zscore")));
  return c;
}

}  // namespace doppler::detail
