#include "doppler/util/log.hpp"

#include <spdlog/spdlog.h>

namespace doppler {

void log_warning(const std::string& message) {
  spdlog::warn("{}", message);
}

void log_info(const std::string& message) {
  spdlog::info("{}", message);
}

}  // namespace doppler
