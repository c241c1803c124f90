#pragma once
// Aggregation of a benchmark suite (`doppler bench-suite`): many instances, many methods, several
// seeds, summarised per method as gaps to the best known value of each instance.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doppler {

/// One graph of a suite, with what its file says about it.
struct SuiteInstance {
  std::string name;               ///< display name (the file's stem)
  std::string file;               ///< path it was read from
  int ops = 0;                    ///< node count
  int devices = 0;                ///< device count it is placed on
  std::optional<double> optimum;  ///< known optimal makespan (file's "optimum" parameter)
  double lower_bound = 0;         ///< max(critical path, work / P) of the problem (>= 0)
};

/// One placement run of one method on one instance with one seed.
struct SuiteRun {
  std::size_t instance = 0;      ///< index into the instance list
  std::string method;            ///< method spec
  std::uint64_t seed = 0;        ///< seed used
  double makespan = 0;           ///< simulated makespan (the instance's unit)
  double seconds = 0;            ///< wall-clock placement time
  std::int64_t evaluations = 0;  ///< simulator calls
};

/// Per-method summary over the instances it ran on. Gaps are mean-over-seeds makespan / best
/// known value - 1 (>= 0 unless a method beats a stated optimum, which flags a wrong file).
struct SuiteMethodSummary {
  std::string method;       ///< method spec
  int instances = 0;        ///< instances with at least one run
  double mean_gap = 0;      ///< mean over instances of the gap
  double worst_gap = 0;     ///< largest gap over instances
  int best = 0;             ///< instances where its mean is the best of all methods (ties count)
  int optimal = 0;          ///< instances where its mean reaches the stated optimum
  double mean_seconds = 0;  ///< mean wall-clock time per run
  std::int64_t max_evaluations = 0;  ///< largest simulator-call count of one run
};

/// Mean makespan over seeds of `method` on `instance`; nullopt when it has no run there.
std::optional<double> suite_mean(const std::vector<SuiteRun>& runs, std::size_t instance,
                                 const std::string& method);

/// Best known value of every instance: the stated optimum when there is one, else the best mean
/// makespan of any method (0 when no method ran on it).
std::vector<double> suite_best_known(const std::vector<SuiteInstance>& instances,
                                     const std::vector<SuiteRun>& runs);

/// Summaries in the order methods first appear in `runs`. Means within a relative `tolerance`
/// of the best (or of the optimum) count as best (optimal).
std::vector<SuiteMethodSummary> summarize_suite(const std::vector<SuiteInstance>& instances,
                                                const std::vector<SuiteRun>& runs,
                                                double tolerance = 1e-9);

}  // namespace doppler
