// Constant tensors of a Graph: validation by set_constants, cheap sharing between copies, the
// JSON round trip (bit-exact values, the documented encoding) and the reader's errors and limit.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "util/env_guard.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

Graph load_graph_with(std::vector<ConstantTensor> constants) {
  GraphBuilder b;
  Node n;
  n.name = "w[0]";
  n.kind = OpKind::input;
  n.out_bytes = 16;
  n.exec = ExecDesc{"load", {2, 2}, {0, 0}, {}, "", {{"tensor", 0}}};
  b.add_node(n);
  Graph g = b.build();
  g.set_constants(std::move(constants));
  return g;
}

std::string error_of(const std::string& text, const ReadLimits& limits = ReadLimits::defaults()) {
  try {
    parse_graph_json(text, "c.json", nullptr, limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Constants, EmptyByDefaultAndValidatedWhenSet) {
  Graph g;
  EXPECT_TRUE(g.constants().empty());
  g.set_constants({{"a", {2, 3}, std::vector<float>(6, 1.0f)}, {"s", {}, {7.0f}}});
  ASSERT_EQ(g.constants().size(), 2u);
  EXPECT_EQ(g.constants()[1].values, std::vector<float>{7.0f});
  g.set_constants({{"z", {4, 0}, {}}});  // an empty tensor
  EXPECT_EQ(g.constants()[0].shape, (std::vector<std::int64_t>{4, 0}));
  try {
    g.set_constants({{"ok", {1}, {1}}, {"bad", {2, 3}, std::vector<float>(5)}});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "constant 1 ('bad'): 5 values do not match the product of its shape");
  }
  EXPECT_THROW(g.set_constants({{"scalar", {}, {}}}), InputError);
  EXPECT_THROW(g.set_constants({{"neg", {-1, -2}, {1, 2}}}), InputError);
  const std::int64_t big = std::int64_t{1} << 62;
  EXPECT_THROW(g.set_constants({{"overflow", {big, 4, 4}, {1}}}), InputError);
  // A failed set leaves the previous constants.
  EXPECT_EQ(g.constants()[0].name, "z");
}

TEST(Constants, CopiesShareTheValues) {
  const Graph g = load_graph_with({{"w", {2, 2}, {1, 2, 3, 4}}});
  const Graph copy = g;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.constants().data(), g.constants().data());
  EXPECT_EQ(copy.constants()[0].values[3], 4.0f);
}

TEST(Constants, JsonRoundTripIsBitExact) {
  const float nan = std::bit_cast<float>(std::uint32_t{0x7fc01234});
  const std::vector<float> odd = {-0.0f,
                                  std::numeric_limits<float>::denorm_min(),
                                  std::numeric_limits<float>::infinity(),
                                  nan,
                                  3.14159274f,
                                  -1e30f};
  const Graph g = load_graph_with({{"w", {2, 2}, {1, 2, 3, 4}},
                                   {"odd", {3, 2}, odd},
                                   {"scalar", {}, {0.5f}},
                                   {"", {0, 5}, {}}});
  const std::string text = format_graph_json(g);
  // The documented encoding: base64 of little-endian f32, one constant per line.
  EXPECT_NE(text.find("\n  \"constants\": [\n    {\"name\":\"w\",\"shape\":[2,2],\"dtype\":"
                      "\"f32\",\"data\":\"AACAPwAAAEAAAEBAAACAQA==\"},\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{\"name\":\"scalar\",\"shape\":[],\"dtype\":\"f32\",\"data\":\"AAAAPw==\"}"),
            std::string::npos);
  const Graph g2 = parse_graph_json(text, "c.json");
  EXPECT_EQ(format_graph_json(g2), text);
  ASSERT_EQ(g2.constants().size(), 4u);
  for (std::size_t t = 0; t < 4; ++t) {
    const ConstantTensor& a = g.constants()[t];
    const ConstantTensor& b = g2.constants()[t];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.shape, b.shape);
    ASSERT_EQ(a.values.size(), b.values.size());
    if (!a.values.empty()) {
      EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * 4), 0) << t;
    }
  }
  EXPECT_TRUE(std::isnan(g2.constants()[1].values[3]));
  EXPECT_TRUE(std::signbit(g2.constants()[1].values[0]));
  EXPECT_EQ(g2.node(0).exec, g.node(0).exec);
  // Without constants the document has no "constants" field.
  EXPECT_EQ(format_graph_json(load_graph_with({})).find("constants"), std::string::npos);
}

