#pragma once
// The option listings of the annealing moves (AnnealSettings::focus, aim, swaps, prefix_cycles,
// tiebreak), shared by every method that anneals (local-search, multilevel's refinement,
// doppler-search).
#include <string>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// `focus`: the fraction in [0, 1] of `which` one-op moves ("" or e.g. "the refinement's ") that
/// pick their op from the critical chain; `note` is appended inside the parentheses (e.g.
/// "; train=0 only").
PlacerOption focus_option(const std::string& which = "", const std::string& note = "");
/// `aim`: the fraction in [0, 1] of the focused moves that mend the chain; `note` as above.
PlacerOption aim_option(const std::string& note = "");
/// `swaps`: 0 turns off the moves that swap two random ops' devices; `note` as above.
PlacerOption swaps_option(const std::string& note = "");
/// `prefix`: 1 anneals in cycles whose lengths do not depend on the call budget, so that a larger
/// budget never ends worse (AnnealSettings::prefix_cycles); `note` as above.
PlacerOption prefix_option(const std::string& note = "");

/// `tiebreak`: 0, 1 or 2 (TieBreak none, strict, metropolis): how a move that keeps the makespan
/// is judged (AnnealSettings::tiebreak); `note` as above.
PlacerOption tiebreak_option(const std::string& note = "");
/// Takes `tiebreak` (0..2, default 0) from `p` for `method` (InputError otherwise).
TieBreak take_tiebreak(PlacerParams& p, const std::string& method);

}  // namespace doppler
