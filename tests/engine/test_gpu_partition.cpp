// The SM split rule of the CUDA backend's --gpu-partitions (pure arithmetic, no GPU), against
// the table for a 132-SM Hopper GPU (H100, H200) worked out by hand from cuda.h's guideline:
// at least 8 SMs per partition, in multiples of 8.
#include <gtest/gtest.h>

#include "doppler/engine/gpus.hpp"

namespace doppler {
namespace {

TEST(GpuPartition, HopperSplitsIn8SmSteps) {
  const SmGranularity hopper = sm_granularity(9);
  EXPECT_EQ(hopper.min_sms, 8);
  EXPECT_EQ(hopper.step, 8);
  EXPECT_EQ(partition_sms(132, 1, hopper), 128);  // 132 is not a multiple of 8
  EXPECT_EQ(partition_sms(132, 2, hopper), 64);
  EXPECT_EQ(partition_sms(132, 3, hopper), 40);  // 44 aligned down; 12 SMs unused
  EXPECT_EQ(partition_sms(132, 4, hopper), 32);
  EXPECT_EQ(partition_sms(132, 8, hopper), 16);
  EXPECT_EQ(partition_sms(132, 16, hopper), 8);
  EXPECT_EQ(partition_sms(132, 17, hopper), 0);  // 17 x 8 = 136 > 132
  EXPECT_EQ(partition_sms(132, 0, hopper), 0);
}

TEST(GpuPartition, AmpereAndOlderSplitFiner) {
  const SmGranularity ampere = sm_granularity(8);
  EXPECT_EQ(ampere.min_sms, 4);
  EXPECT_EQ(ampere.step, 2);
  EXPECT_EQ(partition_sms(108, 4, ampere), 26);  // A100: 27 aligned down to 26
  EXPECT_EQ(partition_sms(108, 27, ampere), 4);
  EXPECT_EQ(partition_sms(108, 28, ampere), 0);
  const SmGranularity volta = sm_granularity(7);
  EXPECT_EQ(volta.min_sms, 2);
  EXPECT_EQ(partition_sms(80, 8, volta), 10);
}

}  // namespace
}  // namespace doppler
