#include "suite_inputs.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "doppler/graph/io/dot_reader.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/graph/types.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler::cli {

namespace fs = std::filesystem;

namespace {

bool is_graph_file(const fs::path& p) {
  static const char* exts[] = {".txt", ".json", ".dot", ".gv", ".stg"};
  const std::string ext = p.extension().string();
  return std::any_of(std::begin(exts), std::end(exts), [&](const char* e) { return ext == e; });
}

void add_directory(const fs::path& dir, std::vector<std::string>& out) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && is_graph_file(entry.path()))
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  out.insert(out.end(), files.begin(), files.end());
}

void add_list(const fs::path& list, std::vector<std::string>& out) {
  const std::string text = read_file(list);
  int line_no = 0;
  for (std::string_view line : split_fields(text, '\n')) {
    ++line_no;
    const std::string_view entry = trim(line.substr(0, line.find('#')));
    if (entry.empty()) continue;
    fs::path p(entry);
    if (p.is_relative()) p = list.parent_path() / p;
    if (!fs::exists(p)) throw InputError(list.string(), line_no, "no such file: " + p.string());
    if (fs::is_directory(p))
      add_directory(p, out);
    else
      out.push_back(p.string());
  }
}

// A positive integer parameter of the file, or 0 when it has none. InputError when malformed.
int devices_param(const Graph& g, const std::string& file) {
  const auto it = g.meta().params.find("devices");
  if (it == g.meta().params.end()) return 0;
  std::int64_t p = 0;
  std::string why;
  if (!parse_int64(it->second, p, why) || p < 1 || p > kMaxDevices)
    throw InputError(file, 0,
                     fmt::format("parameter devices = '{}' is not a device count 1..{}", it->second,
                                 kMaxDevices));
  return static_cast<int>(p);
}

std::optional<double> optimum_param(const Graph& g, const std::string& file) {
  const auto it = g.meta().params.find("optimum");
  if (it == g.meta().params.end()) return std::nullopt;
  double x = 0;
  std::string why;
  if (!parse_finite_double(it->second, x, why) || x < 0)
    throw InputError(file, 0,
                     fmt::format("parameter optimum = '{}' is not a makespan", it->second));
  return x;
}

LoadedInstance load_instance(const std::string& file, int devices, bool override_devices) {
  LoadedInstance li;
  const std::string ext = fs::path(file).extension().string();
  if (ext == ".dot" || ext == ".gv") {  // one parse for the graph and its schedule
    DotTaskGraph t = parse_dot_task_graph(read_file(file), file);
    li.graph = std::make_shared<Graph>(std::move(t.graph));
    li.schedule = std::move(t.schedule);
  } else {
    li.graph = std::make_shared<Graph>(load_graph(file));
  }
  const Graph& g = *li.graph;
  const int stated = devices_param(g, file);
  li.info.devices = override_devices || stated == 0 ? devices : stated;
  if (li.info.devices == 0)
    throw InputError(file, 0, "the file states no device count: pass --devices P");
  li.info.name = fs::path(file).stem().string();  // graph names repeat (e.g. "planted")
  li.info.file = file;
  li.info.ops = g.num_nodes();
  // An optimum holds for the device count the file states, not for another one.
  if (stated == li.info.devices) li.info.optimum = optimum_param(g, file);
  if (li.schedule && li.schedule->devices > li.info.devices) li.schedule.reset();
  if (li.schedule) li.schedule->devices = li.info.devices;
  return li;
}

}  // namespace

std::vector<std::string> expand_suite_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const std::string& in : inputs) {
    const fs::path p(in);
    if (!fs::exists(p)) throw InputError(in, 0, "no such file or directory");
    if (fs::is_directory(p))
      add_directory(p, out);
    else if (p.extension() == ".list")
      add_list(p, out);
    else
      out.push_back(in);
  }
  return out;
}

std::vector<LoadedInstance> load_suite(const std::vector<std::string>& files, int devices,
                                       bool override_devices, std::vector<SkippedFile>& skipped) {
  std::vector<LoadedInstance> out;
  for (const std::string& f : files) {
    try {
      out.push_back(load_instance(f, devices, override_devices));
    } catch (const InputError& e) {
      skipped.push_back({f, e.what()});
    }
  }
  return out;
}

}  // namespace doppler::cli
