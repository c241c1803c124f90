#pragma once
// Checks shared by the Placeto and GDP tests: the contract both trainers keep under seconds.
#include <gtest/gtest.h>

#include "doppler/train/baselines.hpp"

namespace doppler::test {

/// Runs `train` (train_placeto or train_gdp) on `problem` with `c` and seconds far below one
/// update and no other limit: the first batch is still sampled (a run needs one), but neither
/// its learning step nor the greedy placement fits, so the answer is its best sample. `calls`:
/// the simulator calls that batch takes. Returns the result for further checks.
template <class Train>
BaselineResult expect_first_batch_unlearnt(Train train, const Problem& problem, BaselineConfig c,
                                           std::int64_t calls) {
  c.calls = 0;
  c.seconds = 1e-9;
  const BaselineResult r = train(problem, c, {});
  EXPECT_EQ(r.updates, 0);
  EXPECT_EQ(r.cost_calls, calls);
  EXPECT_TRUE(r.greedy.device_of.empty());
  EXPECT_DOUBLE_EQ(r.best_makespan, problem.simulator().makespan(r.best.device_of));
  return r;
}

}  // namespace doppler::test
