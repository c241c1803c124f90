#pragma once
// Assignment files:
//   {"format": "doppler-assignment", "version": 1, "devices": P, "device_of": [d_0, ...],
//    "order": [v, ...] (optional), "method": "..." (optional)}
// A bare JSON array of device ids is accepted on input too (P is then taken from the caller,
// or max id + 1).
#include <string>
#include <string_view>

#include "doppler/graph/assignment.hpp"
#include "doppler/util/read_limits.hpp"

namespace doppler {

/// Parses one assignment document. `devices` > 0 is the expected device count (required for a
/// bare array to be checked; a mismatch with an object's "devices" is an error). Node ids and
/// devices are range-checked against `g` when given. Throws InputError "FILE:LINE: problem",
/// also for more entries than `limits.max_ops`.
Assignment parse_assignment_json(std::string_view text, const std::string& file,
                                 const Graph* g = nullptr, int devices = 0,
                                 const ReadLimits& limits = read_limits());

/// Formats an assignment as a doppler-assignment document (one line for device_of, one for
/// order).
std::string format_assignment_json(const Assignment& a);

/// The same document on one line without the trailing newline: one line of a JSON lines file
/// that parse_assignments_jsonl() (and `doppler simulate --assignments`) reads back.
std::string format_assignment_json_line(const Assignment& a);

}  // namespace doppler

namespace doppler {

/// Parses JSON lines: one assignment (object or bare array) per non-blank line, validated
/// against `g` and `devices` (> 0 to require a device count). Errors name the file and line.
std::vector<Assignment> parse_assignments_jsonl(std::string_view text, const std::string& file,
                                                const Graph& g, int devices,
                                                const ReadLimits& limits = read_limits());

}  // namespace doppler
