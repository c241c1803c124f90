#pragma once
// The critical-path list scheduler (Kwok & Ahmad style): the paper's baseline and the Stage I
// teacher. Repeatedly take the candidate with the largest b-level and put it on the device where
// it can start earliest. Unlike the reference implementation (which picks the *oldest* ready op
// because of an indexing bug and records a start time that ignores transfer waits), the
// selection really maximises the b-level and start times include input arrivals.
#include <vector>

#include "doppler/heuristics/list_schedule.hpp"
#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// Relative tolerance under which two scores count as tied.
inline constexpr double kTieTolerance = 1e-9;

/// The candidates of `s` with the largest b-level (all tied ones, ascending ids).
std::vector<NodeId> critical_path_selections(const ListSchedule& s,
                                             const std::vector<double>& b_level);

/// The devices where v can start earliest in `s` (all tied ones, ascending).
std::vector<DeviceId> critical_path_devices(const ListSchedule& s, NodeId v);

/// The critical-path placer. Params: ties=lowest (lowest id / device, default) or random
/// (uniform among tied ops and devices, with the seed). Keeps the candidates ordered by b-level
/// as it goes (the same choices as critical_path_selections at every step, without its scan of
/// every candidate): O(N log N + E P) for N ops, E edges, P devices.
class CriticalPathPlacer : public Placer {
public:
  explicit CriticalPathPlacer(bool random_ties = false) : random_ties_(random_ties) {}
  std::string name() const override { return "critical-path"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  bool random_ties_;
};

}  // namespace doppler
