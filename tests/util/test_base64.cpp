// Base64: the test vectors of RFC 4648 (section 10), both alphabet extremes, a round trip of
// every byte value, strict decoding (length, characters, padding, non-canonical bits), and the
// in-place forms (append, decode into a buffer).
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "doppler/util/base64.hpp"

namespace doppler {
namespace {

std::string decoded(const std::string& text) {
  std::string out, why;
  EXPECT_TRUE(base64_decode(text, out, why)) << text << ": " << why;
  return out;
}

std::string refusal(const std::string& text) {
  std::string out, why;
  EXPECT_FALSE(base64_decode(text, out, why)) << text;
  return why;
}

TEST(Base64, Rfc4648TestVectors) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, coded] : vectors) {
    EXPECT_EQ(base64_encode(plain), coded) << plain;
    EXPECT_EQ(decoded(coded), plain) << coded;
  }
}

TEST(Base64, BothEndsOfTheAlphabetAndEveryByte) {
  EXPECT_EQ(base64_encode(std::string("\xfb\xff", 2)), "+/8=");
  EXPECT_EQ(base64_encode(std::string("\x00\x00\x00", 3)), "AAAA");
  EXPECT_EQ(decoded("+/8="), std::string("\xfb\xff", 2));
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t n = 250; n <= 256; ++n) {  // all three tail lengths
    const std::string part = all.substr(0, n);
    const std::string coded = base64_encode(part);
    EXPECT_EQ(coded.size(), (n + 2) / 3 * 4);
    EXPECT_EQ(decoded(coded), part);
  }
  // Little-endian f32 1, 2, 3, 4 (the example of docs/formats.md).
  EXPECT_EQ(base64_encode(std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00"
                                      "\x80\x40",
                                      16)),
            "AACAPwAAAEAAAEBAAACAQA==");
}

TEST(Base64, StrictDecodingRefusesMalformedText) {
  EXPECT_EQ(refusal("Zg="), "base64 length 3 is not a multiple of 4");
  EXPECT_EQ(refusal("Zm9vY"), "base64 length 5 is not a multiple of 4");
  EXPECT_EQ(refusal("Zm9*"), "invalid base64 character at position 3");
  EXPECT_EQ(refusal("Zm9v\nZm9v"), "base64 length 9 is not a multiple of 4");
  EXPECT_EQ(refusal("Zm 9"), "invalid base64 character at position 2");
  EXPECT_EQ(refusal("Zm-_"), "invalid base64 character at position 2");  // URL alphabet
  EXPECT_EQ(refusal("Zm=v"), "base64 padding '=' at position 2 before the end");
  EXPECT_EQ(refusal("Zg==Zg=="), "base64 padding '=' at position 2 before the end");
  EXPECT_EQ(refusal("Z==="), "base64 padding '=' at position 1 before the end");
  EXPECT_EQ(refusal("===="), "base64 padding '=' at position 0 before the end");
  EXPECT_EQ(refusal("Zh=="), "non-zero unused bits before the base64 padding at position 1");
  EXPECT_EQ(refusal("Zm9="), "non-zero unused bits before the base64 padding at position 2");
  EXPECT_EQ(refusal(std::string("Zm9\0", 4)), "invalid base64 character at position 3");
  EXPECT_EQ(refusal("Zm9\xc3"), "invalid base64 character at position 3");
}

// The in-place forms against the RFC 4648 vectors: append after existing text, decode into a
// buffer sized by base64_decoded_size.
TEST(Base64, AppendAndDecodeIntoABuffer) {
  std::string out = "x:";
  base64_append("foob", out);
  base64_append("", out);
  base64_append("fo", out);
  EXPECT_EQ(out, "x:Zm9vYg==Zm8=");
  EXPECT_EQ(base64_encoded_size(4), 8u);
  EXPECT_EQ(base64_encoded_size(0), 0u);
  for (const auto& [text, size] : {std::pair{"", 0}, {"Zg==", 1}, {"Zm8=", 2}, {"Zm9vYmFy", 6}})
    EXPECT_EQ(base64_decoded_size(text), std::size_t(size)) << text;
  EXPECT_EQ(base64_decoded_size("Zm9"), std::nullopt);
  std::string buffer(6, '?'), why;
  ASSERT_TRUE(base64_decode_to("Zm9vYmFy", buffer, why)) << why;
  EXPECT_EQ(buffer, "foobar");
  EXPECT_FALSE(base64_decode_to("Zm9vYm*y", buffer, why));
  EXPECT_EQ(why, "invalid base64 character at position 6");
  std::string small(5, '?');
  EXPECT_THROW(base64_decode_to("Zm9vYmFy", small, why), std::invalid_argument);
}

}  // namespace
}  // namespace doppler
