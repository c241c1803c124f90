#pragma once
// Minimum-cost matching of the rows of a cost matrix to distinct columns (the assignment
// problem), by the Hungarian algorithm with potentials.
#include <vector>

namespace doppler {

/// The matching of every row of the `rows` x `cols` row-major matrix `cost` (rows <= cols) to a
/// distinct column of least total cost: match[row] = column. Costs must be finite. Exact;
/// O(rows^2 x cols) time, O(cols) extra memory.
std::vector<int> min_cost_matching(const std::vector<double>& cost, int rows, int cols);

}  // namespace doppler
