#pragma once
// The learned placement methods as Placers of the one registry (make_placer("doppler-search"),
// make_placer("gdp:calls=4000"), ...). Linking libdoppler_learn registers them before main().
//
// Budget rule of the methods that train inside place() (docs/training.md): every simulator call
// counts, training included. With a budget of N calls (PlaceOptions::budget.evaluations, or the
// method's default N = 4000):
//   doppler-sim (and -sel, -plc, -joint): Stage I makes no call; S = min(samples, max(1, N/16))
//     calls go to the final best-of-S sampling, 1 to scoring the final greedy rollout, and
//     N - S - 1 rollouts to Stage II;
//   doppler-search: T = floor(train x N) calls to Stage II (its greedy scoring included),
//     S = min(samples, max(1, N/16)) to sampling, and the rest to the annealer started from the
//     best sample with PLC-proposed moves;
//   doppler-il, doppler: S = min(samples, N) sampled rollouts;
//   doppler-sys: as doppler-sim for the simulator calls; its real= engine measurements are
//     reported as calls too.
// Explicit sim= / samples= that do not fit in the budget are an InputError.
namespace doppler {

/// Registers doppler, doppler-il, doppler-sim, doppler-sys, doppler-sel, doppler-plc,
/// doppler-joint, doppler-search, placeto and gdp (idempotent).
void register_learned_placers();

}  // namespace doppler
