#pragma once
// Simple placers: single device, round-robin, random, balanced (greedy least-loaded) and Baechi's
// m-TOPO.
#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// Every op on one device: the one whose compute costs for the graph sum lowest (the lowest id
/// among equals, so device 0 on identical devices). No transfer, no parallelism: the reference a
/// placement over several devices has to beat.
class SinglePlacer : public Placer {
public:
  std::string name() const override { return "single"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;
};

/// The i-th op in topological order goes to device i mod P.
class RoundRobinPlacer : public Placer {
public:
  std::string name() const override { return "round-robin"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;
};

/// Every op on a uniformly random device (seeded).
class RandomPlacer : public Placer {
public:
  std::string name() const override { return "random"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;
};

/// Ops in topological order, each on the device with the least compute assigned so far
/// (ties: lowest device id).
class BalancedPlacer : public Placer {
public:
  std::string name() const override { return "balanced"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;
};

/// Baechi's m-TOPO (Jeon et al., 2020): ops in topological order fill device 0 up to its memory
/// capacity, then device 1, and so on; capacity = (1 + slack) x total memory / P (the memory of
/// an op is memory_proxy()).
class MTopoPlacer : public Placer {
public:
  explicit MTopoPlacer(double slack = 0.05) : slack_(slack) {}
  std::string name() const override { return "m-topo"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  double slack_;
};

}  // namespace doppler
