#include "train/label_store.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "train/run_files.hpp"

#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"

namespace doppler::detail {

namespace {

using nlohmann::json;

json to_json(const LabelRecord& r) {
  json j = {{"round", r.round},       {"problem", r.problem},   {"source", r.source},
            {"makespan", r.makespan}, {"improved", r.improved}, {"calls", r.calls}};
  if (r.improved) j["device_of"] = r.device_of;
  return j;
}

LabelRecord record_from_json(const json& j) {
  LabelRecord r;
  r.round = j.at("round").get<int>();
  r.problem = j.at("problem").get<int>();
  r.source = j.at("source").get<std::string>();
  r.makespan = j.at("makespan").get<double>();
  r.improved = j.at("improved").get<bool>();
  r.calls = j.at("calls").get<std::int64_t>();
  if (r.improved) r.device_of = j.at("device_of").get<std::vector<DeviceId>>();
  return r;
}

}  // namespace

LabelStore::LabelStore(int problems, std::optional<std::filesystem::path> file)
    : labels_(static_cast<std::size_t>(problems)), file_(std::move(file)) {
  if (file_) write_file_atomic(*file_, "");
}

LabelStore LabelStore::load(int problems, const std::filesystem::path& file, bool writable) {
  LabelStore s(problems, std::nullopt);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) throw InputError(file.string(), 0, "no label file");
  const std::string text = read_file(file);
  const std::size_t complete = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  std::size_t at = 0;
  for (int line = 1; at < complete; ++line) {
    const std::size_t end = text.find('\n', at);
    try {
      const LabelRecord r = record_from_json(json::parse(text.substr(at, end - at)));
      if (r.problem < 0 || r.problem >= problems || r.round < 0 || r.problem != s.recorded(r.round))
        throw std::runtime_error("out of order");
      s.apply(r);
    } catch (const std::exception& e) {
      throw InputError(file.string(), line, std::string("invalid label record: ") + e.what());
    }
    at = end + 1;
  }
  if (!writable) return s;
  if (complete != text.size()) write_file_atomic(file, text.substr(0, complete));  // torn line
  s.file_ = file;
  return s;
}

void LabelStore::apply(const LabelRecord& r) {
  if (static_cast<int>(recorded_.size()) <= r.round) {
    recorded_.resize(static_cast<std::size_t>(r.round + 1), 0);
    round_calls_.resize(recorded_.size(), 0);
  }
  ++recorded_[static_cast<std::size_t>(r.round)];
  round_calls_[static_cast<std::size_t>(r.round)] += r.calls;
  calls_ += r.calls;
  if (!r.improved) return;
  Label& l = labels_[static_cast<std::size_t>(r.problem)];
  l = {r.device_of, r.makespan, r.round, r.source};
}

bool LabelStore::offer(int round, int i, const std::string& source, double makespan,
                       const std::vector<DeviceId>& device_of, std::int64_t calls) {
  const Label& l = label(i);
  const bool improved = l.device_of.empty() || makespan < l.makespan;
  LabelRecord r{round, i, source, makespan, improved, calls + (improved ? 1 : 0), device_of};
  if (file_) append_log_line(*file_, to_json(r));
  apply(r);
  return r.improved;
}

std::int64_t LabelStore::calls(int round) const {
  return round < static_cast<int>(round_calls_.size())
             ? round_calls_[static_cast<std::size_t>(round)]
             : 0;
}

int LabelStore::recorded(int round) const {
  return round < static_cast<int>(recorded_.size()) ? recorded_[static_cast<std::size_t>(round)]
                                                    : 0;
}

}  // namespace doppler::detail
