#include "doppler/util/json_doc.hpp"

#include <cmath>
#include <limits>

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
}  // namespace

JsonDoc::JsonDoc(std::string text, std::string file)
    : text_(std::move(text)), file_(std::move(file)) {
  if (trim(text_).empty()) throw InputError(file_, 0, "empty file, expected a JSON document");
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
