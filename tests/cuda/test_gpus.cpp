// The CUDA library on any machine: without a driver or GPU (CI) it says so in one line and the
// GPU checks skip with that line; with a GPU, green-context partitions run on disjoint SMs.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "engine/cuda/driver_api.hpp"
#include "engine/cuda/green_partitions.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/gpus.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

#define DOPPLER_REQUIRE_GPU() \
  if (const std::string why = cuda_detail::no_gpu_reason(); !why.empty()) GTEST_SKIP() << why

TEST(CudaDriver, NoGpuIsOneLineAndListGpusThrowsIt) {
  const std::string why = cuda_detail::no_gpu_reason();
  if (why.empty()) {
    const std::vector<GpuInfo> gpus = list_gpus();
    ASSERT_FALSE(gpus.empty());
    EXPECT_GT(gpus[0].sms, 0);
    EXPECT_GT(gpus[0].memory_bytes, 0);
    GTEST_SKIP() << "a GPU is present: " << gpus[0].name << ", " << gpus[0].sms << " SMs";
  }
  EXPECT_EQ(why.rfind("no CUDA driver or GPU: ", 0), 0u) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  try {
    list_gpus();
    FAIL() << "list_gpus() returned without a GPU";
  } catch (const EngineError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
}

// Every partition's blocks run only on its SMs, and no SM serves two partitions.
void expect_disjoint(int partitions) {
  const cuda_detail::GreenPartitions parts(0, partitions);
  ASSERT_EQ(parts.size(), partitions);
  std::vector<std::set<int>> seen(static_cast<std::size_t>(partitions));
  for (int i = 0; i < partitions; ++i) {
    EXPECT_GT(parts[i].sms, 0);
    for (int id : cuda_detail::observed_sm_ids(parts[i].compute, 4 * parts[i].sms))
      seen[static_cast<std::size_t>(i)].insert(id);
    EXPECT_LE(static_cast<int>(seen[static_cast<std::size_t>(i)].size()), parts[i].sms)
        << "partition " << i << " ran on more SMs than it holds";
    EXPECT_GE(*seen[static_cast<std::size_t>(i)].begin(), 0);
    EXPECT_LT(*seen[static_cast<std::size_t>(i)].rbegin(), parts.gpu_sms());
  }
  for (int i = 0; i < partitions; ++i)
    for (int j = i + 1; j < partitions; ++j) {
      std::vector<int> both;
      std::set_intersection(seen[static_cast<std::size_t>(i)].begin(),
                            seen[static_cast<std::size_t>(i)].end(),
                            seen[static_cast<std::size_t>(j)].begin(),
                            seen[static_cast<std::size_t>(j)].end(), std::back_inserter(both));
      EXPECT_TRUE(both.empty()) << "partitions " << i << " and " << j << " share " << both.size()
                                << " SMs";
    }
}

TEST(GreenPartitions, TwoAndFourRunOnDisjointSms) {
  DOPPLER_REQUIRE_GPU();
  expect_disjoint(2);
  expect_disjoint(4);
}

TEST(GreenPartitions, MorePartitionsThanSmGroupsIsABadRequest) {
  DOPPLER_REQUIRE_GPU();
  try {
    cuda_detail::GreenPartitions parts(0, 1000);
    FAIL() << "1000 partitions were made";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be split into 1000 partitions"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace doppler
