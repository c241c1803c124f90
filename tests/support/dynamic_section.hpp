#pragma once
// What a binary loads at start: its ELF dynamic section.
#include <string>

namespace doppler::test {

/// `readelf -d BINARY`'s output (its DT_NEEDED entries name the libraries loaded at start); a
/// test failure, and "", when readelf cannot run or fails.
std::string dynamic_section(const std::string& binary);

}  // namespace doppler::test
