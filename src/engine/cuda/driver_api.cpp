#include "driver_api.hpp"

#include <cstdlib>
#include <mutex>
#include <string>

#include "doppler/engine/engine.hpp"

namespace doppler::cuda_detail {

namespace {

constexpr const char* kNoGpu = "no CUDA driver or GPU: ";

// Why no GPU can be used ("" when one can): the runtime's own answer, one line.
std::string probe_runtime() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear it: the next probe asks again
    return std::string(kNoGpu) + cudaGetErrorString(e);
  }
  if (count == 0) return std::string(kNoGpu) + "the driver sees no device";
  return "";
}

// Fetches one function; "" on success, else the reason.
std::string fetch(const char* name, void** fn) {
  cudaDriverEntryPointQueryResult q{};
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(name, fn, CUDA_VERSION, cudaEnableDefault, &q);
  if (e == cudaSuccess && q == cudaDriverEntryPointSuccess && *fn) return "";
  return std::string(kNoGpu) + "the driver lacks " + name +
         " (green contexts need a CUDA 12.4+ driver)";
}

struct Loaded {
  DriverApi api;
  std::string error;  // "" when every function was found
};

// Hardware work queues per context: CUDA's default of 8 is P x 2 streams at P = 4 partitions;
// beyond it streams of different partitions share queues and wait for each other. Read when
// CUDA initialises, so set before the first runtime call (a value the user set is kept).
void set_connections() {
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
}

Loaded load() {
  Loaded l;
  set_connections();
  l.error = probe_runtime();
  if (!l.error.empty()) return l;
#define DOPPLER_CUDA_FETCH(name) \
  if (l.error.empty()) l.error = fetch(#name, reinterpret_cast<void**>(&l.api.name));
  DOPPLER_CUDA_DRIVER_FUNCTIONS(DOPPLER_CUDA_FETCH)
#undef DOPPLER_CUDA_FETCH
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const DriverApi& driver_api() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw EngineError(l.error);
  return l.api;
}

std::string no_gpu_reason() {
  return loaded().error;
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* s = nullptr;
  if (const auto get = loaded().api.cuGetErrorString) get(r, &s);
  throw EngineError(std::string(what) + ": " + (s ? s : "CUDA driver error") + " (" +
                    std::to_string(static_cast<int>(r)) + ")");
}

void check(cudaError_t r, const char* what) {
  if (r == cudaSuccess) return;
  cudaGetLastError();  // a non-sticky error is cleared; a sticky one stays (the run is over)
  const std::string cause =
      r == cudaErrorMemoryAllocation ? "out of device memory" : cudaGetErrorString(r);
  throw EngineError(std::string(what) + ": " + cause);
}

}  // namespace doppler::cuda_detail
