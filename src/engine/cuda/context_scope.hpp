#pragma once
// Internal: a driver context made current for a scope. A stream of a green-context partition
// belongs to that partition's context (cuStreamGetCtx gives cuCtxFromGreenCtx's handle), and an
// event must come from the context of the stream it is recorded on, so the CUDA backend makes its
// events with the partition's context current, and leaves the primary context current otherwise.
#include <cuda.h>

#include "driver_api.hpp"

namespace doppler::cuda_detail {

/// Makes `ctx` current on the calling thread until destruction (cuCtxPushCurrent, then
/// cuCtxPopCurrent); nothing when ctx is null. A green context may be current on one thread at a
/// time: callers serialise scopes of the same context. Throws EngineError when the push fails.
class ContextScope {
public:
  explicit ContextScope(CUcontext ctx) : pushed_(ctx != nullptr) {
    if (pushed_) check(driver_api().cuCtxPushCurrent(ctx), "cuCtxPushCurrent");
  }
  ~ContextScope() {
    CUcontext popped = nullptr;
    if (pushed_) driver_api().cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

private:
  bool pushed_;
};

}  // namespace doppler::cuda_detail
