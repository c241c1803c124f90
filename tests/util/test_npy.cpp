// NumPy .npy reader and writer: exact bytes of the writer, hand-written headers (valid ones in
// every version and dtype, and malformed ones with their one-line errors), round trips, and
// interoperability with NumPy itself when /usr/bin/python3 has it.
#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/support.hpp"
#include "util/env_guard.hpp"

#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/npy.hpp"

namespace doppler {
namespace {

using test::error_of;

// Little-endian bytes of an integer of `n` bytes.
std::string le(std::uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

std::string f4(std::initializer_list<float> xs) {
  std::string s;
  for (float x : xs) s += le(std::bit_cast<std::uint32_t>(x), 4);
  return s;
}

std::string f8(std::initializer_list<double> xs) {
  std::string s;
  for (double x : xs) s += le(std::bit_cast<std::uint64_t>(x), 8);
  return s;
}

// A .npy file of format `major`.0 with this header text (no padding added) and data.
std::string npy(int major, const std::string& header, const std::string& data) {
  std::string s = "\x93NUMPY";
  s.push_back(static_cast<char>(major));
  s.push_back('\0');
  s += le(header.size(), major == 1 ? 2 : 4);
  return s + header + data;
}

std::string header(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }\n";
}

std::string problem(const std::string& bytes) {
  return error_of([&] { parse_npy(bytes, "x.npy"); });
}

TEST(Npy, WriterBytesAreExactlyNumpysFormat) {
  const std::string bytes = format_npy({2}, std::vector<float>{1.0f, -2.0f});
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  // 10 bytes of preamble + 118 bytes of header (dict, blanks, '\n') = 128, as NumPy 1.24
  // writes it.
  std::string want = std::string("\x93NUMPY\x01\x00", 8) + std::string("\x76\x00", 2) + dict +
                     std::string(60, ' ') + "\n" +
                     std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);
  EXPECT_EQ(bytes, want);
  EXPECT_NE(format_npy({}, std::vector<float>{3.0f}).find("'shape': (), }"), std::string::npos);
  EXPECT_NE(format_npy({2, 3}, std::vector<float>(6)).find("'shape': (2, 3), }"),
            std::string::npos);
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{}, {7}, {3, 5}, {2, 0, 4}}) {
    std::size_t n = 1;
    for (auto e : shape) n *= static_cast<std::size_t>(e);
    EXPECT_EQ(format_npy(shape, std::vector<float>(n)).size() % 64, (4 * n) % 64);
  }
  EXPECT_THROW(format_npy({2, 2}, std::vector<float>(3)), std::invalid_argument);
  EXPECT_THROW(format_npy({-1}, std::vector<float>{}), std::invalid_argument);
}

