// `doppler execute --save NAME=FILE.npy`: tensors reassembled from their blocks equal an
// independent computation from the documented input values (docs/exec.md); unknown names,
// malformed requests, the MPI backend and blocks that do not tile a tensor are errors.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/util/npy.hpp"

namespace doppler {
namespace {

std::string q(const std::filesystem::path& p) {
  return "'" + p.string() + "'";
}

// The input values of docs/exec.md, written out again here: seed = FNV-1a of the tensor name cut
// to 53 bits, u(seed, (i, j)) from splitmix64.
std::uint64_t splitmix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double unit_value(const std::string& tensor, std::int64_t i, std::int64_t j) {
  std::uint64_t seed = 0xcbf29ce484222325ULL;
  for (unsigned char c : tensor) seed = (seed ^ c) * 0x100000001b3ULL;
  seed &= (1ULL << 53) - 1;
  std::uint64_t h = splitmix(seed);
  h = splitmix(h ^ static_cast<std::uint64_t>(i));
  h = splitmix(h ^ static_cast<std::uint64_t>(j));
  return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
}

using Matrix = std::vector<double>;  // n x n, row-major

Matrix input_matrix(const std::string& name, std::int64_t n) {
  Matrix m(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      m[static_cast<std::size_t>(i * n + j)] = unit_value(name, i, j);
  return m;
}

Matrix matmul(const Matrix& a, const Matrix& b, std::int64_t n) {
  Matrix c(a.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < n; ++k)
      for (std::int64_t j = 0; j < n; ++j)
        c[static_cast<std::size_t>(i * n + j)] +=
            a[static_cast<std::size_t>(i * n + k)] * b[static_cast<std::size_t>(k * n + j)];
  return c;
}

// Largest |got - want| relative to max(1, max |want|).
double max_error(const std::vector<float>& got, const Matrix& want) {
  double err = 0, scale = 1;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

// chainmm with n = 30 cut for 4 devices (rows 4 x columns 2, uneven cuts) and a HEFT placement.
void chainmm(const test::TempDir& dir) {
  auto r = test::run_cli("generate chainmm -p n=30 --devices 4 -o " + q(dir / "g.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli("place " + q(dir / "g.json") + " --devices 4 --method heft -o " +
                    q(dir / "a.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliSave, SavedTensorsEqualAnIndependentComputation) {
  test::TempDir dir;
  chainmm(dir);
  constexpr std::int64_t n = 30;
  // y: elementwise blocks y[i,j]; de: partial products summed by agg:de[i,j]; A: input blocks.
  const auto r =
      test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                    " --repeat 1 --warmup 0 --json --save y=" + q(dir / "y.npy") +
                    " --save de=" + q(dir / "de.npy") + " --save A=" + q(dir / "a_in.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["saved"].size(), 3u);
  EXPECT_EQ(j["saved"][0]["name"], "y");
  EXPECT_EQ(j["saved"][0]["shape"], nlohmann::json::parse("[30, 30]"));

  const Matrix a = input_matrix("A", n), b = input_matrix("B", n), c = input_matrix("C", n),
               d = input_matrix("D", n), e = input_matrix("E", n);
  const Matrix de = matmul(d, e, n);
  Matrix y = matmul(c, de, n);
  const Matrix ab = matmul(a, b, n);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += ab[i];

  const NpyArray got_y = read_npy((dir / "y.npy").string());
  EXPECT_EQ(got_y.shape, (std::vector<std::int64_t>{n, n}));
  ASSERT_EQ(got_y.values.size(), y.size());
  EXPECT_LT(max_error(got_y.values, y), 1e-5);
  const NpyArray got_de = read_npy((dir / "de.npy").string());
  EXPECT_EQ(got_de.shape, (std::vector<std::int64_t>{n, n}));
  ASSERT_EQ(got_de.values.size(), de.size());
  EXPECT_LT(max_error(got_de.values, de), 1e-5);
  const NpyArray got_a = read_npy((dir / "a_in.npy").string());
  ASSERT_EQ(got_a.values.size(), a.size());
  EXPECT_LT(max_error(got_a.values, a), 1e-7);
  // A wrong layout would not pass: the transpose of y differs from y.
  Matrix yt(y.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < n; ++k)
      yt[static_cast<std::size_t>(k * n + i)] = y[static_cast<std::size_t>(i * n + k)];
  EXPECT_GT(max_error(got_y.values, yt), 1e-2);

  // Text mode names the saved tensor.
  const auto t = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                               " --repeat 1 --warmup 0 --save y=" + q(dir / "y2.npy"));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("saved           y [30, 30] to"), std::string::npos) << t.out;
  EXPECT_EQ(read_npy((dir / "y2.npy").string()).values, got_y.values);
}

TEST(CliSave, UnknownTensorAndBadRequestsExitWith2) {
  test::TempDir dir;
  chainmm(dir);
  const std::string base =
      "execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") + " --repeat 1 --warmup 0 ";
  auto r = test::run_cli(base + "--save nosuch=" + q(dir / "z.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("g.json: --save: no tensor 'nosuch' in the graph (tensors: "),
            std::string::npos)
      << r.err;
  for (const char* name : {" A,", " de,", " y"})
    EXPECT_NE(r.err.find(name), std::string::npos) << name << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "z.npy"));
  r = test::run_cli(base + "--save y");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--save: expected NAME=FILE.npy, found 'y'"), std::string::npos) << r.err;
  r = test::run_cli(base + "--save y=" + q(dir / "no" / "dir" / "y.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
  r = test::run_cli(base + "--kernels empty --save y=" + q(dir / "z.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--save needs real kernels"), std::string::npos) << r.err;
  r = test::run_cli(base + "--backend mpi --save y=" + q(dir / "z.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--save is not supported with --backend mpi"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "z.npy"));
}

// A graph whose two input blocks t[0] and t[1] cover [0, lo1 + 4) with t[1] at `lo1`.
std::string two_blocks(int lo1) {
  const auto node = [](int id, int lo) {
    return "{\"id\": " + std::to_string(id) + ", \"kind\": \"input\", \"name\": \"t[" +
           std::to_string(id) +
           "]\", \"out_bytes\": 16, \"exec\": {\"op\": \"input\", \"shape\": [4], \"origin\": [" +
           std::to_string(lo) + "], \"attrs\": {\"seed\": 1}}}";
  };
  return "{\"format\": \"doppler-graph\", \"version\": 1, \"nodes\": [" + node(0, 0) + ", " +
         node(1, lo1) + "], \"edges\": []}";
}

TEST(CliSave, BlocksThatDoNotTileTheTensorAreAnInternalError) {
  test::TempDir dir;
  std::ofstream(dir / "a.json") << "[0, 0]";
  for (const auto& [lo1, why] :
       {std::pair{2, "blocks t[0] and t[1] overlap"},
        std::pair{5, "the 2 blocks do not tile the tensor of shape [9]"}}) {
    std::ofstream(dir / "g.json") << two_blocks(lo1);
    const auto r = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                                 " --repeat 1 --warmup 0 --save t=" + q(dir / "t.npy"));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(std::string("--save t: ") + why), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "t.npy"));
  }
  // Adjacent blocks tile it: t = u(1, i) for i in [0, 8).
  std::ofstream(dir / "g.json") << two_blocks(4);
  const auto r = test::run_cli("execute " + q(dir / "g.json") + " -a " + q(dir / "a.json") +
                               " --repeat 1 --warmup 0 --save t=" + q(dir / "t.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const NpyArray t = read_npy((dir / "t.npy").string());
  ASSERT_EQ(t.shape, (std::vector<std::int64_t>{8}));
  for (std::int64_t i = 0; i < 8; ++i) {
    std::uint64_t h = splitmix(splitmix(1) ^ static_cast<std::uint64_t>(i));
    EXPECT_EQ(t.values[static_cast<std::size_t>(i)],
              static_cast<float>(static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0))
        << i;
  }
}

}  // namespace
}  // namespace doppler
