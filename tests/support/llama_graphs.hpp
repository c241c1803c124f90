#pragma once
// Small generated Llama models for tests of searches over repeated layers.
#include "doppler/graph/graph.hpp"
#include "doppler/workloads/llama_model.hpp"

namespace doppler::test {

/// A Llama model of `layers` layers of width `dim` (dim / 64 heads, FFN and sequence 2 x dim, a
/// vocabulary of 1,000), partitioned for `devices` devices.
inline Graph small_llama(int layers, int dim, int devices) {
  workloads::LlamaModelParams p;
  p.dim = dim;
  p.heads = dim / 64;
  p.ffn = 2 * dim;
  p.seq = 2 * dim;
  p.vocab = 1000;
  p.layers = layers;
  p.set_partition_for(devices);
  return workloads::generate_llama_model(p);
}

}  // namespace doppler::test