TEST(Npy, RoundTripThroughFiles) {
  test::TempDir dir;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<std::vector<std::int64_t>, std::vector<float>>> cases = {
      {{}, {42.5f}},
      {{0}, {}},
      {{4}, {-0.0f, inf, -inf, 1e-40f}},
      {{2, 3}, {1, 2, 3, 4, 5, 6}},
      {{2, 0, 4}, {}},
      {{1, 2, 1, 2}, {nan, 0.1f, -7.25f, 3e38f}}};
  for (const auto& [shape, values] : cases) {
    const std::string path = (dir / "a.npy").string();
    write_npy(path, shape, values);
    const NpyArray a = read_npy(path);
    EXPECT_EQ(a.shape, shape);
    ASSERT_EQ(a.values.size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(std::bit_cast<std::uint32_t>(a.values[i]), std::bit_cast<std::uint32_t>(values[i]));
  }
  EXPECT_NE(error_of([&] {
              write_npy((dir / "no" / "a.npy").string(), {1}, std::vector{1.f});
            }).find("cannot write"),
            std::string::npos);
  const std::string missing = (dir / "missing.npy").string();
  EXPECT_EQ(error_of([&] { read_npy(missing); }).rfind(missing + ": cannot open", 0), 0u);
}

TEST(Npy, EveryVersionAndDtypeConvertsToFloat) {
  const auto a = parse_npy(npy(1, header("<f4", "(2, 2)"), f4({1, 2, 3, 4.5f})), "a");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(a.values, (std::vector<float>{1, 2, 3, 4.5f}));
  const auto b = parse_npy(npy(2, header("<f8", "(3,)"), f8({0.1, -1e300, 2.5})), "b");
  EXPECT_EQ(b.values[0], 0.1f);
  EXPECT_EQ(b.values[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(b.values[2], 2.5f);
  const auto c = parse_npy(
      npy(3, header("<i8", "(2,)"), le(static_cast<std::uint64_t>(-5), 8) + le(1 << 20, 8)), "c");
  EXPECT_EQ(c.values, (std::vector<float>{-5, 1 << 20}));
  const auto d = parse_npy(
      npy(1, header("<i4", "(1, 2)"), le(static_cast<std::uint32_t>(-7), 4) + le(9, 4)), "d");
  EXPECT_EQ(d.values, (std::vector<float>{-7, 9}));
  const auto e = parse_npy(npy(1, header("|b1", "(3,)"), std::string("\x01\x00\x01", 3)), "e");
  EXPECT_EQ(e.values, (std::vector<float>{1, 0, 1}));
  const auto u = parse_npy(npy(1, header("|u1", "(2,)"), std::string("\xff\x07", 2)), "u");
  EXPECT_EQ(u.values, (std::vector<float>{255, 7}));
  const auto z = parse_npy(npy(1, header("<f4", "()"), f4({-3})), "z");
  EXPECT_TRUE(z.shape.empty());
  EXPECT_EQ(z.values, (std::vector<float>{-3}));
  const auto empty = parse_npy(npy(1, header("<f8", "(0, 3)"), ""), "empty");
  EXPECT_EQ(empty.shape, (std::vector<std::int64_t>{0, 3}));
  EXPECT_TRUE(empty.values.empty());
}

TEST(Npy, HeaderSyntaxVariantsNumpyAccepts) {
  // Double quotes, other key order, no trailing comma, blanks everywhere, no final newline.
  for (const std::string& h :
       {std::string("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f4\"}"),
        std::string("  { 'descr' : '<f4' ,'fortran_order':False,'shape':( 2 , ) }   \n"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2,),}"),
        header("<f4", "(2,)") + std::string(40, ' ')}) {
    const auto a = parse_npy(npy(1, h, f4({5, 6})), "v");
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2})) << h;
    EXPECT_EQ(a.values, (std::vector<float>{5, 6})) << h;
  }
  EXPECT_EQ(parse_npy(npy(1, header("<f4", "(1, 1, 1,)"), f4({8})), "w").shape,
            (std::vector<std::int64_t>{1, 1, 1}));
}

