#pragma once
// A TrainConfig with tiny networks (hidden 16, edge hidden 8, 2 message-passing steps, MLP 16)
// and one thread, for the training tests.
#include "doppler/train/train_config.hpp"

namespace doppler::test {

/// `episodes` rollouts of `stage` on tiny networks, single-threaded.
inline TrainConfig small_train_config(TrainStage stage, int episodes) {
  TrainConfig c;
  c.stage = stage;
  c.episodes = episodes;
  c.policy.hidden = 16;
  c.policy.edge_hidden = 8;
  c.policy.steps = 2;
  c.policy.mlp_hidden = 16;
  c.parallel = false;
  return c;
}

}  // namespace doppler::test
