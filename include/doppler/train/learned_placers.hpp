#pragma once
// The learned placement methods as Placers of the one registry (make_placer("doppler-search"),
// make_placer("gdp:calls=4000"), ...). Linking libdoppler_learn registers them before main();
// their names, descriptions and options are learned_infos.hpp's.
//
// Budget rule of the learned methods (docs/training.md): every simulator call counts, training
// included, through the run's BudgetedEvaluator (heuristics/budget.hpp), which never lets a run
// spend more calls than its budget. With a budget of N calls (PlaceOptions::budget.evaluations,
// or the method's default N = kDefaultTrainingCalls; doppler-search without training:
// kDefaultSearchCalls, as local-search):
//   doppler-sim (and -sel, -plc, -joint): Stage I makes no call; S = min(samples, max(1, N/16))
//     calls go to the final best-of-S sampling, 1 to scoring the final greedy rollout, and
//     N - S - 1 rollouts to Stage II;
//   doppler-search (train=0, the default): no training; a loaded policy (policy=, default the
//     shipped model) draws S samples, local-search's five list schedulers make 1 call each, and
//     the rest goes to the annealer, started from the best of them with PLC-proposed moves.
//     PlaceOptions::budget.seconds works too (loading and sampling count against it; sampling
//     stops at about a sixteenth of it); with both limits, the first one reached ends the search;
//   doppler-search:train=F (F > 0): T = floor(F x N) calls to Stage II (its greedy scoring
//     included), S to sampling, and the rest to the annealer started from the best sample
//     (no time budget in this mode);
//   doppler-il, doppler: S = min(samples, N) sampled rollouts;
//   doppler-sys: as doppler-sim for the simulator calls; its real= engine measurements are
//     reported as calls too.
// Explicit sim= / samples= that do not fit in the budget are an InputError. Loaded policies
// (doppler, doppler-search) are cached per process, keyed by the checkpoint's canonical path,
// modification time and size.
namespace doppler {

/// Registers doppler, doppler-il, doppler-sim, doppler-sys, doppler-sel, doppler-plc,
/// doppler-joint, doppler-search, placeto and gdp (idempotent).
void register_learned_placers();

}  // namespace doppler
