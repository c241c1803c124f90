#include "policy/nn/checkpoint.hpp"

#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"

namespace doppler::detail {

namespace {
const char* kFormat = "doppler-checkpoint";

// CRC32 of a zip entry's uncompressed data: `data` itself (stored) or its raw-deflate
// decompression (streamed, so a corrupted size cannot make it allocate). Sets `out_size` to the
// uncompressed size; false when the deflate stream is invalid.
bool entry_crc(std::string_view data, bool deflated, std::uint32_t& crc, std::uint64_t& out_size) {
  const auto bytes = [](std::string_view v) { return reinterpret_cast<const Bytef*>(v.data()); };
  if (!deflated) {
    crc = static_cast<std::uint32_t>(::crc32(0L, bytes(data), static_cast<uInt>(data.size())));
    out_size = data.size();
    return true;
  }
  z_stream z{};
  if (::inflateInit2(&z, -MAX_WBITS) != Z_OK) return false;
  z.next_in = const_cast<Bytef*>(bytes(data));
  z.avail_in = static_cast<uInt>(data.size());
  std::array<Bytef, 1 << 16> buf;
  uLong c = ::crc32(0L, Z_NULL, 0);
  out_size = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = buf.data();
    z.avail_out = static_cast<uInt>(buf.size());
    rc = ::inflate(&z, Z_NO_FLUSH);
    const std::size_t n = buf.size() - z.avail_out;
    c = ::crc32(c, buf.data(), static_cast<uInt>(n));
    out_size += n;
    if (rc == Z_OK && n == 0 && z.avail_in == 0) rc = Z_DATA_ERROR;  // ends before the stream
  }
  ::inflateEnd(&z);
  crc = static_cast<std::uint32_t>(c);
  return rc == Z_STREAM_END;
}

// Checks the zip container of a checkpoint before libtorch parses it: every entry of the
// central directory must lie inside the file, be stored or deflated (as libtorch writes them) and
// match its size and CRC32. libtorch's reader does not verify CRCs, and some corruptions (e.g. in
// the TorchScript type definitions of the archive) crash its importer instead of throwing. Entries
// with zip64 sizes (over 4 GiB) are left to libtorch.
void verify_zip(const std::filesystem::path& path) {
  const std::string f = read_file(path);
  const auto bad = [&](const std::string& what) {
    return InputError(path.string(), 0, "unreadable checkpoint (" + what + ")");
  };
  const auto u16 = [&](std::size_t at) -> std::uint32_t {
    if (at + 2 > f.size()) throw bad("truncated");
    return static_cast<std::uint8_t>(f[at]) | static_cast<std::uint8_t>(f[at + 1]) << 8;
  };
  const auto u32 = [&](std::size_t at) -> std::uint32_t { return u16(at) | u16(at + 2) << 16; };
  // End of central directory: the last signature within the maximal comment length.
  if (f.size() < 22) throw bad("truncated");
  std::size_t eocd = std::string::npos;
  for (std::size_t at = f.size() - 22, n = 0; n <= 0xFFFF + 22; --at, ++n) {
    if (u32(at) == 0x06054b50u) {
      eocd = at;
      break;
    }
    if (at == 0) break;
  }
  if (eocd == std::string::npos) throw bad("not a zip archive");
  std::uint64_t entries = u16(eocd + 10);
  std::uint64_t dir = u32(eocd + 16);
  if (entries == 0xFFFF || dir == 0xFFFFFFFFu) {  // zip64: the locator precedes the EOCD
    if (eocd < 20 || u32(eocd - 20) != 0x07064b50u) throw bad("corrupted: bad zip64 directory");
    const std::uint64_t z = u32(eocd - 12) | static_cast<std::uint64_t>(u32(eocd - 8)) << 32;
    if (z > f.size() || u32(static_cast<std::size_t>(z)) != 0x06064b50u)
      throw bad("corrupted: bad zip64 directory");
    const auto u64 = [&](std::uint64_t at) {
      return u32(static_cast<std::size_t>(at)) |
             static_cast<std::uint64_t>(u32(static_cast<std::size_t>(at + 4))) << 32;
    };
    entries = u64(z + 32);
    dir = u64(z + 48);
  }
  if (entries == 0 || entries > f.size() / 46) throw bad("corrupted: bad entry count");
  std::uint64_t at = dir;
  for (std::uint64_t i = 0; i < entries; ++i) {
    if (at > f.size() || u32(static_cast<std::size_t>(at)) != 0x02014b50u)
      throw bad("corrupted: bad directory entry");
    const std::size_t e = static_cast<std::size_t>(at);
    const std::uint32_t method = u16(e + 10), crc = u32(e + 16), size = u32(e + 20),
                        raw = u32(e + 24), name_len = u16(e + 28);
    const std::uint64_t local = u32(e + 42);
    std::string name = f.substr(std::min(e + 46, f.size()), std::min<std::uint32_t>(name_len, 200));
    for (char& ch : name)  // the error stays one printable line whatever the bytes
      if (ch < 0x20 || ch > 0x7e) ch = '?';
    at += 46ull + name_len + u16(e + 30) + u16(e + 32);
    if (size == 0xFFFFFFFFu || raw == 0xFFFFFFFFu || local == 0xFFFFFFFFu) continue;  // zip64
    if (method != 0 && method != 8) throw bad("corrupted: unknown compression of '" + name + "'");
    if (local > f.size() || u32(static_cast<std::size_t>(local)) != 0x04034b50u)
      throw bad("corrupted: bad local header of '" + name + "'");
    const std::uint64_t data = local + 30 + u16(static_cast<std::size_t>(local + 26)) +
                               u16(static_cast<std::size_t>(local + 28));
    if (data + size > f.size()) throw bad("truncated: entry '" + name + "' ends after the file");
    std::uint32_t got = 0;
    std::uint64_t got_size = 0;
    if (!entry_crc(std::string_view(f).substr(static_cast<std::size_t>(data), size), method == 8,
                   got, got_size) ||
        got_size != raw || got != crc)
      throw bad("corrupted: CRC mismatch in entry '" + name + "'");
  }
}
}  // namespace

