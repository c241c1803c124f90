#pragma once
// Numbers as text without fmt, for translation units that must not include it (those that
// include torch: see doppler/util/log.hpp).
#include <string>

namespace doppler {

/// The shortest decimal text that reads back as x (fmt's "{}": 0.1 is "0.1", 1e+20 "1e+20").
std::string shortest_text(double x);

/// x with `digits` significant digits (printf's %.*g, fmt's "{:.4g}" for 4); digits >= 1.
std::string sig_text(double x, int digits);

/// x with `decimals` digits after the point (printf's %.*f, fmt's "{:.3f}" for 3); decimals >= 0.
std::string fixed_text(double x, int decimals);

/// `prefix` followed by n in decimal ("l" and 3: "l3"), e.g. a module's or a buffer's name.
std::string numbered(const std::string& prefix, long long n);

}  // namespace doppler
