#pragma once
// UTF-8 validation of names read from files (they end up in JSON, which requires UTF-8).
#include <string_view>

namespace doppler {

/// True when `s` is well-formed UTF-8: no stray continuation bytes, truncated sequences,
/// overlong forms, surrogates or code points past U+10FFFF.
bool valid_utf8(std::string_view s);

}  // namespace doppler
