// The registered factory of the CUDA backend (device_backend.hpp): libdoppler cannot link
// libdoppler_cuda, which registers itself (enable_cuda_backend()).
#include <atomic>

#include "device_backend.hpp"

namespace doppler::engine_detail {

namespace {

std::atomic<BackendFactory>& cuda_factory() {
  static std::atomic<BackendFactory> f{nullptr};
  return f;
}

}  // namespace

void set_cuda_backend_factory(BackendFactory f) {
  cuda_factory().store(f);
}

BackendFactory cuda_backend_factory() {
  return cuda_factory().load();
}

}  // namespace doppler::engine_detail
