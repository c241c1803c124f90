#pragma once
// Chain refinement: where devices are plentiful (identical devices and links, no level wider
// than the device count), a placement in which each device runs one chain of ops at a time is a
// choice, per op, of at most one input it receives on its own device (the op after it there);
// its makespan is then a longest path. The choice is improved level by level, each level's
// exactly (a minimum-cost matching) for a soft maximum of the paths through its inputs.
#include <optional>
#include <vector>

#include "doppler/heuristics/problem.hpp"

namespace doppler {

/// Settings of chain refinement (refine_chains).
struct ChainSettings {
  int sweeps = 8;     ///< most forward-backward sweeps (>= 1); stops at one that gains nothing
  double tau = 0.05;  ///< softness of a level's objective, in mean compute times (> 0)
};

/// Whether refine_chains applies to the problem: a uniform cost model (identical devices and
/// links, every transfer between two devices the edge's nominal one), P >= 2, and no level
/// (the longest path in edges from a source) with more than P ops. (Chains of consecutive
/// levels may still outnumber the devices at some instant; the model is then an estimate.)
bool chains_apply(const Problem& problem);

/// The chain model's makespan (cost-model units) of the placement that refine_chains would
/// return for `device_of` with zero sweeps: each op receives on its own device the input on
/// that device whose data would arrive last (one op per input, the earliest op in topological
/// order first), every other input by transfer. Requires chains_apply(problem).
double chain_makespan(const Problem& problem, const std::vector<DeviceId>& device_of);

/// Refines a placement (size N) under the chain model. Each op v has at most one matched input
/// u (u runs on v's device just before it) and each op at most one matched output; v starts at
/// the latest of its matched input's finish and every other input's finish plus the edge's
/// transfer, so the makespan is the longest path with the matched edges free. A sweep re-matches
/// the levels forward, then backward; a level's edges are matched by a minimum-cost assignment
/// of cost -(exp((h + x + t - ref) / tau') - exp((h + t - ref) / tau')) per edge (h: the
/// input's finish, x: the transfer, t: the time from the op's start to the end; ref: the level's
/// largest h + x + t; tau' = tau x the mean compute), every other path held fixed. The chains
/// then get devices in order of their first op's start, each the device free the earliest.
/// The model is the simulator's makespan where no chain waits for a device (tested); otherwise
/// an estimate. Returns the placement of the best sweep (or of the matching read from
/// `device_of` when no sweep gains), nullopt when !chains_apply(problem). Deterministic;
/// O(sweeps x (E + sum over levels of k^2 x (k + m))) time for k inputs matched to m ops.
std::optional<std::vector<DeviceId>> refine_chains(const Problem& problem,
                                                   const std::vector<DeviceId>& device_of,
                                                   const ChainSettings& s = {});

}  // namespace doppler
