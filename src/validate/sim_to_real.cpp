#include "doppler/validate/sim_to_real.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "doppler/engine/measure_interleaved.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace {

std::vector<double> ranks_of(std::span<const double> x) {
  std::vector<std::size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
    const double avg = 0.5 * static_cast<double>(i + j) + 1;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

// Spearman of the medians of the even-numbered runs against the odd-numbered ones, over the
// assignments (NaN with fewer than 2 runs each).
double split_half_spearman(const std::vector<std::vector<double>>& runs) {
  std::vector<double> even, odd;
  for (const auto& r : runs) {
    if (r.size() < 2) return std::numeric_limits<double>::quiet_NaN();
    std::vector<double> e, o;
    for (std::size_t k = 0; k < r.size(); ++k) (k % 2 == 0 ? e : o).push_back(r[k]);
    even.push_back(summarize_makespans(e).median);
    odd.push_back(summarize_makespans(o).median);
  }
  return spearman(even, odd);
}

}  // namespace

double pearson(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size()) throw InputError("pearson: samples differ in size");
  const std::size_t n = a.size();
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / static_cast<double>(n);
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / static_cast<double>(n);
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa <= 0 || sbb <= 0) return std::numeric_limits<double>::quiet_NaN();
  return sab / std::sqrt(saa * sbb);
}

double spearman(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size()) throw InputError("spearman: samples differ in size");
  const std::vector<double> ra = ranks_of(a), rb = ranks_of(b);
  return pearson(ra, rb);
}

double mape(std::span<const double> predicted, std::span<const double> measured) {
  if (predicted.size() != measured.size() || measured.empty())
    throw InputError("mape: samples differ in size or are empty");
  double s = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    if (!(measured[i] > 0)) throw InputError("mape: measured values must be > 0");
    s += std::abs(predicted[i] - measured[i]) / measured[i];
  }
  return s / static_cast<double>(measured.size());
}

ValidationResult validate_sim(const Problem& problem, Engine& engine, const ValidationOptions& o,
                              const std::function<void(int, int)>& progress) {
  if (&engine.graph() != &problem.graph())
    throw InputError("validate_sim: the engine and the problem must share the graph");
  if (engine.devices() < problem.devices())
    throw InputError("validate_sim: the engine has fewer devices than the problem");
  if (problem.platform().is_reference())
    throw InputError("validate_sim needs a hardware profile (seconds), not the reference model");
  return validate_sim(
      problem,
      [&engine](const Assignment& a, DispatchRule rule) {
        return engine.run(a, rule).makespan_seconds;
      },
      o, progress);
}

ValidationResult validate_sim(const Problem& problem, const RunMakespan& run,
                              const ValidationOptions& o,
                              const std::function<void(int, int)>& progress) {
  if (problem.platform().is_reference())
    throw InputError("validate_sim needs a hardware profile (seconds), not the reference model");
  if (o.repeat < 1) throw InputError("validate_sim: repeat must be >= 1");
  const auto cases = validation_assignments(problem, o.assignments, o.seed, o.search_budget);
  const int n = static_cast<int>(cases.size()), rounds = o.warmup + o.repeat;
  // Rounds over every assignment (not all runs of one assignment in a row), so that a slow
  // period of a shared machine spreads over all assignments instead of inflating a few; each
  // round in its own seeded order, since a run depends on the runs before it: in one fixed order,
  // chainmm's identical placements measured 1.5-8.3% apart by their positions (threads, 8 runs;
  // the first of each round the slowest in all 8). measure_interleaved() shuffles its rounds
  // alike; it also merges identical placements, which validate-sim measures one by one.
  std::vector<std::vector<double>> ms(cases.size());
  std::vector<std::vector<int>> positions(cases.size());
  std::vector<int> order(cases.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o.seed ^ kRoundOrderSeed);
  int done = 0;
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order) {
      const double t = run(cases[static_cast<std::size_t>(i)].assignment, o.rule);
      if (r >= o.warmup) {
        ms[static_cast<std::size_t>(i)].push_back(t);
        positions[static_cast<std::size_t>(i)].push_back(done);
      }
      ++done;
      if (progress) progress(done, n * rounds);
    }
  }
  ValidationResult res;
  std::vector<double> sim, med, mins;
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    ValidationCase c;
    c.method = cases[ui].method;
    c.assignment = cases[ui].assignment;
    c.assignment.method = c.method;
    c.simulated = problem.simulator().makespan(cases[ui].assignment, o.rule);
    c.measured = summarize_makespans(ms[ui]);
    c.run_positions = std::move(positions[ui]);
    sim.push_back(c.simulated);
    med.push_back(c.measured.median);
    mins.push_back(c.measured.min);
    res.cases.push_back(std::move(c));
  }
  res.spearman = spearman(sim, med);
  res.pearson = pearson(sim, med);
  res.mape = mape(sim, med);
  res.spearman_min = spearman(sim, mins);
  res.mape_min = mape(sim, mins);
  res.spearman_split_half = split_half_spearman(ms);
  std::vector<double> ratio;
  for (int i = 0; i < n; ++i)
    ratio.push_back(sim[static_cast<std::size_t>(i)] / med[static_cast<std::size_t>(i)]);
  res.sim_over_measured = summarize_makespans(ratio).median;
  return res;
}

std::string level_warning(double sim_over_measured) {
  if (!(sim_over_measured > kLevelWarningFactor || sim_over_measured < 1 / kLevelWarningFactor))
    return "";
  return fmt::format(
      "the simulated makespans are {:.2f}x the measured ones (median over the assignments): the "
      "profile's level is not this machine's now (it ran at another speed while calibrated, or "
      "the profile is another machine's); the ranking may still hold, the times do not: "
      "re-run doppler calibrate",
      sim_over_measured);
}

}  // namespace doppler
