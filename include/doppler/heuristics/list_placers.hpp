#pragma once
// Classical list schedulers besides critical path: HEFT, ETF and Baechi's m-ETF.
#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// HEFT (Topcuoglu et al., 2002): ops in decreasing upward rank (the b-level with mean costs),
/// each on the device giving the earliest finish time, allowing insertion into idle gaps
/// between already scheduled ops. The order is the planned start order.
class HeftPlacer : public Placer {
public:
  std::string name() const override { return "heft"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;
};

/// ETF (Hwang et al., 1989): repeatedly schedule the (ready op, device) pair with the earliest
/// start time; ties go to the larger b-level, then the lower op id, then the lower device.
/// With a memory capacity per device it is Baechi's m-ETF (Jeon et al., 2020): a device is
/// eligible only while the op's output fits in its remaining share.
/// The choice is kept incrementally (per device, the ready ops by arrival and by b-level; see
/// src/heuristics/etf_queue.hpp), the same as scanning every (ready op, device) pair at every
/// step but O(N P log N + E P); only a step where no pair fits the memory shares scans them all.
/// Under a time budget, once it is spent, the remaining ops are placed in a hurry, the ready op
/// of largest b-level first on its earliest-start device (still honouring the memory shares), and
/// the status says after how many ops.
class EtfPlacer : public Placer {
public:
  /// `memory_slack` < 0: plain ETF. Otherwise m-ETF with capacity (1 + slack) x total / P.
  explicit EtfPlacer(double memory_slack = -1) : slack_(memory_slack) {}
  std::string name() const override { return slack_ < 0 ? "etf" : "m-etf"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  double slack_;
};

/// Memory footprint proxy of each op used by the m-* placers: its output bytes when the graph
/// has physical sizes, else its reference transfer cost (proportional to output size).
std::vector<double> memory_proxy(const Graph& g);

}  // namespace doppler
