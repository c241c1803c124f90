#include "doppler/workloads/param_checks.hpp"

#include <fmt/format.h>

#include "doppler/util/error.hpp"

namespace doppler::workloads {

void require_range(const std::string& name, std::int64_t value, std::int64_t max) {
  if (value < 1 || value > max)
    throw InputError(fmt::format("parameter {} must be in 1..{}, got {}", name, max, value));
}

void require_blocks(const std::string& name, std::int64_t blocks, const std::string& extent_name,
                    std::int64_t extent) {
  if (blocks < 1)
    throw InputError(fmt::format("parameter {} must be at least 1, got {}", name, blocks));
  if (blocks > extent)
    throw InputError(
        fmt::format("parameter {} = {} exceeds {} = {}", name, blocks, extent_name, extent));
}

std::int64_t largest_divisor_below_sqrt(std::int64_t n) {
  std::int64_t best = 1;
  for (std::int64_t c = 1; c * c <= n; ++c)
    if (n % c == 0) best = c;
  return best;
}

}  // namespace doppler::workloads
