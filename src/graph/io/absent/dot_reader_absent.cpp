// dot_reader.hpp in a build without Graphviz (DOPPLER_WITH_GRAPHVIZ=off or cgraph not found):
// every DOT read is refused with one line naming the file and the missing component. Writing
// DOT (dot.hpp) does not need cgraph and stays available.
#include <string>

#include "doppler/graph/io/dot_reader.hpp"
#include "doppler/util/components.hpp"

namespace doppler {

namespace {

[[noreturn]] void refuse(const std::string& file) {
  const InputError e = component_absent("reading a DOT graph", Component::graphviz);
  throw InputError(file, 0, e.problem());
}

}  // namespace

DotTaskGraph parse_dot_task_graph(std::string_view, const std::string& file,
                                  std::vector<std::string>*, const ReadLimits&) {
  refuse(file);
}

Graph parse_dot_graph(std::string_view, const std::string& file, std::vector<std::string>*,
                      const ReadLimits&) {
  refuse(file);
}

std::optional<Assignment> read_dot_schedule(const std::filesystem::path& path) {
  refuse(path.string());
}

}  // namespace doppler
