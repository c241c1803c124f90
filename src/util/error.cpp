#include "doppler/util/error.hpp"

#include <fmt/format.h>

namespace doppler {

namespace {
std::string format_location(const std::string& file, std::int64_t line, const std::string& msg) {
  if (file.empty()) return msg;
  if (line <= 0) return fmt::format("{}: {}", file, msg);
  return fmt::format("{}:{}: {}", file, line, msg);
}
}  // namespace

InputError::InputError(const std::string& message)
    : std::runtime_error(message), problem_(message) {}

InputError::InputError(const std::string& file, std::int64_t line, const std::string& message)
    : std::runtime_error(format_location(file, line, message)),
      file_(file),
      line_(line),
      problem_(message) {}

}  // namespace doppler
