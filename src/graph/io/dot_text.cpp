#include "dot_text.hpp"

#include <fmt/format.h>

#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler::dot {

namespace {

bool is_letter(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_keyword(std::string_view s) {
  return s == "node" || s == "edge" || s == "graph" || s == "digraph" || s == "strict" ||
         s == "subgraph";
}

// Graphviz's lexer, reduced to token boundaries and line counting. `line` counts every newline;
// `cgraph_lines` records, for each line as cgraph counts them, the file line where it starts.
class Lexer {
public:
  explicit Lexer(std::string_view text) : s_(text) {}

  // The next token; false at the end of the text.
  bool next(Token& t) {
    while (pos_ < s_.size()) {
      if (skip_blank_or_comment()) continue;
      t.begin = pos_;
      t.line = line_;
      t.kind = Token::Kind::id;
      const char c = s_[pos_];
      if (c == '"') {
        quoted();
      } else if (c == '<') {
        html();
      } else if (is_letter(c)) {
        while (pos_ < s_.size() && (is_letter(s_[pos_]) || is_digit(s_[pos_]))) ++pos_;
        if (is_keyword(s_.substr(t.begin, pos_ - t.begin))) t.kind = Token::Kind::keyword;
      } else if (starts_number()) {
        number();
      } else if ((c == '-') && pos_ + 1 < s_.size() &&
                 (s_[pos_ + 1] == '>' || s_[pos_ + 1] == '-')) {
        pos_ += 2;
        t.kind = Token::Kind::edgeop;
      } else {
        ++pos_;
        t.kind = Token::Kind::punct;
      }
      t.end = pos_;
      return true;
    }
    return false;
  }

  std::int64_t line() const { return line_; }
  std::vector<std::int64_t> cgraph_lines{1};
  std::vector<std::pair<std::size_t, std::size_t>> directives;  // [begin, end) of '#' lines

private:
  void newline(bool counted_by_cgraph) {
    ++line_;
    if (counted_by_cgraph) cgraph_lines.push_back(line_);
  }

  // Skips one blank, newline, byte-order mark or comment; false when at a token.
  bool skip_blank_or_comment() {
    const char c = s_[pos_];
    if (c == '\n') {
      newline(true);
      ++pos_;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (s_.substr(pos_, 3) == "\xEF\xBB\xBF") {
      pos_ += 3;
    } else if (s_.substr(pos_, 2) == "/*") {
      const auto close = s_.find("*/", pos_ + 2);
      const std::size_t end = close == std::string_view::npos ? s_.size() : close + 2;
      for (std::size_t i = pos_; i < end; ++i)
        if (s_[i] == '\n') newline(true);
      pos_ = end;
    } else if (s_.substr(pos_, 2) == "//" || c == '#') {
      std::size_t end = s_.find('\n', pos_);
      if (end == std::string_view::npos) end = s_.size();
      if (c == '#' && (pos_ == 0 || s_[pos_ - 1] == '\n')) directives.emplace_back(pos_, end);
      pos_ = end;
    } else {
      return false;
    }
    return true;
  }

  // A "quoted string": cgraph counts a newline inside one only when it is escaped or when it
  // is a whole chunk on its own (between quotes or backslashes), as its flex rules do.
  void quoted() {
    ++pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return;
      }
      if (c == '\\') {
        const char d = pos_ + 1 < s_.size() ? s_[pos_ + 1] : '\0';
        if (d == '\n') newline(true);
        pos_ += (d == '"' || d == '\\' || d == '\n') ? 2 : 1;
        continue;
      }
      std::size_t end = pos_;
      while (end < s_.size() && s_[end] != '"' && s_[end] != '\\') ++end;
      const bool lone_newline = end == pos_ + 1 && c == '\n';
      for (; pos_ < end; ++pos_)
        if (s_[pos_] == '\n') newline(lone_newline);
    }
  }

  // An <html> string with nested angle brackets (every newline counted).
  void html() {
    int depth = 0;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '<') ++depth;
      if (c == '\n') newline(true);
      if (c == '>' && --depth == 0) return;
    }
  }

  bool starts_number() const {
    std::size_t i = pos_;
    if (s_[i] == '-') ++i;
    if (i < s_.size() && is_digit(s_[i])) return true;
    return i + 1 < s_.size() && s_[i] == '.' && is_digit(s_[i + 1]);
  }

  void number() {
    if (s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 1;
};

bool is_quoted(std::string_view text, const Token& t) {
  return t.kind == Token::Kind::id && text[t.begin] == '"';
}

}  // namespace

DotText::DotText(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
  const auto nul = text.find('\0');
  if (nul != std::string_view::npos) {
    std::int64_t line = 1;
    for (std::size_t i = 0; i < nul; ++i) line += text[i] == '\n';
    throw InputError(file_, line, "NUL byte in the text (DOT files are text)");
  }
  Lexer lexer(text);
  Token t;
  while (lexer.next(t)) {
  }
  cgraph_text_.assign(text);
  for (const auto& [begin, end] : lexer.directives)
    for (std::size_t i = begin; i < end; ++i) cgraph_text_[i] = ' ';
  line_of_cgraph_line_ = std::move(lexer.cgraph_lines);
  last_line_ = lexer.line();
}

std::int64_t DotText::physical_line(std::int64_t n) const {
  if (n < 1) return 0;
  if (n > static_cast<std::int64_t>(line_of_cgraph_line_.size())) return last_line_;
  return line_of_cgraph_line_[static_cast<std::size_t>(n - 1)];
}

