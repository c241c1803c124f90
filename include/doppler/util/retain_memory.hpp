#pragma once
// Process-wide malloc settings that keep freed memory for reuse.

namespace doppler {

/// Process-wide: malloc keeps freed blocks of up to 256 MiB in the heap (mmap threshold 256 MiB,
/// trim threshold 512 MiB) instead of returning them to the kernel, so that buffers freed and
/// allocated again reuse touched pages rather than page-faulting afresh. Measured: one 20,000-op
/// rollout's encoder pass 1.56 s -> 0.45-1.0 s; a calibration (a new engine and its buffers per
/// benchmark, 2 devices) 45 s -> 17.5 s, most of the difference page faults in the zeroing of new
/// buffers. Called by the engine and the learned modules; idempotent.
void retain_freed_memory();

}  // namespace doppler
