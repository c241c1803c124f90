#pragma once
// The one thread pool helper: runs fn(0..n-1) on up to `threads` threads.
#include <functional>

namespace doppler {

/// Calls fn(i) for every i in 0..n-1 on min(threads, n) threads, the calling thread one of them
/// (threads < 1 counts as 1: all on the calling thread), handing out indices in increasing
/// order. Every index runs even after a failure; the first exception is rethrown once all are
/// done. fn must be safe to call concurrently for distinct indices.
void parallel_for(int n, int threads, const std::function<void(int)>& fn);

}  // namespace doppler
