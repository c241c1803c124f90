// UTF-8 validation of names read from files (they end up in JSON, which requires UTF-8).
#include "doppler/util/utf8.hpp"

#include <cstdint>

namespace doppler {

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int extra = c < 0x80           ? 0
                      : (c >> 5) == 0x6  ? 1
                      : (c >> 4) == 0xE  ? 2
                      : (c >> 3) == 0x1E ? 3
                                         : -1;
    if (extra < 0 || i + static_cast<std::size_t>(extra) >= s.size()) return false;
    for (int k = 1; k <= extra; ++k)
      if ((static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) >> 6) != 0x2)
        return false;
    const std::uint32_t first = extra == 1 ? (c & 0x1Fu) : extra == 2 ? (c & 0x0Fu) : (c & 0x07u);
    // Overlong forms, surrogates and code points past U+10FFFF.
    if (extra == 1 && first < 2) return false;
    if (extra > 1) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      const std::uint32_t top = (first << 6) | (c1 & 0x3Fu);
      if ((extra == 2 && (top < 0x20 || (top >= 0x360 && top < 0x380))) ||
          (extra == 3 && (top < 0x10 || top > 0x10F)))
        return false;
    }
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

}  // namespace doppler
