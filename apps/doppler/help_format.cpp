#include "help_format.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

namespace doppler::cli {

namespace {

constexpr std::size_t kNameColumn = 16;  // the longest command, validate-sim, and its indent fit

// Whether description[i] ends the summary: ':', ';', a line break, or a sentence's full stop.
bool ends_summary(std::string_view d, std::size_t i) {
  const char c = d[i];
  if (c == ':' || c == ';' || c == '\n') return true;
  return c == '.' && (i + 1 == d.size() || d[i + 1] == ' ');
}

// The text before the first summary end outside parentheses, without the parentheses' text.
std::string first_clause(std::string_view d) {
  std::string out;
  int depth = 0;  // parentheses open at this character
  for (std::size_t i = 0; i < d.size(); ++i) {
    const char c = d[i];
    if (c == '(') {
      if (depth++ == 0)
        while (!out.empty() && out.back() == ' ') out.pop_back();  // "word (aside)" -> "word"
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      if (ends_summary(d, i)) break;
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The column where a line's text starts: past its leading spaces, and past a "  name  " label.
std::size_t text_column(std::string_view line) {
  const std::size_t lead = line.find_first_not_of(' ');
  if (lead == 0 || lead == std::string_view::npos) return 0;
  const std::size_t gap = line.find("  ", lead);
  if (gap == std::string_view::npos) return lead;
  const std::size_t text = line.find_first_not_of(' ', gap);
  return text == std::string_view::npos || text > line.size() / 2 + 1 ? lead : text;
}

// A piece of a line to place: its text and whether a space goes before it.
struct Piece {
  std::string_view text;
  bool spaced;
};

// The words of `body` (a bracketed note that fits in `room` counts as one), a word longer than
// `room` split after every comma of it.
std::vector<Piece> pieces_of(std::string_view body, std::size_t room) {
  std::vector<Piece> out;
  std::size_t i = 0;
  while (i < body.size()) {
    std::size_t end = std::min(body.find(' ', i), body.size());
    const std::size_t close = body[i] == '[' ? body.find(']', i) : std::string_view::npos;
    if (close != std::string_view::npos && close - i < room)
      end = std::min(body.find(' ', close), body.size());  // "[a note]" is kept on one line
    std::string_view word = body.substr(i, end - i);
    bool spaced = true;
    for (const bool split = word.size() > room; split;) {
      const std::size_t comma = word.find(',');
      if (comma == std::string_view::npos || comma + 1 == word.size()) break;
      out.push_back({word.substr(0, comma + 1), spaced});
      word.remove_prefix(comma + 1);
      spaced = false;
    }
    if (!word.empty()) out.push_back({word, spaced});
    i = end + 1;
  }
  return out;
}

// One line wrapped (no trailing newline).
std::string wrap_line(std::string_view line, std::size_t width) {
  const std::size_t hang = text_column(line);
  if (line.size() <= width || hang + 20 > width) return std::string(line);
  std::string out(line.substr(0, hang));
  std::size_t column = hang;
  bool fresh = true;  // nothing placed on this line yet
  for (const Piece& p : pieces_of(line.substr(hang), width - hang)) {
    const std::size_t need = p.text.size() + (p.spaced && !fresh ? 1 : 0);
    if (!fresh && column + need > width) {
      out += '\n' + std::string(hang, ' ');
      column = hang;
      fresh = true;
    }
    if (p.spaced && !fresh) {
      out += ' ';
      ++column;
    }
    out += p.text;
    column += p.text.size();
    fresh = false;
  }
  return out;
}

}  // namespace

std::string command_summary(std::string_view description) {
  const bool noted = !description.empty() && description.back() == ']';
  const std::size_t note = noted ? description.rfind(" [") : std::string_view::npos;
  if (note == std::string_view::npos) return first_clause(description);
  return first_clause(description.substr(0, note)) + std::string(description.substr(note));
}

std::string wrap_help(std::string_view text, std::size_t width) {
  std::string out;
  std::size_t i = 0;
  while (i <= text.size()) {
    const std::size_t end = std::min(text.find('\n', i), text.size());
    out += wrap_line(text.substr(i, end - i), width);
    if (end == text.size()) break;
    out += '\n';
    i = end + 1;
  }
  return out;
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  std::ostringstream out;
  CLI::detail::format_help(
      out, sub->get_display_name(true),
      wrap_help(command_summary(sub->get_description()), kHelpWidth - kNameColumn), kNameColumn);
  return out.str();
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  return wrap_help(CLI::Formatter::make_description(app), kHelpWidth);
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  // format_help indents the continuation lines to the description column.
  return wrap_help(opt->get_description(), kHelpWidth - get_column_width());
}

std::string HelpFormatter::make_footer(const CLI::App* app) const {
  return wrap_help(CLI::Formatter::make_footer(app), kHelpWidth);
}

}  // namespace doppler::cli
