#include "doppler/policy/policy_cache.hpp"

#include <filesystem>
#include <map>
#include <tuple>

namespace doppler {

std::shared_ptr<SharedPolicy> shared_policy(const std::string& path) {
  constexpr std::size_t kCachedPolicies = 8;
  using Key = std::tuple<std::string, std::filesystem::file_time_type, std::uintmax_t>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<SharedPolicy>> cache;
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::canonical(checkpoint_path(path), ec);
  Key key;
  if (!ec) key = {file.string(), std::filesystem::last_write_time(file, ec), 0};
  if (!ec) std::get<2>(key) = std::filesystem::file_size(file, ec);
  if (ec) return std::make_shared<SharedPolicy>(DopplerPolicy::load(path));  // its InputError
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  auto loaded = std::make_shared<SharedPolicy>(DopplerPolicy::load(path));
  std::erase_if(cache, [&](const auto& e) { return std::get<0>(e.first) == std::get<0>(key); });
  if (cache.size() >= kCachedPolicies) cache.erase(cache.begin());
  cache.emplace(key, loaded);
  return loaded;
}

SampledPlacement sample_shared(SharedPolicy& p, const Problem& problem, const SampleOptions& o) {
  const std::lock_guard<std::mutex> lock(p.mutex);
  return p.policy.sample(problem, o);
}

}  // namespace doppler
