#pragma once
// Measuring several assignments against each other: their runs interleaved, so that a drift of
// the machine (clock frequency, other load) falls on all of them alike, and identical placements
// measured once.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "doppler/engine/result.hpp"
#include "doppler/graph/assignment.hpp"

namespace doppler {

/// For each assignment, the index of the first one with the same device per op (itself when it
/// is the first). The priority order is not compared: the FIFO engine does not use it.
/// Linear in the total size (hashed), whatever the number of assignments.
std::vector<std::size_t> first_identical_placement(const std::vector<Assignment>& as);

/// The measurements of several assignments and which of them were the same placement.
struct InterleavedMeasurements {
  std::vector<Measurement> measured;  ///< one per assignment, median_run left empty
  std::vector<std::size_t> first;     ///< first_identical_placement of the assignments
};

/// Seed of the measured rounds' orders (measure_interleaved): fixed, so that a measurement's
/// sequence of runs is reproducible.
inline constexpr std::uint64_t kRoundOrderSeed = 0x04de5;

/// Measures `as` with `run` (one engine run of an assignment, seconds): `warmup` unmeasured runs
/// of each distinct placement, then rounds in which every distinct placement that `policy`
/// still wants more runs of (its own min/max repeat, interval target and seconds) runs once,
/// each round in its own order (seeded shuffle: a run depends on the runs before it, and in one
/// fixed order a position's bias stays with one placement). Identical placements
/// (first_identical_placement) share one Measurement. InputError on a bad policy.
InterleavedMeasurements measure_interleaved(
    const std::function<EngineResult(const Assignment&)>& run, const std::vector<Assignment>& as,
    const RepeatPolicy& policy, int warmup);

}  // namespace doppler
