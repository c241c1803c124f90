#pragma once
// The placer interface and the registry of placement methods.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/budget.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler {

/// What a placement run is given besides the problem.
struct PlaceOptions {
  std::uint64_t seed = 0;  ///< seed of every random choice (same seed, same result)
  Budget budget;           ///< limits of the run; zero: the placer's default_calls()
  /// Input ops (kind input: where an input block initially lives) follow their first consumer's
  /// device (see colocate_inputs()) in the list schedulers and enumopt; false places them like
  /// any other op.
  bool colocate_inputs = true;
  /// Threads a search may use (local-search, multilevel, doppler-search, auto: chains of the
  /// annealer that exchange their best, and merge their changes under a time budget alone; see
  /// AnnealSettings::threads). With a call budget and a
  /// seed the result is the same for the same thread count; 1 gives the single-thread search.
  int threads = 1;
  /// Speculative lanes per annealing chain (see AnnealSettings::lanes): the threads become
  /// threads / lanes chains of `lanes` threads each. 0: the rule of default_lanes().
  int lanes = 0;
  /// Told of the run's progress (improvements, and at least every 0.2 s); returning false stops
  /// the run with the best found so far. Empty: none.
  ProgressCallback progress{};
};

/// Puts every input op (kind input) that has consumers on the device of its first consumer:
/// the one earliest in `a.order`, or the lowest id when there is no order.
void colocate_inputs(const Graph& g, Assignment& a);

/// What one placement run produced and spent.
struct PlaceResult {
  PlaceResult() = default;
  /// A result with an assignment and nothing spent yet (Placer::place fills `spent`).
  PlaceResult(Assignment a, std::string n = {}) : assignment(std::move(a)), note(std::move(n)) {}
  Assignment assignment;  ///< the placement
  Spent spent;            ///< simulator calls (never above the budget's) and seconds
  std::string note;       ///< the method's status line (optimal: proof status), or empty
  /// The anytime curve: the best makespan reported by the search at each improvement (methods
  /// that report none leave it empty; the final assignment's makespan may be lower).
  std::vector<ProgressPoint> curve;
};

/// A placement method. place() returns an assignment for problem.devices() devices whose
/// `method` names the placer and whose `order`, when the method has one, is a priority order.
class Placer {
public:
  virtual ~Placer() = default;
  /// Registry name, e.g. "critical-path".
  virtual std::string name() const = 0;
  /// Simulator calls the method may make when the options' budget sets neither calls nor
  /// seconds: kDefaultSearchCalls for searches, kDefaultTrainingCalls for trained methods, 0 (no
  /// limit) for methods that make a fixed, small number of calls.
  virtual std::int64_t default_calls() const { return 0; }
  /// Places every op of the problem's graph within `options.budget` (resolved with
  /// default_calls()): the assignment, what was spent (never more calls than the budget) and
  /// the method's note.
  PlaceResult place(const Problem& problem, const PlaceOptions& options) const;
  /// Places every op, making or charging every simulator call through `eval` and stopping once
  /// it is spent; `options.budget` holds eval's limits. What a method running another method as
  /// a step (multilevel's inner placer) calls, with a part() of its own evaluator.
  virtual PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                                   BudgetedEvaluator& eval) const = 0;
};

/// Options of a placer spec "name:key=value,key=value".
using PlacerParams = std::map<std::string, std::string>;

/// The kind of value a placer option takes.
enum class OptionType {
  number,   ///< a finite real number, e.g. 0.03
  integer,  ///< a whole number, e.g. 720
  choice,   ///< one of PlacerOption::choices
  string,   ///< free text (e.g. another method's spec)
  path,     ///< a file or directory (a checkpoint or run directory)
};

/// "number", "integer", "choice", "string" or "path".
std::string_view option_type_name(OptionType type);

/// One option of a placer spec "name:key=value", e.g. {"t0", number, "0.03", "...", {}}.
struct PlacerOption {
  std::string name;  ///< the key
  OptionType type;   ///< the kind of value
  /// The value used when the option is absent, as typed in a spec; "" when there is none, or
  /// a derived default in parentheses, e.g. "(budget)" (the description says how).
  std::string default_value;
  std::string description;                ///< one line, with units
  std::vector<std::string> choices = {};  ///< the accepted values of a choice option, else empty
};

/// True when `option` has a default a spec can spell: not empty and not "(derived)".
bool has_fixed_default(const PlacerOption& option);

/// Description of a registered placer for listings and --help.
struct PlacerInfo {
  std::string name;                   ///< registry name
  std::string description;            ///< one line
  std::vector<PlacerOption> options;  ///< every option its factory reads, in listing order
  bool deterministic;                 ///< same result for every seed
  bool learned = false;  ///< a learned method (libdoppler_learn): trains or loads a policy
};

/// The options in the compact form of listings and errors, e.g. "t0=0.03,polish=0.15" or
/// "ties=lowest|random" (a choice: its default first); "" when there are none.
std::string options_text(const PlacerInfo& info);

/// Makes a placer from its options; it removes every option it reads (what is left is unknown).
using PlacerFactory = std::function<std::unique_ptr<Placer>(PlacerParams&)>;

/// Every registered placer: the non-learned ones first, in the order `--methods all` runs
/// them, then the learned ones (registered by libdoppler_learn when it is linked).
std::vector<PlacerInfo> placer_infos();

/// Adds a placement method to the registry, or replaces the one of the same name.
void register_placer(PlacerInfo info, PlacerFactory make);

/// Names of the learned placers that libdoppler_learn registers (torch builds), so that a build
/// without torch answers "needs libtorch" rather than "unknown method".
inline constexpr std::string_view kLearnedMethodNames[] = {
    "doppler",     "doppler-il",    "doppler-sim",    "doppler-sys", "doppler-sel",
    "doppler-plc", "doppler-joint", "doppler-search", "placeto",     "gdp"};

/// True when `name` is one of kLearnedMethodNames.
bool is_learned_method_name(std::string_view name);

/// Splits a spec "name" or "name:key=value,key=value" into its name and options. InputError
/// on an option that is not key=value.
std::pair<std::string, PlacerParams> parse_placer_spec(const std::string& spec);

/// Reads and removes option `key` as a finite number (`fallback` when absent); InputError
/// naming the method and option otherwise.
double take_number(PlacerParams& params, const std::string& method, const std::string& key,
                   double fallback);
/// Reads and removes option `key` as a fraction: a finite number in [0, 1] (`fallback` when
/// absent); InputError naming the method, option and value otherwise.
double take_fraction(PlacerParams& params, const std::string& method, const std::string& key,
                     double fallback);
/// Reads and removes option `key` as an integer in [lo, hi] (`fallback` when absent).
std::int64_t take_integer(PlacerParams& params, const std::string& method, const std::string& key,
                          std::int64_t fallback, std::int64_t lo, std::int64_t hi);
/// Reads and removes option `key` as a string (`fallback` when absent).
std::string take_string(PlacerParams& params, const std::string& key, const std::string& fallback);

/// Creates a placer from a spec "name" or "name:key=value,...". Throws InputError for an unknown
/// name or option, naming the valid ones. Learned methods (doppler, doppler-sim, doppler-search,
/// placeto, gdp, ...) are found when libdoppler_learn is linked.
std::unique_ptr<Placer> make_placer(const std::string& spec);

}  // namespace doppler
