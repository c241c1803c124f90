#include "doppler/heuristics/anneal_options.hpp"

namespace doppler {

PlacerOption focus_option(const std::string& which, const std::string& note) {
  return {"focus", OptionType::number, "0",
          "fraction in [0, 1] of " + which +
              "one-op moves that pick their op from the current critical chain (0: uniform" + note +
              ")"};
}

PlacerOption aim_option(const std::string& note) {
  return {"aim", OptionType::number, "0",
          "fraction in [0, 1] of the focused moves that mend the chain: an op that waited for an "
          "input sent from another device joins that input's device, or the input joins the op's "
          "(needs focus > 0" +
              note + ")"};
}

PlacerOption swaps_option(const std::string& note) {
  return {"swaps", OptionType::integer, "1",
          "0: no moves that swap two random ops' devices (one-op moves take their share; on many "
          "lightly loaded devices a random swap nearly always adds transfers" +
              note + ")"};
}

PlacerOption prefix_option(const std::string& note) {
  return {"prefix", OptionType::integer, kPrefixCycles ? "1" : "0",
          "1: under a call budget, anneal in cycles of budget-free lengths (doubling from 1/20 of "
          "a cycle), the last cut short, so that a larger budget never ends worse for the same "
          "seed; 0: the first cycle's schedule fits the budget" +
              note};
}

PlacerOption tiebreak_option(const std::string& note) {
  return {"tiebreak", OptionType::integer, "0",
          "a move that keeps the makespan, judged by the sum of the ops' finish times: 0 taken; 1 "
          "taken when that sum does not rise; 2 when it rises, taken with the Metropolis "
          "probability of its rise per op; 1 and 2: the final descent also takes moves that keep "
          "the makespan and lower the sum (one lane only" +
              note + ")"};
}

TieBreak take_tiebreak(PlacerParams& p, const std::string& method) {
  return static_cast<TieBreak>(take_integer(p, method, "tiebreak", 0, 0, 2));
}

}  // namespace doppler
