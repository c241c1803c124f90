#pragma once
// Thread settings of the learned modules' math libraries. Torch-free interface.

namespace doppler {

/// Sets torch (intra- and inter-op) and OpenBLAS to one thread: the learned modules parallelise
/// over rollouts and problems instead. Also calls retain_freed_memory(). Call once before loading
/// or training a policy.
void use_single_threaded_math();

/// Process-wide: malloc keeps freed blocks of up to 256 MiB in the heap (mmap threshold 256 MiB,
/// trim threshold 512 MiB) instead of returning them to the kernel, so that the encoders' large
/// per-step tensors reuse touched pages rather than page-faulting afresh (measured: one
/// 20,000-op rollout's encoder pass 1.56 s -> 0.45-1.0 s). Idempotent.
void retain_freed_memory();

}  // namespace doppler
