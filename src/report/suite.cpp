#include "doppler/report/suite.hpp"

#include <algorithm>
#include <limits>

namespace doppler {

namespace {

// Methods in order of first appearance.
std::vector<std::string> methods_of(const std::vector<SuiteRun>& runs) {
  std::vector<std::string> out;
  for (const SuiteRun& r : runs)
    if (std::find(out.begin(), out.end(), r.method) == out.end()) out.push_back(r.method);
  return out;
}

// Best mean makespan of any method on each instance (infinity where none ran).
std::vector<double> best_means(std::size_t count, const std::vector<SuiteRun>& runs) {
  std::vector<double> best(count, std::numeric_limits<double>::infinity());
  for (const std::string& m : methods_of(runs))
    for (std::size_t i = 0; i < count; ++i)
      if (const auto mean = suite_mean(runs, i, m)) best[i] = std::min(best[i], *mean);
  return best;
}

}  // namespace

std::optional<double> suite_mean(const std::vector<SuiteRun>& runs, std::size_t instance,
                                 const std::string& method) {
  double sum = 0;
  int n = 0;
  for (const SuiteRun& r : runs)
    if (r.instance == instance && r.method == method) {
      sum += r.makespan;
      ++n;
    }
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::vector<double> suite_best_known(const std::vector<SuiteInstance>& instances,
                                     const std::vector<SuiteRun>& runs) {
  std::vector<double> best = best_means(instances.size(), runs);
  for (std::size_t i = 0; i < instances.size(); ++i) {
    if (instances[i].optimum) best[i] = *instances[i].optimum;
    if (best[i] == std::numeric_limits<double>::infinity()) best[i] = 0;
  }
  return best;
}

std::vector<SuiteMethodSummary> summarize_suite(const std::vector<SuiteInstance>& instances,
                                                const std::vector<SuiteRun>& runs,
                                                double tolerance) {
  const std::vector<double> known = suite_best_known(instances, runs);
  const std::vector<double> best = best_means(instances.size(), runs);
  std::vector<SuiteMethodSummary> out;
  for (const std::string& m : methods_of(runs)) {
    SuiteMethodSummary s;
    s.method = m;
    s.worst_gap = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const auto mean = suite_mean(runs, i, m);
      if (!mean) continue;
      ++s.instances;
      const double gap = known[i] > 0 ? *mean / known[i] - 1 : 0.0;
      s.mean_gap += gap;
      s.worst_gap = std::max(s.worst_gap, gap);
      s.best += *mean <= best[i] * (1 + tolerance) ? 1 : 0;
      s.optimal += instances[i].optimum && *mean <= *instances[i].optimum * (1 + tolerance);
    }
    if (s.instances > 0) s.mean_gap /= s.instances;
    if (s.instances == 0) s.worst_gap = 0;
    int n = 0;
    for (const SuiteRun& r : runs)
      if (r.method == m) {
        s.mean_seconds += r.seconds;
        s.max_evaluations = std::max(s.max_evaluations, r.evaluations);
        ++n;
      }
    s.mean_seconds /= std::max(n, 1);
    out.push_back(s);
  }
  return out;
}

}  // namespace doppler
