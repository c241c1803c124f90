#pragma once
// Sim-to-real validation: how well the simulator, given a calibrated hardware profile, predicts
// the engine's measured makespans over many assignments (heuristic, random and perturbed).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "doppler/engine/engine.hpp"
#include "doppler/engine/result.hpp"
#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler {

/// Spearman rank correlation of two samples of equal size (ties get average ranks); NaN when
/// there are fewer than 2 values or one sample is constant.
double spearman(std::span<const double> a, std::span<const double> b);
/// Pearson correlation; NaN when undefined.
double pearson(std::span<const double> a, std::span<const double> b);
/// Mean absolute percentage error of `predicted` against `measured` (every measured value
/// > 0), as a fraction (0.1 = 10%).
double mape(std::span<const double> predicted, std::span<const double> measured);

/// One named assignment to validate.
struct NamedAssignment {
  std::string method;     ///< e.g. "heft", "random:3", "perturbed:0.2:1"
  Assignment assignment;  ///< complete, with a priority order when the method has one
};

/// The assignments validate_sim() uses, `count` of them: every deterministic heuristic (list
/// schedulers, simple baselines, enumopt, local search with `search_budget` simulations), then in
/// turn uniformly random ones ("random:k"), skewed random ones ("random-skew:k": per-assignment
/// device weights from a flat Dirichlet, so device shares range from lopsided to balanced) and
/// the critical-path placement with a growing fraction of ops moved to random devices
/// ("perturbed:f:k"). No placement (devices and order) is measured twice: a heuristic that gives
/// an earlier one's placement is named after it ("critical-path=heft"), and a duplicate random
/// one is drawn again (unless the graph has too few placements, e.g. one device). Every order is
/// complete (a heuristic's own, else topological).
std::vector<NamedAssignment> validation_assignments(const Problem& problem, int count,
                                                    std::uint64_t seed,
                                                    std::int64_t search_budget = 2000);

/// What validate_sim() measures.
struct ValidationOptions {
  int assignments = 30;                    ///< how many (>= the number of heuristics)
  std::uint64_t seed = 0;                  ///< seed of the random and perturbed assignments
  int repeat = 5;                          ///< measured runs per assignment (median)
  int warmup = 1;                          ///< unmeasured runs per assignment
  DispatchRule rule = DispatchRule::fifo;  ///< used by both the simulator and the engine
  std::int64_t search_budget = 2000;       ///< simulations of the local-search heuristic
};

/// One assignment's two makespans.
struct ValidationCase {
  std::string method;     ///< who produced the assignment
  Assignment assignment;  ///< the placement itself (method set), e.g. to re-simulate it later
  double simulated = 0;   ///< simulator makespan (seconds)
  Measurement measured;   ///< engine makespans (seconds; median_run left empty)
  /// When each measured run ran: its position (0-based, warm-up runs counted) in the sequence
  /// of all runs of the validation, one per entry of measured.makespans.
  std::vector<int> run_positions;
};

/// The comparison over every case.
struct ValidationResult {
  std::vector<ValidationCase> cases;
  double spearman = 0;      ///< rank correlation of simulated vs measured medians
  double pearson = 0;       ///< linear correlation
  double mape = 0;          ///< mean |simulated - measured| / measured
  double spearman_min = 0;  ///< rank correlation with the fastest measured run instead
  double mape_min = 0;      ///< MAPE against the fastest measured run
  /// The engine against itself: rank correlation of the medians of the even-numbered measured
  /// rounds with those of the odd-numbered ones (NaN below 2 rounds). Measurement noise caps any
  /// simulator's Spearman near this, at half the runs: assignments closer than the noise cannot
  /// be ranked.
  double spearman_split_half = 0;
  /// Median over the cases of simulated / measured median: the simulator's level against the
  /// engine's (1 = on level; off by a common factor when the machine ran at another speed while
  /// it was calibrated).
  double sim_over_measured = 0;
};

/// sim_over_measured beyond this factor either way (1.25 or below 0.8) is a profile whose level
/// is not this machine's now: on the 2-vCPU VM, two calibrations whose GEMMs ran ~1.5x slower
/// than usual (every device alike, so no device was read slower) priced every assignment 1.4-1.56x
/// too long, the ranking intact.
constexpr double kLevelWarningFactor = 1.25;

/// A one-line warning when `sim_over_measured` is beyond kLevelWarningFactor (what, by how much,
/// what to do), else empty.
std::string level_warning(double sim_over_measured);

/// Runs validation_assignments() on the simulator of `problem` (a hardware platform) and on
/// `engine` (built for the same graph and device count): warmup + repeat rounds, each running
/// every assignment once, each round in its own order (shuffled, seeded by `o.seed`: a run
/// depends on the runs before it, and a fixed order leaves a position's bias on one assignment).
/// `progress(done, total)` is called after each run when set.
ValidationResult validate_sim(const Problem& problem, Engine& engine, const ValidationOptions& o,
                              const std::function<void(int, int)>& progress = {});

/// One measured run of an assignment on some engine backend: its makespan in seconds.
using RunMakespan = std::function<double(const Assignment&, DispatchRule)>;

/// The same with any backend (e.g. MpiEngine, whose run() every rank calls in the same order:
/// the assignments and the run order depend only on `problem` and `o`).
ValidationResult validate_sim(const Problem& problem, const RunMakespan& run,
                              const ValidationOptions& o,
                              const std::function<void(int, int)>& progress = {});

}  // namespace doppler
