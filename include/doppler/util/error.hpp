#pragma once
// Error types shared by every module. The CLI maps InputError to exit code 2 and any other
// exception to exit code 1.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace doppler {

/// Bad input from the user: a malformed or inconsistent file, an invalid argument, an
/// impossible request. `what()` is one line of the form "FILE:LINE: problem" (or "FILE: problem"
/// when no line applies, or just "problem" when no file is involved).
class InputError : public std::runtime_error {
public:
  /// A problem not tied to a file.
  explicit InputError(const std::string& message);
  /// A problem in `file`; `line` is 1-based, 0 when no line applies.
  InputError(const std::string& file, std::int64_t line, const std::string& message);

  /// The file named by the error, empty when none.
  const std::string& file() const { return file_; }
  /// The 1-based line, 0 when none.
  std::int64_t line() const { return line_; }
  /// The problem without the "FILE:LINE: " prefix.
  const std::string& problem() const { return problem_; }

private:
  std::string file_;
  std::int64_t line_ = 0;
  std::string problem_;
};

}  // namespace doppler
