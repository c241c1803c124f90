#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "doppler/heuristics/search_placers.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

PlaceResult ExhaustivePlacer::place_within(const Problem& problem, const PlaceOptions&,
                                           BudgetedEvaluator& eval) const {
  const int n = problem.graph().num_nodes();
  const int p = problem.devices();
  const double count = std::pow(static_cast<double>(p), n);
  if (count > max_)
    throw InputError(fmt::format(
        "exhaustive: {} devices ^ {} ops = {:.3g} assignments, more than the limit of {:.0f} "
        "(meant for tiny graphs: <= 12 ops, <= 3 devices)",
        p, n, count, max_));
  // Under the reference model devices are interchangeable: enumerate restricted growth strings
  // (op i uses at most 1 + the largest device used by ops 0..i-1).
  const bool symmetric = problem.platform().is_reference();
  SimWorkspace ws;
  std::vector<DeviceId> dev(static_cast<std::size_t>(n), 0), best = dev;
  double best_ms = std::numeric_limits<double>::infinity();
  const auto rec = [&](auto&& self, int i, DeviceId max_used) -> void {
    if (i == n) {
      const std::optional<double> ms = eval.makespan(dev, ws);
      if (ms && *ms < best_ms) {
        best_ms = *ms;
        best = dev;
      }
      return;
    }
    if (eval.spent()) return;  // the best so far stands
    const DeviceId hi = symmetric ? std::min<DeviceId>(p - 1, max_used + 1) : p - 1;
    for (DeviceId d = 0; d <= hi; ++d) {
      dev[static_cast<std::size_t>(i)] = d;
      self(self, i + 1, std::max(max_used, d));
    }
  };
  rec(rec, 0, -1);
  return Assignment{p, best, {}, name()};
}

}  // namespace doppler
