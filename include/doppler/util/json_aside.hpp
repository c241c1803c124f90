#pragma once
// Long string values set aside before a JSON text is parsed: a graph's constant tensors are
// hundreds of MB of base64, which a JSON parser would copy a character at a time (10.6 s for a
// 400 MB file here) where a reader can decode them from the text in place.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler {

/// Where a set-aside string's contents lie in the source text: bytes [offset, offset + size).
struct AsideSpan {
  std::size_t offset = 0;
  std::size_t size = 0;
};

/// A JSON text with its long strings replaced by placeholders, and where they were.
struct AsideText {
  /// The source text with the K-th set-aside string literal replaced by "\u0000K" (a string of a
  /// NUL character and K's decimal digits): the same document structure and the same line breaks,
  /// so that every line number found in it is the source's.
  std::string text;
  std::vector<AsideSpan> spans;  ///< K -> the K-th set-aside string's contents in the source
};

/// Sets aside the string values of members named in `members` whose contents are at least
/// `min_size` bytes of printable ASCII without a backslash (contents that are valid as they
/// stand and mean themselves): one pass over `source` that jumps from quote to quote. nullopt
/// when none qualifies, or when the source has the escape \u0000 anywhere (a placeholder's own:
/// then the source is parsed as it is). The text with placeholders is valid
/// JSON exactly when the source is, so that the parser reports what it would have reported.
std::optional<AsideText> set_aside_long_strings(std::string_view source,
                                                const std::vector<std::string>& members,
                                                std::size_t min_size);

/// The contents of a parsed string `value`: the set-aside string it stands for, read from
/// `source` (the text given to set_aside_long_strings), when it is a placeholder of `spans`;
/// `value` itself otherwise.
std::string_view aside_contents(std::string_view value, std::string_view source,
                                const std::vector<AsideSpan>& spans);

}  // namespace doppler
