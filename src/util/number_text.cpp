#include "doppler/util/number_text.hpp"

#include <charconv>
#include <cstdio>

namespace doppler {

std::string shortest_text(double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::string sig_text(double x, int digits) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return std::string(buf, static_cast<std::size_t>(n > 0 ? n : 0));
}

std::string fixed_text(double x, int decimals) {
  const int n = std::snprintf(nullptr, 0, "%.*f", decimals, x);
  std::string s(static_cast<std::size_t>(n > 0 ? n : 0), '\0');
  std::snprintf(s.data(), s.size() + 1, "%.*f", decimals, x);
  return s;
}

std::string numbered(const std::string& prefix, long long n) {
  return prefix + std::to_string(n);
}

}  // namespace doppler
