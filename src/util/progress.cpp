#include "doppler/util/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace doppler {

bool Progress::enabled() {
  return ::isatty(STDERR_FILENO) == 1 && std::getenv("DOPPLER_NO_PROGRESS") == nullptr;
}

Progress::Progress(std::string label, std::int64_t total)
    : label_(std::move(label)), total_(total), active_(enabled()) {}

Progress::~Progress() {
  finish();
}

void Progress::update(std::int64_t done, const std::string& note) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::string line = "\r" + label_ + " ";
  if (total_ > 0) {
    const int width = 24;
    const auto filled = static_cast<int>(static_cast<double>(width) * static_cast<double>(done) /
                                         static_cast<double>(total_));
    line += "[" + std::string(static_cast<std::size_t>(std::min(filled, width)), '#') +
            std::string(static_cast<std::size_t>(std::max(0, width - filled)), '.') + "] ";
    line += fmt::format("{}/{}", done, total_);
  } else {
    line += std::to_string(done);
  }
  if (!note.empty()) line += "  " + note;
  line += "\033[K";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace doppler