TEST(Npy, MalformedFilesAreOneLineErrors) {
  const std::string f2 = f4({1, 2});
  EXPECT_EQ(problem("hello"), "x.npy: not a NumPy .npy file (no \\x93NUMPY magic string)");
  EXPECT_EQ(problem(std::string("\x93NUMPY\x04\x00", 8) + "xx"),
            "x.npy: unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)");
  EXPECT_EQ(problem(std::string("\x93NUMPY\x01\x01", 8) + "xx"),
            "x.npy: unsupported .npy format version 1.1 (supported: 1.0, 2.0, 3.0)");
  EXPECT_EQ(problem(std::string("\x93NUMPY\x02\x00\x01", 9)), "x.npy: truncated .npy header");
  EXPECT_EQ(problem(npy(1, header("<f4", "(2,)"), f2).substr(0, 30)),
            "x.npy: truncated .npy header (58 bytes announced, 20 present)");
  EXPECT_EQ(problem(std::string("\x93NUMPY\x02\x00", 8) + le(1 << 20, 4)),
            "x.npy: header of 1048576 bytes, larger than the limit of 65536 bytes");
  EXPECT_EQ(problem(npy(1, header("<f4", "(2,)", true), f2)),
            "x.npy: fortran_order is True: only C-order arrays are supported (save "
            "np.ascontiguousarray)");
  EXPECT_EQ(problem(npy(1, header(">f4", "(2,)"), f2)),
            "x.npy: unsupported dtype '>f4' (supported: <f4, <f8, <i8, <i4, |b1, |u1)");
  EXPECT_EQ(problem(npy(1, header("<f2", "(2,)"), f2)),
            "x.npy: unsupported dtype '<f2' (supported: <f4, <f8, <i8, <i4, |b1, |u1)");
  EXPECT_EQ(problem(npy(1, header("<f4", "(3,)"), f2)),
            "x.npy: truncated data: shape (3,) of <f4 needs 12 bytes, the file has 8 bytes of "
            "data");
  EXPECT_EQ(problem(npy(1, header("<f4", "(1,)"), f2)),
            "x.npy: 4 bytes after the data of shape (1,) of <f4");
  EXPECT_EQ(problem(npy(1, header("<f4", "(4611686018427387904, 4)"), f2)),
            "x.npy: shape (4611686018427387904, 4) has too many elements");
  EXPECT_EQ(problem(npy(1, header("<f4", "(4611686018427387905,)"), f2)),
            "x.npy: extent '4611686018427387905' in the shape is too large");
  EXPECT_EQ(problem(npy(1, header("<f4", "(2)"), f2)),
            "x.npy: a one-dimensional shape needs a trailing comma, as in (3,)");
  EXPECT_EQ(problem(npy(1, header("<f4", "(02,)"), f2)),
            "x.npy: integer '02' with a leading zero in the shape");
  EXPECT_EQ(problem(npy(1, header("<f4", "(-2,)"), f2)),
            "x.npy: expected a non-negative integer at byte 51 of the header, found '-2,), }?'");
  EXPECT_EQ(problem(npy(1, header("<f4", "[2]"), f2)),
            "x.npy: expected True, False, a string or a tuple at byte 50 of the header, found "
            "'[2], }?'");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': False}", f2)),
            "x.npy: the header has no 'shape' key");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'descr': '<f4', 'shape': (2,)}", f2)),
            "x.npy: duplicate key 'descr' in the header");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", f2)),
            "x.npy: unexpected key 'x' at byte 56 of the header (expected 'descr', "
            "'fortran_order' and 'shape')");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", f2)),
            "x.npy: expected True, False, a string or a tuple at byte 34 of the header, found "
            "'false, 'shap...'");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,)}", f2)),
            "x.npy: expected True, False, a string or a tuple at byte 39 of the header, found "
            "'y, 'shape': ...'");
  EXPECT_EQ(problem(npy(1, "{'descr': 1, 'fortran_order': False, 'shape': (2,)}", f2)),
            "x.npy: expected True, False, a string or a tuple at byte 10 of the header, found "
            "'1, 'fortran_...'");
  EXPECT_EQ(problem(npy(1, "{'descr': (2,), 'fortran_order': False, 'shape': (2,)}", f2)),
            "x.npy: 'descr' must be a string such as '<f4'");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,)}", f2)),
            "x.npy: 'fortran_order' must be True or False");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': '2'}", f2)),
            "x.npy: 'shape' must be a tuple of integers such as (3, 4)");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", f2)),
            "x.npy: expected only blanks after the closing '}' at byte 56 of the header, found "
            "'x'");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4", f2)), "x.npy: unterminated string in the header");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4' 'shape': (2,)}", f2)),
            "x.npy: expected ',' or '}' after a value at byte 16 of the header, found "
            "''shape': (2,...'");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,", f2)),
            "x.npy: expected a non-negative integer, found the end of the header");
  EXPECT_EQ(problem(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", f2)),
            "x.npy: expected ',' or ')' in the shape at byte 53 of the header, found '3)}'");
  EXPECT_EQ(problem(npy(1, "{'de\\scr': '<f4'}", f2)),
            "x.npy: unsupported character in a string at byte 4 of the header");
  EXPECT_EQ(problem(npy(1, "", f2)),
            "x.npy: expected the header to start with '{', found the end of the header");
  std::string deep = "(";
  for (int i = 0; i < 65; ++i) deep += "1, ";
  EXPECT_EQ(problem(npy(1, header("<f4", deep + ")"), f2)),
            "x.npy: the shape has more than 64 dimensions");
}

