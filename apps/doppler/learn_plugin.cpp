// The learned methods and commands of a torch build: libdoppler_learn.so beside the binary,
// loaded on first use (learned_commands.hpp), so that commands that need no policy start
// without loading libtorch.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "commands.hpp"
#include "learned_commands.hpp"

#include "doppler/heuristics/deferred_placers.hpp"
#include "doppler/train/learned_infos.hpp"

namespace doppler::cli {

namespace {

using learned::Plugin;

const Plugin* loaded_plugin = nullptr;  // set once by load_plugin()

// The plug-in's path: libdoppler_learn.so in the folder of this process's binary.
std::filesystem::path plugin_path() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the doppler binary's folder: " + ec.message());
  return self.parent_path() / "libdoppler_learn.so";
}

// Opens the plug-in, checks that it was built with this binary, and registers its placers.
const Plugin* open_plugin() {
  const std::string path = plugin_path().string();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    throw std::runtime_error(fmt::format("cannot load the learned methods: {}", dlerror()));
  using Entry = const Plugin* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "doppler_learn_plugin"));
  const Plugin* p = entry == nullptr ? nullptr : entry();
  if (p == nullptr || p->size != sizeof(Plugin) || std::string_view(p->version) != DOPPLER_VERSION)
    throw std::runtime_error(
        fmt::format("{} is not the learned methods' plug-in of doppler {} (rebuild it)", path,
                    DOPPLER_VERSION));
  p->register_placers();
  return p;
}

// The plug-in, loaded on the first call (thread-safe; a failed load is tried again next time).
const Plugin& load_plugin() {
  static std::once_flag once;
  std::call_once(once, [] { loaded_plugin = open_plugin(); });
  return *loaded_plugin;
}

// The subcommand argv names: its first argument that is not an option (the app's own options,
// -v, -q, --help and --version, take no value), "" when there is none.
std::string_view subcommand_of(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return "";
}

// The plug-in's command when it is loaded; else a stand-in listed with the same summary, which
// prepare_learned() makes unreachable (it loads the plug-in when the subcommand is this one).
void add_learned(CLI::App& app, const char* name, const char* summary,
                 void (*Plugin::*add)(CLI::App&)) {
  if (loaded_plugin != nullptr) return (loaded_plugin->*add)(app);
  CLI::App* cmd = app.add_subcommand(name, summary);
  cmd->allow_extras();
  cmd->prefix_command();
  cmd->callback([name] {
    throw std::logic_error(fmt::format("doppler {}: the learned methods were not loaded", name));
  });
}

}  // namespace

void prepare_learned(int argc, char** argv) {
  register_deferred_placers(learned_placer_infos(), [] { load_plugin(); });
  const std::string_view command = subcommand_of(argc, argv);
  if (command == "demo" || command == "train" || command == "pretrain") load_plugin();
}

void add_demo(CLI::App& app) {
  add_learned(app, "demo", learned::kDemoSummary, &Plugin::add_demo);
}

void add_train(CLI::App& app) {
  add_learned(app, "train", learned::kTrainSummary, &Plugin::add_train);
}

void add_pretrain(CLI::App& app) {
  add_learned(app, "pretrain", learned::kPretrainSummary, &Plugin::add_pretrain);
}

}  // namespace doppler::cli
