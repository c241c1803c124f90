#include "doppler/train/pipeline.hpp"

#include <algorithm>
#include <memory>

#include "doppler/util/error.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

TrainResult run_pipeline(DopplerTrainer& trainer, const PipelineSpec& spec,
                         const CostFunction& measured) {
  if (!spec.init.empty()) trainer.load_weights(spec.init);
  TrainResult r;
  bool ran = false;
  const Stopwatch clock;
  int stages_left = (spec.il > 0) + (spec.sim > 0) + (spec.real > 0);
  const auto stage = [&](TrainStage st, int episodes) {
    if (episodes <= 0) return;
    TrainConfig c = spec.base;
    c.stage = st;
    c.episodes = episodes;
    c.checkpoint_every = 0;
    if (spec.seconds > 0) {  // a share of what is left; never 0, which would mean no limit
      const double share = std::max(1e-9, (spec.seconds - clock.seconds()) / stages_left);
      c.time_budget = c.time_budget > 0 ? std::min(c.time_budget, share) : share;
    }
    --stages_left;
    trainer.start_stage(c);
    r = trainer.train();
    ran = true;
  };
  stage(TrainStage::imitation, spec.il);
  stage(TrainStage::simulation, spec.sim);
  if (spec.real > 0) {
    if (!measured) throw InputError("Stage III needs an engine to measure on");
    trainer.set_cost(measured);
    stage(TrainStage::real, spec.real);
  }
  if (!ran) {
    r.greedy = trainer.greedy();
    r.best = r.greedy;
    r.best_makespan = r.greedy_makespan = std::numeric_limits<double>::quiet_NaN();
    r.cost_calls = trainer.cost_calls();
  }
  return r;
}

CostFunction engine_cost(Engine& engine, int repeat) {
  auto warm = std::make_shared<bool>(false);
  return [&engine, repeat, warm](const Assignment& a) {
    const int warmup = *warm ? 0 : 1;
    *warm = true;
    return engine.measure(a, DispatchRule::fifo, repeat, warmup).median;
  };
}

double remeasure(Engine& engine, const Assignment& a, int repeat) {
  return engine.measure(a, DispatchRule::fifo, 2 * repeat, 0).median;
}

}  // namespace doppler