TEST(Npy, FileSizeLimitApplies) {
  test::TempDir dir;
  const std::string path = (dir / "big.npy").string();
  write_npy(path, {1000}, std::vector<float>(1000));
  EXPECT_EQ(read_npy(path).values.size(), 1000u);
  const test::EnvGuard limit("DOPPLER_MAX_FILE_BYTES", "1000");
  const std::string err = error_of([&] { read_npy(path); });
  EXPECT_EQ(err.rfind(path + ": file is 4128 bytes, larger than the limit of 1000 bytes", 0), 0u)
      << err;
}

// Runs `script` with /usr/bin/python3; false when it fails.
bool python(const std::string& script) {
  return std::system(("/usr/bin/python3 -c \"" + script + "\" >/dev/null 2>&1").c_str()) == 0;
}

TEST(Npy, InteroperatesWithNumpy) {
  if (!python("import numpy"))
    GTEST_SKIP() << "/usr/bin/python3 with numpy is not available: skipping the NumPy check";
  test::TempDir dir;
  const std::string d = dir.path().string();
  ASSERT_TRUE(python("import numpy as np; d='" + d +
                     "'; np.save(d+'/a.npy', np.arange(6, dtype=np.float32).reshape(2, 3) / 4); "
                     "np.save(d+'/b.npy', np.array([[1.5, -2.0]])); "
                     "np.save(d+'/c.npy', np.array([3, -4], dtype=np.int64)); "
                     "np.save(d+'/e.npy', np.array([True, False])); "
                     "np.save(d+'/f.npy', np.asfortranarray(np.ones((2, 3), dtype=np.float32))); "
                     "np.save(d+'/z.npy', np.float32(7)); "
                     "np.save(d+'/big.npy', np.ones((3,) * 12, dtype=np.uint8))"));
  const auto a = read_npy(d + "/a.npy");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.values, (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f}));
  EXPECT_EQ(read_npy(d + "/b.npy").values, (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(read_npy(d + "/c.npy").values, (std::vector<float>{3, -4}));
  EXPECT_EQ(read_npy(d + "/e.npy").values, (std::vector<float>{1, 0}));
  EXPECT_NE(error_of([&] { read_npy(d + "/f.npy"); }).find("fortran_order is True"),
            std::string::npos);
  const auto z = read_npy(d + "/z.npy");
  EXPECT_TRUE(z.shape.empty());
  EXPECT_EQ(z.values, (std::vector<float>{7}));
  EXPECT_EQ(read_npy(d + "/big.npy").values.size(), 531441u);
  // NumPy reads what write_npy writes.
  write_npy(d + "/w.npy", {2, 2}, std::vector<float>{1, 2, 3, 4.5f});
  write_npy(d + "/w0.npy", {}, std::vector<float>{-1});
  EXPECT_TRUE(python("import numpy as np; d='" + d +
                     "'; w=np.load(d+'/w.npy'); w0=np.load(d+'/w0.npy'); "
                     "assert w.dtype==np.float32 and w.shape==(2,2) and "
                     "(w==np.array([[1,2],[3,4.5]])).all(); "
                     "assert w0.shape==() and w0==-1"));
}

}  // namespace
}  // namespace doppler
