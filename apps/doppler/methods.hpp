#pragma once
// Running a placement method by name (heuristics now; learned methods plug in here too) and
// timing it, for `doppler place` and `doppler compare`.
#include <string>
#include <vector>

#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/run_placer.hpp"

namespace doppler::cli {

/// One placement run.
struct MethodRun : PlacementRun {
  std::string method;      ///< the spec as given
  std::uint64_t seed = 0;  ///< seed used
};

/// Every method name `--methods all` expands to (non-learned placers, minus exhaustive unless
/// the problem is tiny enough for it and optimal beyond 24 ops).
std::vector<std::string> all_methods(const Problem& problem);

/// The method specs of a `--methods` list: comma-separated specs, where a field with '=' (and
/// no ':') continues the previous method's options ("heft,doppler-sim:il=10,sim=20"); "all"
/// expands to all_methods(problem), "learned" to the learned methods. Each spec is validated.
std::vector<std::string> expand_methods(const std::string& list, const Problem& problem);

/// True when the method gives the same result for every seed.
bool method_is_deterministic(const std::string& spec);

/// Throws InputError unless `spec` is a valid method spec (before any work starts).
void validate_method(const std::string& spec);

/// Runs one method (a placer or a learned method) on the problem and scores its assignment
/// with the simulator.
MethodRun run_method(const std::string& spec, const Problem& problem, const PlaceOptions& options);

/// The options of one run of compare or bench-suite: seed `seed`, `calls` simulator calls and/or
/// `seconds`, `threads` threads (0: every core).
PlaceOptions search_options(int seed, std::int64_t calls, double seconds, int threads, int lanes);

/// The budget of a compare or bench-suite run for its heading: "20000 simulations", "10 s (no
/// call limit)" or "5000 simulations or 10 s", and the threads per search when more than one.
std::string budget_text(std::int64_t calls, double seconds, int threads);

/// Lines describing every method (name, description, options) for --help.
std::string methods_help();

}  // namespace doppler::cli
