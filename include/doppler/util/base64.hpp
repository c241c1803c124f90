#pragma once
// Base64 (RFC 4648, section 4: the standard alphabet with '=' padding), used to embed binary
// data such as constant tensors in JSON documents.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace doppler {

/// The base64 encoding of `bytes`, padded with '=' to a multiple of 4 characters.
std::string base64_encode(std::string_view bytes);

/// Appends base64_encode(bytes) to `out` (no temporary: for encodings of hundreds of MB).
void base64_append(std::string_view bytes, std::string& out);

/// The length of base64_encode() of `size` bytes, in characters.
constexpr std::size_t base64_encoded_size(std::size_t size) {
  return (size + 2) / 3 * 4;
}

/// Strictly decodes `text` into `out`: the length must be a multiple of 4, only the 64
/// alphabet characters may appear, '=' only as one or two final padding characters, and the
/// unused bits before the padding must be zero (so every byte string has exactly one accepted
/// encoding). No blanks or line breaks. On failure returns false and sets `why` to a short
/// reason naming the offending position; `out` is then unspecified.
bool base64_decode(std::string_view text, std::string& out, std::string& why);

/// The byte count `text` decodes to (its '=' padding counted), nullopt when its length is not a
/// multiple of 4. Says nothing of whether the rest of it is valid.
std::optional<std::size_t> base64_decoded_size(std::string_view text);

/// base64_decode into `out`, which must hold exactly base64_decoded_size(text) bytes (a caller's
/// buffer: no copy); the same checks and reasons.
bool base64_decode_to(std::string_view text, std::span<char> out, std::string& why);

}  // namespace doppler
