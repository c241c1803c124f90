#pragma once
// Crash-safe file output: write to a temporary file beside the target, flush it to disk, then
// rename it over the target. A reader never sees a partial file, and a failed or interrupted
// write leaves any previous file untouched.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace doppler {

/// Writes `content` to `path` atomically (temp file + fsync + rename). Throws InputError naming
/// the path when the directory does not exist or cannot be written.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Reads a whole file (a regular file, or a pipe or device read to its end). Throws InputError
/// naming the path when it cannot be read or when it is larger than `max_bytes`, which is
/// checked before reading and while reading (no more than `max_bytes` + 64 KiB are held).
std::string read_file(const std::filesystem::path& path, std::uintmax_t max_bytes);

/// read_file() with the limit in effect, read_limits().max_file_bytes (DOPPLER_MAX_FILE_BYTES).
std::string read_file(const std::filesystem::path& path);

}  // namespace doppler
