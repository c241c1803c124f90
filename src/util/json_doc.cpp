#include "doppler/util/json_doc.hpp"

#include <cmath>
#include <limits>
#include <memory>

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

// Thrown by the parse callback when a top-level array exceeds its limit.
struct ArrayTooLong {
  const JsonArrayLimit* limit;
};

// A parser callback counting the elements of the limited top-level arrays.
nlohmann::json::parser_callback_t element_counter(const JsonLimits& limits) {
  if (limits.arrays.empty()) return nullptr;
  struct State {
    const JsonArrayLimit* current = nullptr;  // limit of the top-level member being parsed
    std::int64_t count = 0;
    bool root_array = false;
  };
  auto state = std::make_shared<State>();
  const auto find = [&limits](const std::string& member) -> const JsonArrayLimit* {
    for (const JsonArrayLimit& l : limits.arrays)
      if (l.member == member) return &l;
    return nullptr;
  };
  return [state, find](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    State& s = *state;
    if (depth == 0 && event == E::array_start) {  // a root array: its elements are at depth 1
      s.root_array = true;
      s.current = find("");
      s.count = 0;
    } else if (depth == 1 && event == E::key && !s.root_array) {
      s.current = find(parsed.get<std::string>());
      s.count = 0;
    }
    const int element_depth = s.root_array ? 1 : 2;
    if (s.current && depth == element_depth &&
        (event == E::value || event == E::object_start || event == E::array_start) &&
        ++s.count > s.current->max)
      throw ArrayTooLong{s.current};
    return true;
  };
}

}  // namespace

JsonDoc::JsonDoc(std::string text, std::string file, const JsonLimits& limits)
    : text_(std::move(text)), file_(std::move(file)) {
  if (trim(text_).empty()) throw InputError(file_, 0, "empty file, expected a JSON document");
  if (const std::int64_t line = too_deep_line(text_, limits.max_depth))
    throw InputError(
        file_, line,
        fmt::format("arrays and objects nested deeper than {} levels", limits.max_depth));
  try {
    root_ = nlohmann::json::parse(text_, element_counter(limits));
  } catch (const ArrayTooLong& e) {
    const JsonArrayLimit& l = *e.limit;
    const std::string where = l.member.empty() ? "" : "/" + l.member;
    throw InputError(file_, json_line_of(text_, where),
                     fmt::format("more than {} {}, the limit{}", l.max, l.what,
                                 l.variable.empty() ? "" : " (raise it with " + l.variable + ")"));
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
