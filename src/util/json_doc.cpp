#include "doppler/util/json_doc.hpp"

#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "doppler/util/error.hpp"
#include "doppler/util/json_locate.hpp"
#include "doppler/util/parse.hpp"

namespace doppler {

namespace {
// nlohmann messages look like "[json.exception.parse_error.101] parse error at line 3, column
// 5: syntax error while parsing value - ..."; keep the part after the position.
std::string strip_nlohmann_prefix(const std::string& what) {
  const auto col = what.find("column ");
  if (col != std::string::npos) {
    const auto colon = what.find(": ", col);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}
// Line of the first '[' or '{' nested deeper than `max_depth` (strings skipped), 0 if none.
std::int64_t too_deep_line(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  std::int64_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return line;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return 0;
}

// The limit of a member of the root object ("" for a root array), nullptr when none.
const JsonArrayLimit* limit_of(const JsonLimits& limits, std::string_view member) {
  for (const JsonArrayLimit& l : limits.arrays)
    if (l.member == member) return &l;
  return nullptr;
}

// The end of the string literal opening at text[i] (the closing quote's index), its characters
// (escapes reduced to the escaped character) appended to `out` when given.
std::size_t string_end(std::string_view text, std::size_t i, std::string* out) {
  std::size_t j = i + 1;
  for (; j < text.size() && text[j] != '"'; ++j) {
    if (text[j] == '\\' && j + 1 < text.size()) ++j;
    if (out) out->push_back(text[j]);
  }
  return j;
}

// The first limited top-level array with more elements than its limit, nullptr when none: one
// pass over the text (strings skipped) before the document is built, so that a huge one fails
// first. nlohmann's callback parser, which counted them before, looks through a container's
// elements after each object in it: quadratic in a graph's node count (1.2 s of 3.4 s reading
// a 61,846-op graph).
const JsonArrayLimit* too_long_array(std::string_view text, const JsonLimits& limits) {
  if (limits.arrays.empty()) return nullptr;
  int depth = 0, count_depth = 0;
  bool root_array = false, expect_key = false, expect_element = false;
  const JsonArrayLimit* member = nullptr;    // the limit of the member whose value comes next
  const JsonArrayLimit* counting = nullptr;  // the limit of the array being counted
  std::int64_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    if (counting && depth == count_depth && expect_element && c != ']') {
      if (++count > counting->max) return counting;
      expect_element = false;
    }
    if (c == '"') {
      const bool key = depth == 1 && !root_array && expect_key;
      std::string name;
      i = string_end(text, i, key ? &name : nullptr);
      if (key) member = limit_of(limits, name), expect_key = false;
    } else if (c == '[' || c == '{') {
      if (depth == 0) root_array = c == '[';
      ++depth;
      const JsonArrayLimit* start = nullptr;  // a limited array opens here
      if (depth == 1 && root_array) start = limit_of(limits, "");
      if (depth == 2 && !root_array && c == '[') start = member;
      if (depth == 1 && !root_array) expect_key = true;
      if (depth == 2) member = nullptr;
      if (start) counting = start, count_depth = depth, count = 0, expect_element = true;
    } else if (c == ']' || c == '}') {
      if (depth == count_depth) counting = nullptr;
      --depth;
    } else if (c == ',') {
      if (depth == 1 && !root_array) expect_key = true, member = nullptr;
      if (counting && depth == count_depth) expect_element = true;
    }
  }
  return nullptr;
}

}  // namespace

JsonDoc::JsonDoc(std::string text, std::string file, const JsonLimits& limits)
    : text_(std::move(text)), file_(std::move(file)) {
  if (trim(text_).empty()) throw InputError(file_, 0, "empty file, expected a JSON document");
  if (const std::int64_t line = too_deep_line(text_, limits.max_depth))
    throw InputError(
        file_, line,
        fmt::format("arrays and objects nested deeper than {} levels", limits.max_depth));
  if (const JsonArrayLimit* l = too_long_array(text_, limits)) {
    const std::string where = l->member.empty() ? "" : "/" + l->member;
    throw InputError(
        file_, json_line_of(text_, where),
        fmt::format("more than {} {}, the limit{}", l->max, l->what,
                    l->variable.empty() ? "" : " (raise it with " + l->variable + ")"));
  }
  try {
    root_ = nlohmann::json::parse(text_);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file_, line_of_offset(text_, e.byte > 0 ? e.byte - 1 : 0),
                     "invalid JSON: " + strip_nlohmann_prefix(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // e.g. "number overflow parsing '1e999'": locate the quoted token in the text.
    const std::string msg = strip_nlohmann_prefix(e.what());
    std::int64_t line = 0;
    const auto q1 = msg.find('\''), q2 = msg.rfind('\'');
    if (q1 != std::string::npos && q2 > q1) {
      const auto at = text_.find(msg.substr(q1 + 1, q2 - q1 - 1));
      if (at != std::string::npos) line = line_of_offset(text_, at);
    }
    throw InputError(file_, line, "invalid JSON: " + msg);
  }
}

std::int64_t JsonDoc::line_of(const std::string& pointer) const {
  return json_line_of(text_, pointer);
}

void JsonDoc::fail(const std::string& pointer, const std::string& problem) const {
  throw InputError(file_, line_of(pointer), problem);
}

std::string JsonDoc::type_name(const nlohmann::json& j) {
  if (j.is_number()) return "number";
  return j.type_name();
}

const nlohmann::json& JsonDoc::require(const nlohmann::json& obj, const std::string& pointer,
                                       const char* key) const {
  expect_object(obj, pointer);
  const auto it = obj.find(key);
  if (it == obj.end()) fail(pointer, fmt::format("missing field '{}'", key));
  return *it;
}

void JsonDoc::expect_object(const nlohmann::json& j, const std::string& pointer) const {
  if (!j.is_object()) fail(pointer, fmt::format("expected an object, found {}", type_name(j)));
}

void JsonDoc::expect_array(const nlohmann::json& j, const std::string& pointer) const {
  if (!j.is_array()) fail(pointer, fmt::format("expected an array, found {}", type_name(j)));
}

double JsonDoc::number(const nlohmann::json& j, const std::string& pointer, double min) const {
  if (!j.is_number()) fail(pointer, fmt::format("expected a number, found {}", type_name(j)));
  const double x = j.get<double>();
  if (std::isnan(x)) fail(pointer, "expected a number, found NaN");
  if (std::isinf(x)) fail(pointer, "number is out of range of double");
  if (x < min) fail(pointer, fmt::format("expected a number >= {}, found {}", min, x));
  return x;
}

std::int64_t JsonDoc::integer(const nlohmann::json& j, const std::string& pointer, std::int64_t lo,
                              std::int64_t hi) const {
  std::int64_t v = 0;
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(pointer, fmt::format("integer {} is out of range (expected {}..{})", u, lo, hi));
    v = static_cast<std::int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<std::int64_t>();
  } else if (j.is_number_float()) {
    fail(pointer, fmt::format("expected an integer, found {}", j.dump()));
  } else {
    fail(pointer, fmt::format("expected an integer, found {}", type_name(j)));
  }
  if (v < lo || v > hi)
    fail(pointer, fmt::format("integer {} is out of range (expected {}..{})", v, lo, hi));
  return v;
}

std::string JsonDoc::string(const nlohmann::json& j, const std::string& pointer) const {
  if (!j.is_string()) fail(pointer, fmt::format("expected a string, found {}", type_name(j)));
  return j.get<std::string>();
}

void JsonDoc::expect_format(const char* format, int max_version) const {
  expect_object(root_, "");
  const auto it = root_.find("format");
  if (it == root_.end()) fail("", fmt::format("missing field 'format' (expected \"{}\")", format));
  const std::string f = string(*it, "/format");
  if (f != format) fail("/format", fmt::format("expected format \"{}\", found \"{}\"", format, f));
  const auto v = root_.find("version");
  if (v == root_.end()) fail("", "missing field 'version'");
  const auto ver = integer(*v, "/version", 1, std::numeric_limits<std::int64_t>::max());
  if (ver > max_version)
    fail("/version",
         fmt::format("version {} is newer than this Doppler supports ({})", ver, max_version));
}

}  // namespace doppler
