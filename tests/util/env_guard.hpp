#pragma once
// Sets an environment variable for the lifetime of a test scope and restores it afterwards.
#include <cstdlib>
#include <optional>
#include <string>

namespace doppler::test {

/// Sets `name` to `value` (unsets it when value is nullopt); the destructor restores it.
class EnvGuard {
public:
  EnvGuard(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~EnvGuard() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace doppler::test
