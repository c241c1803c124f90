#pragma once
// A parsed JSON document that remembers its text and file name, so that every reader can report
// semantic errors as "FILE:LINE: problem" and check types with one-line calls.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "doppler/util/read_limits.hpp"

namespace doppler {

/// A bound on the element count of a top-level array, checked before parsing (so that a huge
/// document fails before it is built in memory).
struct JsonArrayLimit {
  std::string member;    ///< member of the root object; "" for a root that is itself an array
  std::int64_t max = 0;  ///< largest element count accepted
  std::string what;      ///< what an element is, for the message (e.g. "nodes")
  std::string variable;  ///< environment variable that raises the limit; "" when fixed
};

/// Limits checked while a JsonDoc is parsed.
struct JsonLimits {
  int max_depth = kMaxJsonDepth;       ///< nesting depth of arrays and objects
  std::vector<JsonArrayLimit> arrays;  ///< element counts of top-level arrays
};

/// A JSON document being read. All accessors throw InputError naming the file and the line of
/// the offending value.
class JsonDoc {
public:
  /// Parses `text` (from `file`, used in messages). Throws InputError with the line of a syntax
  /// error, of an array or object nested deeper than `limits.max_depth`, or of a top-level array
  /// longer than its limit; an empty text is an error too.
  JsonDoc(std::string text, std::string file, const JsonLimits& limits = {});

  /// The root value.
  const nlohmann::json& root() const { return root_; }
  /// The file name used in messages.
  const std::string& file() const { return file_; }

  /// Throws InputError at the value addressed by `pointer` (an RFC 6901 JSON pointer).
  [[noreturn]] void fail(const std::string& pointer, const std::string& problem) const;
  /// 1-based line of the value at `pointer` (0 when unknown).
  std::int64_t line_of(const std::string& pointer) const;

  /// `obj[key]` which must exist; `pointer` addresses obj.
  const nlohmann::json& require(const nlohmann::json& obj, const std::string& pointer,
                                const char* key) const;
  /// Requires `j` (at `pointer`) to be an object / array.
  void expect_object(const nlohmann::json& j, const std::string& pointer) const;
  void expect_array(const nlohmann::json& j, const std::string& pointer) const;
  /// A finite number >= `min` at `pointer`.
  double number(const nlohmann::json& j, const std::string& pointer, double min = 0) const;
  /// An integer in [lo, hi] at `pointer`.
  std::int64_t integer(const nlohmann::json& j, const std::string& pointer, std::int64_t lo,
                       std::int64_t hi) const;
  /// A string at `pointer`.
  std::string string(const nlohmann::json& j, const std::string& pointer) const;
  /// Checks the "format" and "version" fields of a versioned document.
  void expect_format(const char* format, int max_version) const;

  /// Name of the JSON type of `j`, for messages ("string", "array", ...).
  static std::string type_name(const nlohmann::json& j);

private:
  std::string text_;
  std::string file_;
  nlohmann::json root_;
};

}  // namespace doppler
