#pragma once
// The raw text of a DOT file, scanned token by token the way Graphviz's lexer does (cgraph 2.42,
// lib/cgraph/scan.l), only to put line numbers on errors and to check what cgraph does not:
// NUL bytes, text after the first graph. It never builds a graph: cgraph parses.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::dot {

/// One lexical token of a DOT text.
struct Token {
  enum class Kind {
    id,       ///< a name, number, "quoted" (maybe "a" + "b") or <html> string
    keyword,  ///< node, edge, graph, digraph, strict, subgraph
    edgeop,   ///< -> or --
    punct,    ///< any other single character ({ } [ ] ; , = : + @ ...)
  };
  Kind kind = Kind::punct;
  std::size_t begin = 0;  ///< byte offset of its first character
  std::size_t end = 0;    ///< byte offset past its last character
  std::int64_t line = 1;  ///< 1-based line of its first character
};

/// A DOT text with cgraph's view of its lines. Throws InputError "FILE:LINE: problem" for a NUL
/// byte (cgraph would silently stop reading there).
class DotText {
public:
  DotText(std::string_view text, std::string file);

  /// The text to hand to cgraph: preprocessor lines ('#' in column 1, e.g. `# 12 "x.c"`) are
  /// blanked, so that cgraph neither renumbers its lines nor renames the file.
  const std::string& for_cgraph() const { return cgraph_text_; }
  /// The file's line holding the start of what cgraph counts as line `n` (cgraph does not count
  /// most newlines inside quoted strings).
  std::int64_t physical_line(std::int64_t n) const;
  /// Line of the last character (for errors at the end of the file).
  std::int64_t last_line() const { return last_line_; }

  /// Throws InputError naming the line of the first token after the first graph's closing
  /// brace, if there is one (cgraph reads only the first graph of a text).
  void check_single_graph() const;

  /// Line of the header's `graph` / `digraph` keyword (1 when not found).
  std::int64_t header_line() const;
  /// Line of node `name`: with `attr`, the last `name [...]` statement setting `attr`; else (or
  /// when there is none) the first place the node is named.
  std::int64_t node_line(const std::string& name, const char* attr = nullptr) const;
  /// Line of the `k`-th (0-based) textual `tail -> head` edge statement (the last one when
  /// there are fewer); the tail's first line when there is none (e.g. `{a b} -> c`).
  std::int64_t edge_line(const std::string& tail, const std::string& head, int k) const;
  /// Line of the first `attr = ...` outside node and edge statements, else header_line().
  std::int64_t graph_attr_line(const char* attr) const;

private:
  const std::vector<Token>& tokens() const;
  std::string value(const Token& t) const;
  bool is_id(std::size_t i, const std::string& name) const;
  bool is_punct(std::size_t i, char c) const;

  std::string_view text_;
  std::string file_;
  std::string cgraph_text_;
  std::vector<std::int64_t> line_of_cgraph_line_;  // [n - 1] = file line where cgraph's n starts
  std::int64_t last_line_ = 1;
  mutable std::optional<std::vector<Token>> tokens_;  // scanned on first use (error paths)
};

}  // namespace doppler::dot
