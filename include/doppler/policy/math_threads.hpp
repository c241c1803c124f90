#pragma once
// Thread settings of the learned modules' math libraries. Torch-free interface.

namespace doppler {

/// Sets torch (intra- and inter-op) and OpenBLAS to one thread: the learned modules parallelise
/// over rollouts and problems instead. Also calls retain_freed_memory()
/// (doppler/util/retain_memory.hpp). Call once before loading or training a policy.
void use_single_threaded_math();

}  // namespace doppler
