#include "doppler/util/parse.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <system_error>

namespace doppler {

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

bool parse_int64(std::string_view token, std::int64_t& out, std::string& why) {
  const std::string_view t = trim(token);
  if (t.empty()) {
    why = "empty field, expected an integer";
    return false;
  }
  const char* first = t.data();
  if (*first == '+') ++first;  // from_chars rejects a leading '+'
  const auto [ptr, ec] = std::from_chars(first, t.data() + t.size(), out);
  if (ec == std::errc::result_out_of_range) {
    why = "integer " + quote_token(t) + " is out of range of int64";
    return false;
  }
  if (ec != std::errc() || ptr != t.data() + t.size()) {
    why = "expected an integer, found " + quote_token(t);
    return false;
  }
  return true;
}

bool parse_finite_double(std::string_view token, double& out, std::string& why) {
  const std::string_view t = trim(token);
  if (t.empty()) {
    why = "empty field, expected a number";
    return false;
  }
  const char* first = t.data();
  if (*first == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, t.data() + t.size(), out);
  if (ec == std::errc::result_out_of_range) {
    // Underflow towards zero is harmless (the value is tiny); overflow is an error.
    const double v = std::strtod(std::string(t).c_str(), nullptr);
    if (std::isfinite(v) && std::fabs(v) < 1.0) {
      out = v;
      return true;
    }
    why = "number " + quote_token(t) + " is out of range of double";
    return false;
  }
  if (ec != std::errc() || ptr != t.data() + t.size()) {
    why = "expected a number, found " + quote_token(t);
    return false;
  }
  if (std::isnan(out)) {
    why = "expected a number, found NaN";
    return false;
  }
  if (std::isinf(out)) {
    why = "expected a finite number, found " + quote_token(t);
    return false;
  }
  return true;
}

std::vector<std::string_view> split_fields(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      const std::string_view last = s.substr(start);
      if (!trim(last).empty() || out.empty()) out.push_back(last);
      break;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  if (out.size() == 1 && trim(out.front()).empty()) out.clear();
  return out;
}

std::string quote_token(std::string_view token, std::size_t max_len) {
  std::string t(token.substr(0, max_len));
  for (char& c : t)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  if (token.size() > max_len) t += "...";
  return "'" + t + "'";
}

}  // namespace doppler
