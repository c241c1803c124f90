#include "doppler/util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "doppler/util/error.hpp"

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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 0, "cannot open: " + errno_text());
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw InputError(path.string(), 0,
                     "file is " + std::to_string(size) + " bytes, larger than the limit of " +
                         std::to_string(max_bytes) + " bytes");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path.string(), 0, "read failed: " + errno_text());
  return std::move(ss).str();
}

}  // namespace doppler
