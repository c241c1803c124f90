#include "support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "doppler/graph/graph_builder.hpp"

namespace doppler::test {

std::filesystem::path source_dir() {
  return DOPPLER_SOURCE_DIR;
}

std::string cli_path() {
  return DOPPLER_CLI;
}

std::optional<std::filesystem::path> reference_graph_dir() {
  const std::filesystem::path dir =
      std::filesystem::path(DOPPLER_SOURCE_DIR).parent_path() / "shared" / "reference-graphs";
  if (std::filesystem::is_directory(dir)) return dir;
  return std::nullopt;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "doppler-test-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Graph random_dag(std::mt19937_64& rng, const RandomDagOptions& opt) {
  const int n = opt.nodes;
  std::vector<NodeId> perm(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  if (opt.shuffle_ids) std::shuffle(perm.begin(), perm.end(), rng);
  std::uniform_int_distribution<int> comp(0, static_cast<int>(opt.max_compute));
  std::uniform_int_distribution<int> tran(0, static_cast<int>(opt.max_transfer));
  std::bernoulli_distribution edge(opt.edge_prob);
  GraphBuilder b;
  for (int i = 0; i < n; ++i) {
    Node nd;
    nd.compute_cost = comp(rng);
    nd.transfer_cost = tran(rng);
    nd.kind = OpKind::einsum;
    b.add_node(nd);
  }
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v)
      if (edge(rng))
        b.add_edge(perm[static_cast<std::size_t>(u)], perm[static_cast<std::size_t>(v)]);
  b.set_meta({"random", "test", {}});
  return b.build();
}

namespace {

CliResult run_command(const std::string& prefix, const std::string& binary,
                      const std::string& args) {
  TempDir dir;
  const std::string out = (dir / "out").string(), err = (dir / "err").string();
  const std::string cmd = std::string("cd '") + DOPPLER_SOURCE_DIR + "' && " + prefix + "'" +
                          binary + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace

CliResult run_cli(const std::string& args) {
  return run_command("", DOPPLER_CLI, args);
}

CliResult run_program(const std::filesystem::path& binary, const std::string& args) {
  return run_command("", binary.string(), args);
}

bool cli_has(Component c) {
  static const std::string version = run_cli("--version").out;
  const auto line = version.find("components: ");
  if (line == std::string::npos) return false;
  std::string built = version.substr(line + 12);
  built = " " + built.substr(0, built.find(';')) + " ";
  built.erase(std::remove(built.begin(), built.end(), '\n'), built.end());
  return built.find(" " + std::string(component_name(c)) + " ") != std::string::npos;
}

bool have_mpirun() {
  return std::system("command -v mpirun >/dev/null 2>&1") == 0;
}

CliResult run_cli_mpi2(const std::string& args) {
  return run_command("timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 ", DOPPLER_CLI,
                     args);
}

std::filesystem::path test_data(const std::string& name) {
  return std::filesystem::path(DOPPLER_SOURCE_DIR) / "tests" / "data" / name;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace doppler::test
