#pragma once
// Base64 (RFC 4648, section 4: the standard alphabet with '=' padding), used to embed binary
// data such as constant tensors in JSON documents.
#include <string>
#include <string_view>

namespace doppler {

/// The base64 encoding of `bytes`, padded with '=' to a multiple of 4 characters.
std::string base64_encode(std::string_view bytes);

/// Strictly decodes `text` into `out`: the length must be a multiple of 4, only the 64
/// alphabet characters may appear, '=' only as one or two final padding characters, and the
/// unused bits before the padding must be zero (so every byte string has exactly one accepted
/// encoding). No blanks or line breaks. On failure returns false and sets `why` to a short
/// reason naming the offending position; `out` is then unspecified.
bool base64_decode(std::string_view text, std::string& out, std::string& why);

}  // namespace doppler
