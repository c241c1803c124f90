#include "doppler/util/json_locate.hpp"

#include <string>
#include <vector>

namespace doppler {

namespace {

// Splits an RFC 6901 pointer into unescaped reference tokens.
std::vector<std::string> pointer_tokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  std::size_t i = pointer.front() == '/' ? 1 : 0;
  std::string cur;
  for (; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(cur);
      cur.clear();
    } else if (pointer[i] == '~' && i + 1 < pointer.size()) {
      cur += pointer[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      cur += pointer[i];
    }
  }
  return tokens;
}

// A forward-only scanner over JSON text that counts lines; it never builds values.
class Scanner {
public:
  explicit Scanner(std::string_view s) : s_(s) {}

  std::int64_t find(const std::vector<std::string>& path, std::size_t depth) {
    skip_ws();
    if (depth == path.size()) return at_end() ? 0 : line_;
    if (at_end()) return 0;
    if (s_[i_] == '{') {
      ++i_;
      while (true) {
        skip_ws();
        if (at_end() || s_[i_] == '}') return 0;
        std::string key;
        if (!read_string(&key)) return 0;
        skip_ws();
        if (at_end() || s_[i_] != ':') return 0;
        ++i_;
        if (key == path[depth]) return find(path, depth + 1);
        if (!skip_value()) return 0;
        skip_ws();
        if (at_end() || s_[i_] != ',') return 0;
        ++i_;
      }
    }
    if (s_[i_] == '[') {
      ++i_;
      std::size_t wanted = 0;
      for (char c : path[depth]) {
        if (c < '0' || c > '9') return 0;
        wanted = wanted * 10 + static_cast<std::size_t>(c - '0');
      }
      for (std::size_t k = 0;; ++k) {
        skip_ws();
        if (at_end() || s_[i_] == ']') return 0;
        if (k == wanted) return find(path, depth + 1);
        if (!skip_value()) return 0;
        skip_ws();
        if (at_end() || s_[i_] != ',') return 0;
        ++i_;
      }
    }
    return 0;
  }

private:
  bool at_end() const { return i_ >= s_.size(); }

  void skip_ws() {
    while (!at_end()) {
      const char c = s_[i_];
      if (c == '\n') ++line_;
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') break;
      ++i_;
    }
  }

  bool read_string(std::string* out) {
    if (at_end() || s_[i_] != '"') return false;
    ++i_;
    while (!at_end()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (c == '\\') {
        if (at_end()) return false;
        const char e = s_[i_++];
        if (out) *out += (e == 'n' ? '\n' : e == 't' ? '\t' : e);
      } else {
        if (c == '\n') ++line_;
        if (out) *out += c;
      }
    }
    return false;
  }

  bool skip_value(int depth = 0) {
    skip_ws();
    if (at_end() || depth > kMaxDepth) return false;
    const char c = s_[i_];
    if (c == '"') return read_string(nullptr);
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      skip_ws();
      if (!at_end() && s_[i_] == close) {
        ++i_;
        return true;
      }
      while (true) {
        if (c == '{') {
          skip_ws();
          if (!read_string(nullptr)) return false;
          skip_ws();
          if (at_end() || s_[i_] != ':') return false;
          ++i_;
        }
        if (!skip_value(depth + 1)) return false;
        skip_ws();
        if (at_end()) return false;
        if (s_[i_] == close) {
          ++i_;
          return true;
        }
        if (s_[i_] != ',') return false;
        ++i_;
      }
    }
    // number, true, false, null
    while (!at_end()) {
      const char d = s_[i_];
      if (d == ',' || d == '}' || d == ']' || d == ' ' || d == '\t' || d == '\r' || d == '\n')
        break;
      ++i_;
    }
    return true;
  }

  static constexpr int kMaxDepth = 256;  // deeper documents are not located (no stack overflow)
  std::string_view s_;
  std::size_t i_ = 0;
  std::int64_t line_ = 1;
};

}  // namespace

std::int64_t json_line_of(std::string_view text, std::string_view pointer) {
  Scanner sc(text);
  return sc.find(pointer_tokens(pointer), 0);
}

std::int64_t line_of_offset(std::string_view text, std::size_t offset) {
  std::int64_t line = 1;
  const std::size_t end = offset < text.size() ? offset : text.size();
  for (std::size_t i = 0; i < end; ++i)
    if (text[i] == '\n') ++line;
  return line;
}

}  // namespace doppler
