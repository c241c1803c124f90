#pragma once
// The CLI's --help layout: the top-level listing gives each command a one-line summary of its
// description (which the command's own --help prints whole), and every description, option text
// and footer is wrapped to kHelpWidth columns, continuation lines under the text they continue.
#include <cstddef>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace doppler::cli {

/// The width --help wraps its text to, in columns (fixed: the same output on every terminal).
inline constexpr std::size_t kHelpWidth = 100;

/// The summary of a command's description: its text up to the first ':', ';', sentence end or
/// line break outside parentheses, without the parenthesised asides ("Measure the engine (...)
/// and write a profile (...)" -> "Measure the engine and write a profile"); a trailing note in
/// brackets ("... [not in this build: needs libtorch]") is kept.
std::string command_summary(std::string_view description);

/// `text` wrapped to `width` columns, line by line: a line is broken at spaces, not inside a
/// "[bracketed note]" that fits on a line (a word longer than a line, such as "[a=1,b=2,...]",
/// after its commas), and its continuation lines are
/// indented to its text column: past the leading spaces, and past a "  name  " label when the
/// line starts with one (as a listing's rows do).
std::string wrap_help(std::string_view text, std::size_t width);

/// CLI11's formatter with the commands listed one summary each and every text wrapped.
class HelpFormatter : public CLI::Formatter {
public:
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_footer(const CLI::App* app) const override;
};

}  // namespace doppler::cli