#define HEAD "{\"format\": \"doppler-graph\", \"version\": 1, \"nodes\": [],\n\"constants\": [\n"
TEST(Constants, ReaderErrorsNameTheLine) {
  EXPECT_EQ(error_of(HEAD "{\"shape\": [1], \"dtype\": \"f32\"}]}"),
            "c.json:3: missing field 'data'");
  EXPECT_EQ(error_of(HEAD "{\"shape\": [1], \"data\": \"AACAPw==\"}]}"),
            "c.json:3: missing field 'dtype'");
  EXPECT_EQ(error_of(HEAD "{\"dtype\": \"f32\", \"data\": \"AACAPw==\"}]}"),
            "c.json:3: missing field 'shape'");
  EXPECT_EQ(error_of(HEAD "{}, {\"shape\": [1], \"dtype\": \"f16\", \"data\": \"AAA=\"}]}"),
            "c.json:3: missing field 'shape'");
  EXPECT_EQ(error_of(HEAD "{\"shape\": [1],\n\"dtype\": \"f16\", \"data\": \"AAA=\"}]}"),
            "c.json:4: constant 0: unsupported dtype \"f16\" (expected \"f32\")");
  EXPECT_EQ(error_of(HEAD "{\"shape\": [1], \"dtype\": \"f32\",\n\"data\": \"AACAP\"}]}"),
            "c.json:4: constant 0: base64 length 5 is not a multiple of 4");
  EXPECT_EQ(error_of(HEAD "{\"shape\": [1], \"dtype\": \"f32\",\n\"data\": \"AA*APw==\"}]}"),
            "c.json:4: constant 0: invalid base64 character at position 2");
  EXPECT_EQ(error_of(HEAD "{\"shape\": [2], \"dtype\": \"f32\",\n\"data\": \"AACAPw==\"}]}"),
            "c.json:4: constant 0: data holds 4 bytes, the shape needs 8 (4 per f32)");
  EXPECT_EQ(error_of(HEAD "{\"shape\": [1], \"dtype\": \"f32\",\n\"data\": 17}]}"),
            "c.json:4: expected a string, found number");
  EXPECT_EQ(error_of(HEAD "{\"shape\": [-1], \"dtype\": \"f32\", \"data\": \"\"}]}"),
            "c.json:3: integer -1 is out of range (expected 0..9223372036854775807)");
  EXPECT_EQ(error_of(HEAD "{\"shape\": [], \"dtype\": \"f32\", \"data\": \"\",\n\"scale\": 1}]}"),
            "c.json:4: constant 0: unknown field 'scale' (expected name, shape, dtype, data)");
  EXPECT_EQ(error_of("{\"format\": \"doppler-graph\", \"version\": 1, \"nodes\": [],\n"
                     "\"constants\": {}}"),
            "c.json:2: expected an array, found object");
}

