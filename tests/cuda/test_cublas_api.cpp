// cuBLAS is loaded on first use, not linked: it loads without a GPU or driver (CI), its functions
// work where they need no device, and the CLI's start-up does not load it.
#include <string>

#include <gtest/gtest.h>

#include "engine/cuda/cublas_api.hpp"
#include "support/dynamic_section.hpp"
#include "support/support.hpp"

namespace doppler {
namespace {

TEST(CublasApi, LoadsWithoutAGpuAndNamesItsStatuses) {
  const cuda_detail::CublasApi& api = cuda_detail::cublas_api();
  EXPECT_NE(api.path.find("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR)), std::string::npos)
      << api.path;
  // cuBLAS's documented names of its status codes (cuBLAS API reference, cublasStatus_t).
  EXPECT_STREQ(api.cublasGetStatusName(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS");
  EXPECT_STREQ(api.cublasGetStatusName(CUBLAS_STATUS_NOT_INITIALIZED),
               "CUBLAS_STATUS_NOT_INITIALIZED");
  for (const void* f : {reinterpret_cast<const void*>(api.cublasCreate_v2),
                        reinterpret_cast<const void*>(api.cublasDestroy_v2),
                        reinterpret_cast<const void*>(api.cublasSetStream_v2),
                        reinterpret_cast<const void*>(api.cublasSetSmCountTarget),
                        reinterpret_cast<const void*>(api.cublasSgemm_v2),
                        reinterpret_cast<const void*>(api.cublasSgemmStridedBatched),
                        reinterpret_cast<const void*>(api.cublasGemmStridedBatchedEx)})
    EXPECT_NE(f, nullptr);
}

// The libraries the CLI's start-up loads (its ELF's DT_NEEDED entries): no cuBLAS, whose load
// took ~0.37 s of each of the CLI's starts.
TEST(CublasApi, TheCliDoesNotLinkIt) {
  const std::string out = test::dynamic_section(test::cli_path());
  ASSERT_NE(out.find("(NEEDED)"), std::string::npos) << out;
  EXPECT_NE(out.find("libc.so"), std::string::npos) << out;
  EXPECT_EQ(out.find("libcublas"), std::string::npos) << out;
}

}  // namespace
}  // namespace doppler
