#include "doppler/util/json_aside.hpp"

#include <algorithm>
#include <cstring>

namespace doppler {

namespace {

// The escape that the placeholders start with: a source that has it anywhere sets nothing aside,
// so that a string with a NUL character in the parsed text is always a placeholder.
constexpr std::string_view kNulEscape = "\\u0000";

// The index of the quote that closes the string literal opening at source[open] (source.size()
// when unterminated).
std::size_t closing_quote(std::string_view s, std::size_t open) {
  for (std::size_t i = open + 1;;) {
    const void* q = std::memchr(s.data() + i, '"', s.size() - i);
    if (q == nullptr) return s.size();
    const auto at = static_cast<std::size_t>(static_cast<const char*>(q) - s.data());
    std::size_t slashes = 0;
    while (at - slashes > open + 1 && s[at - slashes - 1] == '\\') ++slashes;
    if (slashes % 2 == 0) return at;
    i = at + 1;
  }
}

// Whether `s` is printable ASCII without a backslash: string contents that are valid JSON as they
// stand and mean themselves, with no line break. 64 characters per step, without a branch in
// the step (so that the compiler vectorises it): the strings tested are hundreds of MB.
bool plain(std::string_view s) {
  const auto bad = [](unsigned char c) { return (c < 0x20) | (c >= 0x80) | (c == '\\'); };
  std::size_t i = 0;
  for (; i + 64 <= s.size(); i += 64) {
    bool any = false;
    for (std::size_t k = 0; k < 64; ++k) any |= bad(static_cast<unsigned char>(s[i + k]));
    if (any) return false;
  }
  for (; i < s.size(); ++i)
    if (bad(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// The index of the first character at or after i that is not JSON whitespace.
std::size_t skip_blanks(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  return i;
}

}  // namespace

std::optional<AsideText> set_aside_long_strings(std::string_view source,
                                                const std::vector<std::string>& members,
                                                std::size_t min_size) {
  AsideText out;
  std::size_t copied = 0;        // source[0, copied) is in out.text
  bool value_of_member = false;  // the next string is the value of a member in `members`
  for (std::size_t i = 0; i < source.size();) {
    const void* q = std::memchr(source.data() + i, '"', source.size() - i);
    if (q == nullptr) break;
    const auto open = static_cast<std::size_t>(static_cast<const char*>(q) - source.data());
    // Anything but blanks and a colon between a member's key and this quote: not its value.
    const bool is_value = value_of_member && skip_blanks(source, i) == open;
    const std::size_t close = closing_quote(source, open);
    if (close == source.size()) break;
    const std::string_view contents = source.substr(open + 1, close - open - 1);
    value_of_member = false;
    const std::size_t after = skip_blanks(source, close + 1);
    if (after < source.size() && source[after] == ':') {  // a key
      value_of_member = std::find(members.begin(), members.end(), contents) != members.end();
      i = after + 1;
      continue;
    }
    if (is_value && contents.size() >= min_size && plain(contents)) {
      const std::string_view kept = source.substr(copied, open - copied);
      if (kept.find(kNulEscape) != std::string_view::npos) return std::nullopt;
      out.text.append(kept);
      out.text += "\"\\u0000" + std::to_string(out.spans.size()) + '"';
      out.spans.push_back({open + 1, contents.size()});
      copied = close + 1;
    }
    i = close + 1;
  }
  if (out.spans.empty()) return std::nullopt;
  const std::string_view rest = source.substr(copied);
  if (rest.find(kNulEscape) != std::string_view::npos) return std::nullopt;
  out.text.append(rest);
  return out;
}

std::string_view aside_contents(std::string_view value, std::string_view source,
                                const std::vector<AsideSpan>& spans) {
  if (spans.empty() || value.size() < 2 || value.size() > 20 || value[0] != '\0') return value;
  std::size_t k = 0;
  for (const char c : value.substr(1)) {
    if (c < '0' || c > '9') return value;
    k = k * 10 + static_cast<std::size_t>(c - '0');
  }
  return k < spans.size() ? source.substr(spans[k].offset, spans[k].size) : value;
}

}  // namespace doppler
