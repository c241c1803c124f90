#include "doppler/util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "doppler/util/error.hpp"
#include "doppler/util/read_limits.hpp"

namespace doppler {

namespace {
std::string errno_text() {
  return std::strerror(errno);
}

// A unique temporary name in the same directory as `path` (so rename stays atomic).
std::filesystem::path temp_path_for(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  auto tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  return tmp;
}
}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  const auto tmp = temp_path_for(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path.string(), 0, "cannot write: " + errno_text());
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      throw InputError(path.string(), 0, "cannot write: " + err);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string err = errno_text();
    ::unlink(tmp.c_str());
    throw InputError(path.string(), 0, "cannot write: " + err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = errno_text();
    ::unlink(tmp.c_str());
    throw InputError(path.string(), 0, "cannot write: " + err);
  }
}

std::string read_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path.string(), 0, "is a directory, expected a file");
  const auto too_large = [&](const std::string& size) {
    return InputError(path.string(), 0,
                      fmt::format("file is {} bytes, larger than the limit of {} bytes (raise it "
                                  "with DOPPLER_MAX_FILE_BYTES)",
                                  size, max_bytes));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path.string(), 0, "cannot open: " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw too_large(std::to_string(st.st_size));
  }
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = errno_text();
      ::close(fd);
      throw InputError(path.string(), 0, "read failed: " + err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      throw too_large("more than " + std::to_string(max_bytes));
    }
  }
  ::close(fd);
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  return read_file(path, read_limits().max_file_bytes);
}

}  // namespace doppler
