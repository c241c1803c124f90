// Initializers stored outside the model file (ONNX external data: models past protobuf's 2 GB,
// or saved with save_as_external_data), read into the model before it is checked.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "host_tensor.hpp"

namespace doppler::onnx_import {

namespace {

// An external_data entry's integer (offset, length), or a std::runtime_error naming the tensor.
std::uint64_t entry_number(const std::string& tensor, const std::string& key,
                           const std::string& value) {
  if (value.empty() || value.size() > 19 || value.find_first_not_of("0123456789") != value.npos)
    throw std::runtime_error(fmt::format(
        "initializer '{}': external data {} '{}' is not a byte count", tensor, key, value));
  return std::stoull(value);
}

// The bytes of one external tensor: `length` bytes (the rest of the file when absent) from
// `offset` of the file `location`, relative to the model's directory `dir` and inside it.
std::string read_external(const onnx::TensorProto& t, const std::filesystem::path& dir) {
  std::string location;
  std::uint64_t offset = 0, length = 0;
  bool has_length = false;
  for (const auto& e : t.external_data()) {
    if (e.key() == "location") location = e.value();
    if (e.key() == "offset") offset = entry_number(t.name(), e.key(), e.value());
    if (e.key() == "length") length = entry_number(t.name(), e.key(), e.value()), has_length = true;
  }
  const std::filesystem::path rel(location);
  if (location.empty() || rel.is_absolute() || std::find(rel.begin(), rel.end(), "..") != rel.end())
    throw std::runtime_error(fmt::format(
        "initializer '{}': external data location '{}' must be a file name relative to the "
        "model's directory, inside it",
        t.name(), location));
  const std::filesystem::path file = dir / rel;
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(file, ec);
  if (ec)
    throw std::runtime_error(fmt::format("initializer '{}': cannot read its external data {}: {}",
                                         t.name(), file.string(), ec.message()));
  if (!has_length) length = offset <= size ? size - offset : 0;
  if (offset > size || length > size - offset)
    throw std::runtime_error(
        fmt::format("initializer '{}': external data {} holds {} bytes, {} wanted from offset {}",
                    t.name(), file.string(), size, length, offset));
  std::ifstream in(file, std::ios::binary);
  std::string bytes(length, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(bytes.data(), static_cast<std::streamsize>(length)))
    throw std::runtime_error(fmt::format("initializer '{}': reading its external data {} failed",
                                         t.name(), file.string()));
  return bytes;
}

}  // namespace

void load_external_data(onnx::GraphProto& g, const std::string& model_file) {
  const std::filesystem::path dir = std::filesystem::path(model_file).parent_path();
  for (auto& t : *g.mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    t.set_raw_data(read_external(t, dir));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

}  // namespace doppler::onnx_import
