#include "doppler/util/base64.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

namespace doppler {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Value of each character, -1 when it is not in the alphabet.
constexpr std::array<int, 256> make_table() {
  std::array<int, 256> t{};
  for (int& x : t) x = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = i;
  return t;
}
constexpr std::array<int, 256> kTable = make_table();

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  base64_append(bytes, out);
  return out;
}

void base64_append(std::string_view bytes, std::string& out) {
  std::size_t o = out.size();
  out.resize(o + base64_encoded_size(bytes.size()));
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t w = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int s = 18; s >= 0; s -= 6) out[o++] = kAlphabet[(w >> s) & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    const std::uint32_t w = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out[o++] = kAlphabet[(w >> 18) & 63];
    out[o++] = kAlphabet[(w >> 12) & 63];
    out[o++] = rest == 2 ? kAlphabet[(w >> 6) & 63] : '=';
    out[o++] = '=';
  }
}

std::optional<std::size_t> base64_decoded_size(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  return text.size() / 4 * 3 - pad;
}

bool base64_decode_to(std::string_view text, std::span<char> out, std::string& why) {
  if (text.size() % 4 != 0) {
    why = fmt::format("base64 length {} is not a multiple of 4", text.size());
    return false;
  }
  const std::size_t size = *base64_decoded_size(text);
  if (out.size() != size)
    throw std::invalid_argument(
        fmt::format("base64_decode_to: {} bytes of room for {} bytes", out.size(), size));
  const std::size_t pad = text.size() / 4 * 3 - size;
  const std::size_t data_end = text.size() - pad;
  std::size_t o = 0;  // bytes written
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t w = 0;
    for (std::size_t k = i; k < i + 4; ++k) {
      const auto c = static_cast<unsigned char>(text[k]);
      int v = 0;
      if (k < data_end) {
        v = kTable[c];
        if (v < 0) {
          why = c == '=' ? fmt::format("base64 padding '=' at position {} before the end", k)
                         : fmt::format("invalid base64 character at position {}", k);
          return false;
        }
      }
      w = w << 6 | static_cast<std::uint32_t>(v);
    }
    out[o++] = static_cast<char>(w >> 16 & 0xFF);
    if (i + 4 < text.size() || pad < 2) out[o++] = static_cast<char>(w >> 8 & 0xFF);
    if (i + 4 < text.size() || pad < 1) out[o++] = static_cast<char>(w & 0xFF);
  }
  // Bits of the last character that no output byte uses must be zero (canonical encoding).
  const std::uint32_t unused = pad == 2 ? 0xF : pad == 1 ? 0x3 : 0;
  if (pad > 0 &&
      (static_cast<std::uint32_t>(kTable[static_cast<unsigned char>(text[data_end - 1])]) &
       unused) != 0) {
    why =
        fmt::format("non-zero unused bits before the base64 padding at position {}", data_end - 1);
    return false;
  }
  return true;
}

bool base64_decode(std::string_view text, std::string& out, std::string& why) {
  out.assign(base64_decoded_size(text).value_or(0), '\0');
  return base64_decode_to(text, out, why);
}

}  // namespace doppler
