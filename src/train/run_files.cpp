#include "train/run_files.hpp"

#include <cmath>
#include <fstream>

#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"

namespace doppler::detail {

using nlohmann::json;

namespace {

json num(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}

}  // namespace

json stats_json(const EpisodeStats& s, TrainStage stage) {
  return {{"update", s.update},
          {"episode", s.episode},
          {"stage", train_stage_name(stage)},
          {"rollouts", s.rollouts},
          {"makespan", num(s.makespan)},
          {"makespan_min", num(s.makespan_min)},
          {"makespan_std", num(s.makespan_std)},
          {"reward", num(s.reward)},
          {"baseline", num(s.baseline)},
          {"loss_sel", num(s.loss_sel)},
          {"loss_plc", num(s.loss_plc)},
          {"entropy_sel", num(s.entropy_sel)},
          {"entropy_plc", num(s.entropy_plc)},
          {"grad_norm",
           {{"pg_sel", num(s.pg_norm_sel)},
            {"pg_plc", num(s.pg_norm_plc)},
            {"entropy_sel", num(s.entropy_norm_sel)},
            {"entropy_plc", num(s.entropy_norm_plc)},
            {"self_imitation_sel", num(s.si_norm_sel)},
            {"self_imitation_plc", num(s.si_norm_plc)}}},
          {"match_sel", s.match_sel},
          {"match_plc", s.match_plc},
          {"lr", s.lr},
          {"epsilon", s.epsilon},
          {"seconds", s.seconds},
          {"best", num(s.best)},
          {"calls", s.calls},
          {"diverged", s.diverged}};
}

void append_log_line(const std::filesystem::path& log, const json& line) {
  std::ofstream out(log, std::ios::app);
  out << line.dump() << "\n";
  if (!out) throw InputError(log.string(), 0, "cannot append to the log");
}

void truncate_log(const std::filesystem::path& log, int lines) {
  std::ifstream in(log);
  std::string line, kept;
  for (int i = 0; i < lines && std::getline(in, line); ++i) kept += line + "\n";
  in.close();
  write_file_atomic(log, kept);
}

json assignment_to_json(const Assignment& a) {
  return {{"devices", a.devices}, {"device_of", a.device_of}, {"order", a.order}};
}

Assignment assignment_from_json(const json& j, const std::string& method) {
  Assignment a;
  a.devices = j.at("devices").get<int>();
  a.device_of = j.at("device_of").get<std::vector<DeviceId>>();
  a.order = j.at("order").get<std::vector<NodeId>>();
  a.method = method;
  return a;
}

}  // namespace doppler::detail
