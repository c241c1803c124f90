#pragma once
// Crash-safe file output: write to a temporary file beside the target, flush it to disk, then
// rename it over the target. A reader never sees a partial file, and a failed or interrupted
// write leaves any previous file untouched.
#include <filesystem>
#include <string>
#include <string_view>

namespace doppler {

/// Writes `content` to `path` atomically (temp file + fsync + rename). Throws InputError naming
/// the path when the directory does not exist or cannot be written.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Reads a whole file. Throws InputError naming the path when it cannot be read or when it is
/// larger than `max_bytes`.
std::string read_file(const std::filesystem::path& path,
                      std::uintmax_t max_bytes = std::uintmax_t{1} << 32);

}  // namespace doppler
