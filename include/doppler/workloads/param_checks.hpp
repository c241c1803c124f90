#pragma once
// Validation helpers shared by the generators: every failure is an InputError naming the
// parameter, as the CLI reports it.
#include <cstdint>
#include <string>

namespace doppler::workloads {

/// Throws InputError unless 1 <= value <= max ("parameter NAME must be ...").
void require_range(const std::string& name, std::int64_t value, std::int64_t max);

/// Throws InputError unless 1 <= blocks <= extent, naming both parameters.
void require_blocks(const std::string& name, std::int64_t blocks, const std::string& extent_name,
                    std::int64_t extent);

/// Largest divisor of n that is at most sqrt(n) (1 for n <= 3).
std::int64_t largest_divisor_below_sqrt(std::int64_t n);

}  // namespace doppler::workloads
