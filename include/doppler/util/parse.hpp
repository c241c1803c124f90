#pragma once
// Strict text-to-number conversion used by every reader: the whole token must be a number,
// overflow is an error (never silently clamped), and the reason for a failure is returned so
// that readers can report "expected X, found Y".
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace doppler {

/// Parses a base-10 integer that must fill `token` (after trimming blanks). On failure returns
/// false and sets `why` to a short reason ("not an integer", "out of range of int64").
bool parse_int64(std::string_view token, std::int64_t& out, std::string& why);

/// Parses a finite floating-point number that must fill `token` (after trimming blanks). NaN,
/// infinities and values that overflow double are rejected with a reason in `why`.
bool parse_finite_double(std::string_view token, double& out, std::string& why);

/// `s` without leading and trailing blanks (space, tab, CR, LF).
std::string_view trim(std::string_view s);

/// Splits `s` on `sep`; blank fields are kept (as empty views) except a single trailing one,
/// so "1, 2, 3," gives three fields.
std::vector<std::string_view> split_fields(std::string_view s, char sep);

/// A token shortened for error messages: at most `max_len` characters, then "...".
std::string quote_token(std::string_view token, std::size_t max_len = 32);

}  // namespace doppler
