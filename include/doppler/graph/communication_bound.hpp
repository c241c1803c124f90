#pragma once
// A makespan lower bound that charges transfers: every op's predecessors either send their data
// from another device (paying at least the cheapest transfer) or share its device, where they
// run one after another; likewise its successors. Much tighter than the transfer-free critical
// path on deep graphs whose edges are expensive, where that bound is far below every placement.
#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler {

/// Lower bound on the makespan of every placement of `g` on `p` devices under `cost` (cost-model
/// units), whatever the dispatch rule. Computed in topological order with, for each op v,
/// a lower bound est(v) on its start and ft(v) = est(v) + its fastest compute time:
///
///   est(v) = min over j of max(ft(u_{j+1}) + c(u_{j+1}, v), serial(u_1..u_j))
///
/// where u_1, u_2, ... are v's predecessors by decreasing ft(u) + c(u, v), c is the cheapest
/// transfer between two distinct devices of the model (infinite when p == 1), and serial(S) is
/// the finish of the set S run on v's device: release dates est(u), fastest compute times, at
/// most max-slots ops at once (fluid relaxation). Some prefix u_1..u_j must share v's device,
/// or u_{j+1}'s data has to travel. Only the first 32 prefixes are enumerated (longer ones are
/// bounded by serial(u_1..u_32)). The same rule on the reversed graph (a schedule run backwards
/// in time) gives tail(v), a lower bound on the time from v's finish to the makespan, where v's
/// successors either receive its data remotely or share its device, one after another; the
/// bound is the largest est(v) + fastest(v) + tail(v), so forks count as well as joins. The cost
/// is O(N + E log E). The result is also at least total fastest work over all compute slots.
/// Throws InputError when `p` devices cannot be modelled.
double communication_lower_bound(const Graph& g, const CostModel& cost, int p);

}  // namespace doppler
