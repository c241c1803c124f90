#pragma once
// Helpers shared by the test suites: locating ../shared, temporary directories, random DAGs and
// running the CLI binary.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include "doppler/graph/graph.hpp"
#include "doppler/util/components.hpp"

namespace doppler::test {

/// The project's source directory (absolute). Only support.cpp sees the build's path, so that
/// every other test object is the same in any clone (ccache hits across checkouts).
std::filesystem::path source_dir();

/// The doppler CLI binary the tests run (absolute path).
std::string cli_path();

/// ../shared/reference-graphs beside the project, or nullopt when absent.
std::optional<std::filesystem::path> reference_graph_dir();

/// Skips the current test (GTEST_SKIP) with a clear message when ../shared is absent; use as
/// `DOPPLER_REQUIRE_REFERENCE_GRAPHS(dir);`.
#define DOPPLER_REQUIRE_REFERENCE_GRAPHS(var)                                       \
  const auto var##_opt = ::doppler::test::reference_graph_dir();                    \
  if (!var##_opt) GTEST_SKIP() << "../shared/reference-graphs is absent: skipping"; \
  const std::filesystem::path var = *var##_opt

/// A fresh empty directory, removed with its content on destruction.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Path of the directory.
  const std::filesystem::path& path() const { return path_; }
  /// path() / name.
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
  std::filesystem::path path_;
};

/// Options of random_dag().
struct RandomDagOptions {
  int nodes = 10;            ///< node count
  double edge_prob = 0.3;    ///< probability of each forward edge u<v (before shuffling ids)
  double max_compute = 10;   ///< compute_cost uniform in [0, max_compute], integers
  double max_transfer = 10;  ///< transfer_cost uniform in [0, max_transfer], integers
  bool shuffle_ids = true;   ///< renumber nodes randomly (so ids are not a topological order)
};

/// A random DAG with integral reference costs (so sums are exact).
Graph random_dag(std::mt19937_64& rng, const RandomDagOptions& opt);

/// Result of running the CLI.
struct CliResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Runs the doppler CLI with `args` (a shell-quoted argument string) in the source directory.
CliResult run_cli(const std::string& args);

/// Runs `binary` (a copy of the CLI) as run_cli() runs the CLI.
CliResult run_program(const std::filesystem::path& binary, const std::string& args);

/// True when the CLI the tests run (cli_path()) was built with component `c` (its `--version`
/// lists them; asked once per process).
bool cli_has(Component c);

/// Skips the current test when the CLI lacks a component, e.g.
/// `DOPPLER_REQUIRE_CLI_COMPONENT(torch);`.
#define DOPPLER_REQUIRE_CLI_COMPONENT(name)                  \
  if (!::doppler::test::cli_has(::doppler::Component::name)) \
  GTEST_SKIP() << "this doppler was built without " #name " (DOPPLER_WITH_" #name "): skipping"

/// Skips the current test when this test binary's library lacks a component.
#define DOPPLER_REQUIRE_COMPONENT(name)                        \
  if (!::doppler::component_built(::doppler::Component::name)) \
  GTEST_SKIP() << "built without " #name " (DOPPLER_WITH_" #name "): skipping"

/// Whether `mpirun` is on PATH (Debian: openmpi-bin); the MPI tests skip without it.
bool have_mpirun();

/// Runs the doppler CLI on 2 MPI ranks (`mpirun -np 2`, as root too, at most 120 s) with `args`
/// in the source directory; exit code 124 when it hung.
CliResult run_cli_mpi2(const std::string& args);

/// Text of a file in tests/data.
std::filesystem::path test_data(const std::string& name);

/// The message of the InputError `f` throws, "" when it throws none (other exceptions pass).
std::string error_of(const std::function<void()>& f);

}  // namespace doppler::test
