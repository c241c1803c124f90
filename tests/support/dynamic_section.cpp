#include "support/dynamic_section.hpp"

#include <cstdio>

#include <gtest/gtest.h>

namespace doppler::test {

std::string dynamic_section(const std::string& binary) {
  const std::string command = "readelf -d '" + binary + "'";
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) {
    ADD_FAILURE() << "cannot run: " << command;
    return "";
  }
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  if (pclose(p) != 0) {
    ADD_FAILURE() << "failed: " << command;
    return "";
  }
  return out;
}

}  // namespace doppler::test
