#pragma once
// The placer interface and the registry of placement methods.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler {

/// Limits for search-based placers. Zero means "the placer's default".
struct Budget {
  std::int64_t evaluations = 0;  ///< simulator calls
  double seconds = 0;            ///< wall-clock seconds
};

/// What a placement run is given besides the problem.
struct PlaceOptions {
  std::uint64_t seed = 0;  ///< seed of every random choice (same seed, same result)
  Budget budget;           ///< limits for search-based placers
  /// Input ops (kind input: where an input block initially lives) follow their first consumer's
  /// device (see colocate_inputs()) in the list schedulers and enumopt; false places them like
  /// any other op.
  bool colocate_inputs = true;
};

/// Puts every input op (kind input) that has consumers on the device of its first consumer:
/// the one earliest in `a.order`, or the lowest id when there is no order.
void colocate_inputs(const Graph& g, Assignment& a);

/// A placement method. place() returns an assignment for problem.devices() devices whose
/// `method` names the placer and whose `order`, when the method has one, is a priority order.
class Placer {
public:
  virtual ~Placer() = default;
  /// Registry name, e.g. "critical-path".
  virtual std::string name() const = 0;
  /// Places every op of the problem's graph.
  virtual Assignment place(const Problem& problem, const PlaceOptions& options) const = 0;
  /// Simulator calls made by the last place() (0 for non-search placers).
  std::int64_t evaluations() const { return evaluations_; }

protected:
  mutable std::int64_t evaluations_ = 0;
};

/// Options of a placer spec "name:key=value,key=value".
using PlacerParams = std::map<std::string, std::string>;

/// Description of a registered placer for listings and --help.
struct PlacerInfo {
  std::string name;         ///< registry name
  std::string description;  ///< one line
  std::string params;       ///< accepted "key=value" options with defaults, or empty
  bool deterministic;       ///< same result for every seed
};

/// Every registered non-learned placer, in the order `--methods all` runs them.
const std::vector<PlacerInfo>& placer_infos();

/// Creates a placer from a spec "name" or "name:key=value,...". Throws InputError for an unknown
/// name or option, naming the valid ones.
std::unique_ptr<Placer> make_placer(const std::string& spec);

}  // namespace doppler
