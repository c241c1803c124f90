#pragma once
// Internal: the CUDA driver-API functions libdoppler_cuda calls (green contexts have no runtime
// API in CUDA 13.0), fetched at run time from the driver the CUDA runtime loaded
// (cudaGetDriverEntryPointByVersion), so that nothing links libcuda.
#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

namespace doppler::cuda_detail {

// X(name) for every driver function used.
#define DOPPLER_CUDA_DRIVER_FUNCTIONS(X)                                                      \
  X(cuGetErrorString)                                                                         \
  X(cuDeviceGet)                                                                              \
  X(cuDeviceGetDevResource) X(cuDevSmResourceSplitByCount) X(cuDevResourceGenerateDesc)       \
      X(cuGreenCtxCreate) X(cuGreenCtxStreamCreate) X(cuGreenCtxDestroy) X(cuCtxFromGreenCtx) \
          X(cuCtxPushCurrent) X(cuCtxPopCurrent)

/// Pointers to the driver functions, all non-null once driver_api() returned.
struct DriverApi {
#define DOPPLER_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  DOPPLER_CUDA_DRIVER_FUNCTIONS(DOPPLER_CUDA_DRIVER_MEMBER)
#undef DOPPLER_CUDA_DRIVER_MEMBER
};

/// The driver functions, loaded on the first call (thread-safe), which must come before any
/// other CUDA call of the process: it first sets CUDA_DEVICE_MAX_CONNECTIONS to 32 unless set.
/// Throws EngineError "no CUDA driver or GPU: CAUSE" when no driver or GPU is there, or the
/// driver lacks a function (green contexts need a CUDA 12.4+ driver).
const DriverApi& driver_api();

/// The one-line "no CUDA driver or GPU: CAUSE" message when this process cannot use a GPU,
/// "" when it can (no exception).
std::string no_gpu_reason();

/// Throws EngineError "WHAT: the driver's message (code)" unless r is CUDA_SUCCESS.
void check(CUresult r, const char* what);

/// Throws EngineError "WHAT: the runtime's message" unless r is cudaSuccess; an out-of-memory
/// error says so.
void check(cudaError_t r, const char* what);

}  // namespace doppler::cuda_detail
