#pragma once
// Internal: the files of a Doppler run directory besides the checkpoint: the log (log.jsonl, one
// JSON object per update) and assignments stored in the checkpoint's meta.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "doppler/graph/assignment.hpp"
#include "doppler/train/trainer.hpp"

namespace doppler::detail {

/// The log line of one update (NaN values are written as null).
nlohmann::json stats_json(const EpisodeStats& s, TrainStage stage);

/// Appends one line to `log`; InputError when it cannot.
void append_log_line(const std::filesystem::path& log, const nlohmann::json& line);

/// Keeps the first `lines` lines of `log` (the lines after a checkpoint belong to lost work).
void truncate_log(const std::filesystem::path& log, int lines);

/// {devices, device_of, order} of an assignment, and back (with `method`).
nlohmann::json assignment_to_json(const Assignment& a);
Assignment assignment_from_json(const nlohmann::json& j, const std::string& method);

}  // namespace doppler::detail
