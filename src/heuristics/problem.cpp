#include "doppler/heuristics/problem.hpp"

namespace doppler {

Problem::Problem(const Graph& g, Platform platform)
    : graph_(&g), platform_(std::move(platform)), cost_(platform_.cost_model(g)) {
  analysis_ = std::make_unique<GraphAnalysis>(g, cost_);
  sim_ = std::make_unique<Simulator>(g, platform_);
  lower_bound_ = analysis_->lower_bound(platform_.devices());
}

}  // namespace doppler
