#include "doppler/train/learned_placers.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "placers/learned_support.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/train/learned_infos.hpp"

namespace doppler {

namespace {

// The factory of learned method `name` (one of learned_placer_infos()).
PlacerFactory learned_factory(const std::string& name) {
  if (name == "doppler") return learned::make_policy_placer;
  if (name == "doppler-search") return learned::make_search_placer;
  if (name == "placeto" || name == "gdp")
    return [name](PlacerParams& p) { return learned::make_baseline_placer(name, p); };
  if (name.rfind("doppler-", 0) == 0)
    return [name](PlacerParams& p) { return learned::make_trained_placer(name, p); };
  throw std::logic_error("learned method '" + name + "' has no factory");
}

}  // namespace

void register_learned_placers() {
  for (PlacerInfo& info : learned_placer_infos()) {
    PlacerFactory make = learned_factory(info.name);
    register_placer(std::move(info), std::move(make));
  }
}

}  // namespace doppler
