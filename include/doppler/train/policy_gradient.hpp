#pragma once
// Torch-free pieces of the policy-gradient estimators shared by Doppler and the learned
// baselines: leave-one-out advantages of a batch of rollouts and the learning-rate schedules.
#include <string>
#include <vector>

namespace doppler {

/// Advantages of K rollouts of the same problem from their costs (lower is better): rollout k
/// gets mean_{j != k} cost_j - cost_k (the leave-one-out baseline: unbiased, no running mean to
/// lag behind). With `normalise`, the advantages are divided by their standard deviation (plus
/// 1e-8 of the mean |cost|), so that they have unit scale whatever the problem's units. A batch
/// of one, or of equal costs, gives zeros. Non-finite costs throw std::invalid_argument.
std::vector<double> leave_one_out_advantages(const std::vector<double>& costs,
                                             bool normalise = true);

/// Learning-rate schedule over the updates of a run.
enum class LrSchedule {
  constant,  ///< lr after warm-up
  cosine,    ///< cosine from lr down to lr_end after warm-up
  linear,    ///< linear from lr down to lr_end (the earlier default; with warm-up 0)
};

/// "constant", "cosine" or "linear".
std::string lr_schedule_name(LrSchedule s);
/// Parses a schedule name; InputError otherwise.
LrSchedule parse_lr_schedule(const std::string& name);

/// Learning rate of update `step` (0-based) of `total`: linear warm-up from lr / warmup to lr
/// over the first `warmup` updates, then the schedule from lr towards lr_end at the last update.
double scheduled_lr(LrSchedule s, double lr, double lr_end, int warmup, int step, int total);

}  // namespace doppler
