#include "doppler/hardware/shipped.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace detail {
// Defined in the generated shipped_profiles_data.cpp (cmake/EmbedFiles.cmake).
const std::vector<std::pair<std::string_view, std::string_view>>& shipped_profile_files();
}  // namespace detail

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
}  // namespace

const std::vector<ShippedProfile>& shipped_profiles() {
  static const std::vector<ShippedProfile> profiles = [] {
    std::vector<ShippedProfile> out;
    for (const auto& [file, text] : detail::shipped_profile_files()) {
      const auto j = nlohmann::json::parse(text);
      ShippedProfile p;
      p.name = j.at("name").get<std::string>();
      if (j.contains("aliases")) p.aliases = j["aliases"].get<std::vector<std::string>>();
      p.json = std::string(text);
      out.push_back(std::move(p));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }();
  return profiles;
}

HardwareProfile load_hardware_profile(const std::string& name_or_path) {
  const std::string key = lower(name_or_path);
  for (const ShippedProfile& p : shipped_profiles()) {
    bool match = lower(p.name) == key;
    for (const auto& a : p.aliases) match = match || lower(a) == key;
    if (match) return parse_hardware_profile(p.json, "hardware/" + p.name + ".json");
  }
  std::error_code ec;
  if (std::filesystem::exists(name_or_path, ec))
    return parse_hardware_profile(read_file(name_or_path), name_or_path);
  std::string names;
  for (const ShippedProfile& p : shipped_profiles()) {
    names += names.empty() ? "" : ", ";
    names += p.name;
    if (!p.aliases.empty()) names += " (" + p.aliases.front() + ")";
  }
  throw InputError("unknown hardware profile '" + name_or_path +
                   "': not a shipped profile and no such file (shipped: " + names + ")");
}

}  // namespace doppler
