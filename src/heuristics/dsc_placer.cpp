// The DSC placer: Dominant Sequence Clustering, then the clusters merged onto the devices.
#include <limits>
#include <optional>

#include "doppler/heuristics/clustering.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

DscPlacer::DscPlacer(const std::string& merge) {
  if (merge == "glb")
    rules_ = {ClusterMerge::glb};
  else if (merge == "lpt")
    rules_ = {ClusterMerge::lpt};
  else if (merge == "eft")
    rules_ = {ClusterMerge::eft};
  else if (merge == "comm")
    rules_ = {ClusterMerge::comm};
  else if (merge == "best")
    rules_ = {ClusterMerge::glb, ClusterMerge::lpt, ClusterMerge::eft, ClusterMerge::comm};
  else
    throw InputError("method dsc: option merge must be glb, lpt, eft, comm or best, found '" +
                     merge + "'");
}

PlaceResult DscPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                    BudgetedEvaluator& eval) const {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const Clustering c =
      dominant_sequence_clustering(g, problem.cost(), problem.analysis().b_level());
  Assignment best;
  double best_makespan = std::numeric_limits<double>::infinity();
  // With at most P clusters every rule gives cluster k device k: one is enough.
  const std::size_t tries = c.clusters <= p ? 1 : rules_.size();
  for (std::size_t i = 0; i < tries; ++i) {
    Assignment a{p, merge_clusters(g, c, problem.cost(), p, rules_[i]), c.order, name()};
    if (options.colocate_inputs) colocate_inputs(g, a);
    if (tries == 1) return a;
    const std::optional<double> m = eval.makespan(a);
    if (!m) {  // the budget is spent: the best so far, or this rule's merge
      if (best.device_of.empty()) best = std::move(a);
      break;
    }
    if (*m < best_makespan) {
      best_makespan = *m;
      best = std::move(a);
    }
  }
  return best;
}

}  // namespace doppler
