#pragma once
// Internal: the cuBLAS functions libdoppler_cuda calls, loaded with dlopen on first use rather
// than linked: libcublas and libcublasLt (0.5 GB) take about 0.37 s to load and initialise, which
// every start of a binary linking them paid, CUDA backend or not (the tests start the CLI from
// 170 places, many of them in loops).
#include <cublas_v2.h>

#include <string>

namespace doppler::cuda_detail {

// X(name) for every cuBLAS function used but cublasGemmStridedBatchedEx, by its exported name
// (cublas_v2.h maps cublasCreate to cublasCreate_v2 and so on).
#define DOPPLER_CUBLAS_FUNCTIONS(X)                                                        \
  X(cublasCreate_v2)                                                                       \
  X(cublasDestroy_v2)                                                                      \
  X(cublasSetStream_v2) X(cublasSetSmCountTarget) X(cublasGetStatusName) X(cublasSgemm_v2) \
      X(cublasSgemmStridedBatched)

/// cublasGemmStridedBatchedEx's C signature (cublas_api.h overloads the name in C++ with a
/// legacy cudaDataType compute type).
using GemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                                  cublasOperation_t, int, int, int, const void*,
                                                  const void*, cudaDataType, int, long long,
                                                  const void*, cudaDataType, int, long long,
                                                  const void*, void*, cudaDataType, int, long long,
                                                  int, cublasComputeType_t, cublasGemmAlgo_t);

/// Pointers to the cuBLAS functions, all non-null once cublas_api() returned.
struct CublasApi {
#define DOPPLER_CUBLAS_MEMBER(name) decltype(&::name) name = nullptr;
  DOPPLER_CUBLAS_FUNCTIONS(DOPPLER_CUBLAS_MEMBER)
#undef DOPPLER_CUBLAS_MEMBER
  GemmStridedBatchedExFn cublasGemmStridedBatchedEx = nullptr;
  std::string path;  ///< the library file loaded (dlinfo), for messages and logs
};

/// The cuBLAS functions, loaded on the first call (thread-safe): libcublas.so.<major of the
/// headers> from the loader's search path, else from the toolkit's library folder of the build.
/// Throws EngineError "cannot load cuBLAS: REASON" (one line) when neither loads or a function
/// is missing. Needs no GPU or driver.
const CublasApi& cublas_api();

}  // namespace doppler::cuda_detail
