#pragma once
// Maps a place in a JSON document back to a line of its text, so that readers can report
// "FILE:LINE: problem" for semantic errors found after parsing (nlohmann-json does not keep
// positions).
#include <cstdint>
#include <string_view>

namespace doppler {

/// 1-based line at which the value addressed by the JSON pointer `pointer` (RFC 6901, e.g.
/// "/nodes/5/flops") starts in `text`; 0 when the pointer does not resolve or the text is not
/// well-formed JSON up to that value. The empty pointer addresses the root value.
std::int64_t json_line_of(std::string_view text, std::string_view pointer);

/// 1-based line of byte `offset` in `text` (offsets past the end give the last line).
std::int64_t line_of_offset(std::string_view text, std::size_t offset);

}  // namespace doppler
