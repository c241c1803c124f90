#pragma once
// The small policy configuration of the checkpoint fuzzer's seeds (a tiny network, so that a
// checkpoint is a few tens of KiB and loads in well under a millisecond).
#include "doppler/policy/policy_config.hpp"

namespace doppler::fuzz {

/// hidden 8, edge hidden 8, one message-passing step, MLP hidden 8, dual variant.
inline PolicyConfig seed_policy_config() {
  PolicyConfig c;
  c.hidden = 8;
  c.edge_hidden = 8;
  c.steps = 1;
  c.mlp_hidden = 8;
  return c;
}

}  // namespace doppler::fuzz
