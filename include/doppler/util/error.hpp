#pragma once
// Error types shared by every module. The CLI maps InputError to exit code 2 and any other
// exception to exit code 1.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace doppler {

/// What would fix an InputError, as a concept that each front end words in its own terms (the CLI
/// as a flag, Python as an argument): the library reports the problem, not the remedy.
enum class Remedy {
  none,
  input_shape,    ///< give the shape of the graph input named by the subject
  hardware,       ///< choose a hardware profile (subject: the shipped profiles' names)
  output_format,  ///< name the output file's format explicitly
};

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
  /// Attaches what would fix it (what() is unchanged: front ends append their wording).
  InputError& with_remedy(Remedy remedy, std::string subject = "") {
    remedy_ = remedy;
    subject_ = std::move(subject);
    return *this;
  }
  /// What would fix it; Remedy::none when nothing specific.
  Remedy remedy() const { return remedy_; }
  /// The remedy's subject (an input's name, a list of names), or empty.
  const std::string& remedy_subject() const { return subject_; }

private:
  std::string file_;
  std::int64_t line_ = 0;
  std::string problem_;
  Remedy remedy_ = Remedy::none;
  std::string subject_;
};

}  // namespace doppler
