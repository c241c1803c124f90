// A corrupted checkpoint is an InputError, never a crash. Regression test for a fuzzer finding
// (fuzz/corpus/checkpoint/crash-torch-type-parser.pt: a real checkpoint with mutated bytes in
// the TorchScript type definitions of its archive, which made libtorch's importer segfault in
// `doppler place --policy` and `train --resume`). The reader now verifies the zip container
// (every entry stored, inside the file, with a matching CRC32) before libtorch parses it.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "policy/nn/checkpoint.hpp"
#include "support/support.hpp"

#include "doppler/util/error.hpp"

namespace doppler {
namespace {

namespace fs = std::filesystem;

void expect_corrupted(const fs::path& p) {
  try {
    (void)detail::open_checkpoint(p);
    ADD_FAILURE() << p << " was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p.string());
    EXPECT_NE(std::string(e.what()).find("checkpoint"), std::string::npos) << e.what();
  }
}

TEST(CheckpointCorrupt, FuzzerFindingIsAnInputError) {
  expect_corrupted("fuzz/corpus/checkpoint/crash-torch-type-parser.pt");
}

TEST(CheckpointCorrupt, EveryTruncationIsAnInputError) {
  std::ifstream in("fuzz/corpus/checkpoint/crash-torch-type-parser.pt", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  test::TempDir dir;
  for (std::size_t n : {std::size_t{0}, std::size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    fs::path p = dir / "t";  // (("t" + ... + ".pt") trips GCC 12's -Wstringop-overflow)
    p += std::to_string(n) + ".pt";
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(n));
    SCOPED_TRACE(n);
    expect_corrupted(p);
  }
}

}  // namespace
}  // namespace doppler
