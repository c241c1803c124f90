#pragma once
// The chain of ops that decided a simulated schedule's makespan: from the op that finished last,
// repeatedly step back to what delayed its start (the input that arrived last, or the op that
// held its device). Search moves aimed at these ops are the ones that can shorten the schedule.
#include <vector>

#include "doppler/graph/graph.hpp"
#include "doppler/sim/schedule.hpp"

namespace doppler {

/// The ops of `s`'s critical chain, last-finishing op first. Each op's predecessor in the chain
/// is, when it started later than its inputs arrived (a busy device), the op on the same device
/// that finished last no later than that start (past zero-length ops ending at that instant);
/// otherwise the predecessor in `g` whose data arrived last (its finish, or its transfer's
/// arrival when on another device); ties go to the lower id. The chain ends at an op that waited
/// for neither. Every op appears at most once. O(N log N + E + T) for N ops, E edges and T
/// transfers. Empty for an empty schedule.
std::vector<NodeId> critical_chain(const Graph& g, const Schedule& s);

}  // namespace doppler
