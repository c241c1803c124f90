#include "doppler/util/json_aside.hpp"

#include <algorithm>
#include <cstring>

namespace doppler {

namespace {

// The index of the quote that closes the string literal opening at source[open] (source.size()
// when unterminated); `escaped` tells whether a backslash occurs in it.
std::size_t closing_quote(std::string_view s, std::size_t open, bool& escaped) {
  escaped = false;
  std::size_t i = open + 1;
  for (;;) {
    const void* q = std::memchr(s.data() + i, '"', s.size() - i);
    if (q == nullptr) return s.size();
    const auto at = static_cast<std::size_t>(static_cast<const char*>(q) - s.data());
    std::size_t slashes = 0;
    while (at - slashes > open + 1 && s[at - slashes - 1] == '\\') ++slashes;
    if (!escaped) escaped = std::memchr(s.data() + i, '\\', at - i) != nullptr;
    if (slashes % 2 == 0) return at;
    i = at + 1;
  }
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
    bool escaped = false;
    const std::size_t close = closing_quote(source, open, escaped);
    if (close == source.size()) break;
    const std::string_view contents = source.substr(open + 1, close - open - 1);
    value_of_member = false;
    const std::size_t after = skip_blanks(source, close + 1);
    if (after < source.size() && source[after] == ':') {  // a key
      value_of_member = std::find(members.begin(), members.end(), contents) != members.end();
      i = after + 1;
      continue;
    }
    if (is_value && !escaped && contents.size() >= min_size) {
      out.text.append(source.substr(copied, open - copied));
      out.text += "\"\\u0000" + std::to_string(out.spans.size()) + '"';
      out.spans.push_back({open + 1, contents.size()});
      copied = close + 1;
    }
    i = close + 1;
  }
  if (out.spans.empty()) return std::nullopt;
  out.text.append(source.substr(copied));
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
