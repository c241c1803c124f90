#include "doppler/heuristics/problem.hpp"

#include <algorithm>

#include "doppler/graph/communication_bound.hpp"

namespace doppler {

Problem::Problem(const Graph& g, Platform platform)
    : graph_(&g), platform_(std::move(platform)), cost_(platform_.cost_model(g)) {
  analysis_ = std::make_unique<GraphAnalysis>(g, cost_);
  sim_ = std::make_unique<Simulator>(g, platform_);
  lower_bound_ = analysis_->lower_bound(platform_.devices());
  transfer_lower_bound_ =
      std::max(lower_bound_, communication_lower_bound(g, cost_, platform_.devices()));
}

}  // namespace doppler