// Constants of 4,096 base64 characters and more are decoded from the file's text in place (not
// copied into the parsed document): the same values and the same errors, on the same lines.
TEST(Constants, LongDataReadsAsShortDataDoes) {
  std::vector<float> values(3000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.25f - 7;
  const Graph g = load_graph_with({{"big", {3000}, values}, {"small", {2}, {1, 2}}});
  const std::string text = format_graph_json(g);
  const Graph g2 = parse_graph_json(text, "c.json");
  ASSERT_EQ(g2.constants().size(), 2u);
  EXPECT_EQ(g2.constants()[0].values, values);
  EXPECT_EQ(g2.constants()[1].values, (std::vector<float>{1, 2}));
  EXPECT_EQ(format_graph_json(g2), text);
  // 3000 f32 are 12,000 bytes, 16,000 base64 characters, all "A" for zeros.
  const std::string zeros(16000, 'A');
  EXPECT_EQ(
      error_of(HEAD "{\"shape\": [3000], \"dtype\": \"f32\",\n\"data\":\n\"" + zeros + "\"}]}"),
      "no error");
  // The value starts on line 5 (its key on line 4), long or short.
  EXPECT_EQ(error_of(HEAD "{\"shape\": [1], \"dtype\": \"f32\",\n\"data\":\n\"AA*APw==\"}]}"),
            "c.json:5: constant 0: invalid base64 character at position 2");
  std::string bad = zeros;
  bad[9000] = '*';
  EXPECT_EQ(error_of(HEAD "{\"shape\": [3000], \"dtype\": \"f32\",\n\"data\":\n\"" + bad + "\"}]}"),
            "c.json:5: constant 0: invalid base64 character at position 9000");
  EXPECT_EQ(
      error_of(HEAD "{\"shape\": [3001], \"dtype\": \"f32\",\n\"data\":\n\"" + zeros + "\"}]}"),
      "c.json:5: constant 0: data holds 12000 bytes, the shape needs 12004 (4 per f32)");
  EXPECT_EQ(
      error_of(HEAD "{\"shape\": [3000], \"dtype\": \"f32\",\n\"data\":\n\"" + zeros + "A\"}]}"),
      "c.json:5: constant 0: base64 length 16001 is not a multiple of 4");
  // A long value with an escape is parsed as JSON says, and decoded as any other.
  EXPECT_EQ(error_of(HEAD "{\"shape\": [3000], \"dtype\": \"f32\",\n\"data\":\n\"\\u0041" +
                     zeros.substr(1) + "\"}]}"),
            "no error");
  // A long string in another member stays in the document.
  const std::string named = HEAD "{\"name\": \"" + zeros +
                            "\", \"shape\": [1], \"dtype\": \"f32\", \"data\": \"AACAPw==\"}]}";
  EXPECT_EQ(parse_graph_json(named, "c.json").constants()[0].name, zeros);
}

TEST(Constants, ReaderEnforcesTheByteLimitBeforeDecoding) {
  ReadLimits limits = ReadLimits::defaults();
  limits.max_constant_bytes = 12;
  const std::string two = HEAD
      "{\"shape\": [2], \"dtype\": \"f32\", \"data\": \"AACAPwAAAEA=\"},\n"
      "{\"shape\": [1], \"dtype\": \"f32\", \"data\": \"AACAPw==\"}]}";
  EXPECT_EQ(error_of(two, limits), "no error");  // exactly 12 bytes
  limits.max_constant_bytes = 11;
  EXPECT_EQ(error_of(two, limits),
            "c.json:4: constant 1: constant tensors hold more than 11 bytes, the limit (raise it "
            "with DOPPLER_MAX_CONSTANT_BYTES)");
  {
    const test::EnvGuard env("DOPPLER_MAX_CONSTANT_BYTES", "8");
    EXPECT_EQ(read_limits().max_constant_bytes, 8u);
    EXPECT_EQ(error_of(two, read_limits()),
              "c.json:4: constant 1: constant tensors hold more than 8 bytes, the limit (raise it "
              "with DOPPLER_MAX_CONSTANT_BYTES)");
  }
  // A shape whose element count overflows is refused by the limit, not wrapped.
  EXPECT_EQ(error_of(HEAD "{\"shape\": [4294967296, 4294967296, 16], \"dtype\": \"f32\", "
                          "\"data\": \"\"}]}"),
            "c.json:3: constant 0: constant tensors hold more than 4294967296 bytes, the limit "
            "(raise it with DOPPLER_MAX_CONSTANT_BYTES)");
}
#undef HEAD

}  // namespace
}  // namespace doppler