const std::vector<Token>& DotText::tokens() const {
  if (tokens_) return *tokens_;
  std::vector<Token> out;
  Lexer lexer(text_);
  Token t;
  while (lexer.next(t)) {
    const std::size_t n = out.size();
    // "a" + "b" is one string.
    if (is_quoted(text_, t) && n >= 2 && is_quoted(text_, out[n - 2]) &&
        out[n - 1].kind == Token::Kind::punct && text_[out[n - 1].begin] == '+') {
      out.pop_back();
      out.back().end = t.end;
      continue;
    }
    out.push_back(t);
  }
  tokens_ = std::move(out);
  return *tokens_;
}

std::string DotText::value(const Token& t) const {
  const std::string_view raw = text_.substr(t.begin, t.end - t.begin);
  if (raw.empty() || t.kind != Token::Kind::id) return std::string(raw);
  if (raw.front() == '<') return std::string(raw.substr(1, raw.size() >= 2 ? raw.size() - 2 : 0));
  if (raw.front() != '"') return std::string(raw);
  // Quoted strings (maybe joined with '+'): \" is a quote, backslash-newline nothing.
  std::string out;
  bool inside = false;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (!inside) {
      inside = c == '"';
    } else if (c == '"') {
      inside = false;
    } else if (c == '\\' && i + 1 < raw.size() && raw[i + 1] == '"') {
      out += '"';
      ++i;
    } else if (c == '\\' && i + 1 < raw.size() && raw[i + 1] == '\n') {
      ++i;
    } else if (c == '\\' && i + 1 < raw.size() && raw[i + 1] == '\\') {
      out += "\\\\";
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

bool DotText::is_id(std::size_t i, const std::string& name) const {
  const auto& ts = tokens();
  return i < ts.size() && ts[i].kind == Token::Kind::id && value(ts[i]) == name;
}

bool DotText::is_punct(std::size_t i, char c) const {
  const auto& ts = tokens();
  return i < ts.size() && ts[i].kind == Token::Kind::punct && text_[ts[i].begin] == c;
}

void DotText::check_single_graph() const {
  Lexer lexer(text_);
  Token t;
  int depth = 0;
  bool opened = false;
  while (lexer.next(t)) {
    if (opened && depth == 0)
      throw InputError(file_, t.line,
                       fmt::format("unexpected {} after the graph's closing brace (a file holds "
                                   "one graph)",
                                   quote_token(text_.substr(t.begin, t.end - t.begin))));
    if (t.kind != Token::Kind::punct) continue;
    if (text_[t.begin] == '{') {
      ++depth;
      opened = true;
    } else if (text_[t.begin] == '}') {
      --depth;
    }
  }
}

std::int64_t DotText::header_line() const {
  for (const Token& t : tokens()) {
    if (t.kind != Token::Kind::keyword) return t.line;
    const auto word = text_.substr(t.begin, t.end - t.begin);
    if (word == "graph" || word == "digraph") return t.line;
  }
  return 1;
}

std::int64_t DotText::node_line(const std::string& name, const char* attr) const {
  const auto& ts = tokens();
  std::int64_t first = 0, with_attr = 0;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (!is_id(i, name)) continue;
    // Attribute names and values, ports and graph names are not nodes.
    if (is_punct(i + 1, '=') || (i > 0 && (is_punct(i - 1, '=') || is_punct(i - 1, ':') ||
                                           ts[i - 1].kind == Token::Kind::keyword)))
      continue;
    if (first == 0) first = ts[i].line;
    if (!attr || !is_punct(i + 1, '[') || (i > 0 && ts[i - 1].kind == Token::Kind::edgeop))
      continue;
    for (std::size_t j = i + 2; j < ts.size() && !is_punct(j, ']'); ++j)
      if (is_id(j, attr) && is_punct(j + 1, '=')) with_attr = ts[i].line;
  }
  if (with_attr > 0) return with_attr;
  return first > 0 ? first : header_line();
}

std::int64_t DotText::edge_line(const std::string& tail, const std::string& head, int k) const {
  const auto& ts = tokens();
  std::int64_t found = 0;
  int seen = 0;
  for (std::size_t i = 1; i + 1 < ts.size(); ++i) {
    if (ts[i].kind != Token::Kind::edgeop) continue;
    std::size_t left = i - 1;  // skip ports: tail:port or tail:port:compass
    while (left >= 2 && is_punct(left - 1, ':')) left -= 2;
    if (!is_id(left, tail) || !is_id(i + 1, head)) continue;
    found = ts[left].line;
    if (seen++ == k) return found;
  }
  return found > 0 ? found : node_line(tail);
}

std::int64_t DotText::graph_attr_line(const char* attr) const {
  const auto& ts = tokens();
  int brackets = 0;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (is_punct(i, '[')) {
      // graph [attr=...] counts; node [...] and edge statements do not.
      const bool graph_list =
          i > 0 && ts[i - 1].kind == Token::Kind::keyword && value(ts[i - 1]) == "graph";
      brackets += graph_list ? 0 : 1;
    } else if (is_punct(i, ']')) {
      brackets = brackets > 0 ? brackets - 1 : 0;
    } else if (brackets == 0 && is_id(i, attr) && is_punct(i + 1, '=')) {
      return ts[i].line;
    }
  }
  return header_line();
}

}  // namespace doppler::dot
