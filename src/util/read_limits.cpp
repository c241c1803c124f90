#include "doppler/util/read_limits.hpp"

#include <cstdlib>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler {

namespace {

// Reads the integer environment variable `name` into `out` when it is set.
template <typename T>
void from_env(const char* name, std::int64_t lo, std::int64_t hi, T& out) {
  const char* value = std::getenv(name);
  if (!value) return;
  std::int64_t v = 0;
  std::string why;
  if (!parse_int64(value, v, why))
    throw InputError(fmt::format("environment variable {}: {}", name, why));
  if (v < lo || v > hi)
    throw InputError(
        fmt::format("environment variable {}: {} is out of range ({}..{})", name, v, lo, hi));
  out = static_cast<T>(v);
}

}  // namespace

ReadLimits ReadLimits::from_environment() {
  ReadLimits l;
  constexpr std::int64_t kIndexMax = std::numeric_limits<std::int32_t>::max() - 1;
  from_env("DOPPLER_MAX_OPS", 1, kIndexMax, l.max_ops);
  from_env("DOPPLER_MAX_EDGES", 1, kIndexMax, l.max_edges);
  from_env("DOPPLER_MAX_FILE_BYTES", 1, std::numeric_limits<std::int64_t>::max(), l.max_file_bytes);
  from_env("DOPPLER_MAX_CONSTANT_BYTES", 0, std::numeric_limits<std::int64_t>::max(),
           l.max_constant_bytes);
  return l;
}

ReadLimits read_limits() {
  return ReadLimits::from_environment();
}

}  // namespace doppler