void save_archive_atomic(torch::serialize::OutputArchive& root, const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  try {
    root.save_to(tmp.string());
  } catch (const c10::Error&) {
    std::remove(tmp.c_str());
    throw InputError(path.string(), 0, "cannot write checkpoint");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path.string(), 0, "cannot write checkpoint: " + ec.message());
  }
}

void write_checkpoint(const std::filesystem::path& path, nn::DualAgent& agent,
                      const nlohmann::json& meta, const ExtraRecords& extra) {
  torch::serialize::OutputArchive root;
  torch::serialize::OutputArchive sel, plc;
  agent.sel->save(sel);
  agent.plc->save(plc);
  root.write("sel", sel);
  root.write("plc", plc);
  if (extra) extra(root);
  nlohmann::json m = meta;
  m["format"] = kFormat;
  m["version"] = 1;
  root.write("meta", c10::IValue(m.dump()));
  save_archive_atomic(root, path);
}

Checkpoint open_checkpoint(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path.string(), 0, "no such checkpoint file");
  verify_zip(path);
  Checkpoint c;
  c.archive = std::make_shared<torch::serialize::InputArchive>();
  try {
    c.archive->load_from(path.string());
    c10::IValue meta;
    if (!c.archive->try_read("meta", meta) || !meta.isString())
      throw InputError(path.string(), 0, "not a Doppler checkpoint (no meta record)");
    c.meta = nlohmann::json::parse(meta.toStringRef());
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path.string(), 0,
                     "unreadable checkpoint (truncated or not a Doppler checkpoint)");
  }
  if (!c.meta.is_object() || c.meta.value("format", "") != kFormat)
    throw InputError(path.string(), 0,
                     "not a Doppler checkpoint (format is not doppler-checkpoint)");
  if (c.meta.value("version", 0) != 1)
    throw InputError(path.string(), 0, "unsupported checkpoint version");
  return c;
}

void load_networks(const Checkpoint& c, nn::DualAgent& agent, const std::filesystem::path& path) {
  try {
    torch::serialize::InputArchive sel, plc;
    c.archive->read("sel", sel);
    c.archive->read("plc", plc);
    agent.sel->load(sel);
    agent.plc->load(plc);
  } catch (const std::exception& e) {
    throw InputError(path.string(), 0, "checkpoint networks do not match its configuration");
  }
}

}  // namespace doppler::detail
