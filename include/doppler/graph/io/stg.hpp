#pragma once
// Kasahara's Standard Task Graph Set format (.stg, www.kasahara.cs.waseda.ac.jp/schedule/,
// "task graphs without communication costs"; rules in docs/formats.md):
//   line 1: n, the number of real tasks
//   then n + 2 task lines "id cost npred pred_1 .. pred_npred": id 0 is the dummy entry task,
//   1..n the real tasks, n + 1 the dummy exit task; predecessors are earlier tasks.
//   '#' lines (the information part) and blank lines are skipped.
// The dummy tasks are kept as nodes, so node v is STG task v. There are no communication
// costs: every transfer cost is 0.
#include <string>
#include <string_view>
#include <vector>

#include "doppler/graph/graph.hpp"
#include "doppler/util/read_limits.hpp"

namespace doppler {

/// Parses an STG task graph: n + 2 nodes named "T0".."T<n+1>" (kind other, compute_cost = the
/// task's processing time, transfer_cost 0), one edge per predecessor; meta origin "stg",
/// params["tasks"] = n. Throws InputError "FILE:LINE: problem" for a bad task count, ids out of
/// order or repeated, unknown / later / repeated predecessors, negative or non-numeric costs, a
/// predecessor count that does not match the list, a truncated file, text after the exit task,
/// and more tasks or edges than `limits` allow. `warnings` is unused (kept for symmetry).
Graph parse_stg(std::string_view text, const std::string& file,
                std::vector<std::string>* warnings = nullptr,
                const ReadLimits& limits = read_limits());

}  // namespace doppler
