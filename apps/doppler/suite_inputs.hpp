#pragma once
// The graph files of `doppler bench-suite`: directories, list files and graph files expanded into
// one ordered list, each loaded with its device count and known optimum, bad files kept aside.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/report/suite.hpp"

namespace doppler::cli {

/// A loaded instance of a suite.
struct LoadedInstance {
  SuiteInstance info;  ///< name (file stem), file, size, device count, optimum (lower_bound unset)
  std::shared_ptr<Graph> graph;        ///< the graph (shared: Problem keeps a reference to it)
  std::optional<Assignment> schedule;  ///< the file's own schedule (DOT Processor attributes)
};

/// A file that could not be used, with the one-line reason (FILE:LINE: problem).
struct SkippedFile {
  std::string file;   ///< path as expanded
  std::string error;  ///< why it was skipped
};

/// Expands `inputs` into graph file paths: a directory gives its graph files (.txt, .json, .dot,
/// .gv, .stg; sorted, not recursive), a `.list` file gives the paths it lists (one per line,
/// '#' comments, relative to the list's directory), any other path is a graph file.
/// InputError when an input does not exist.
std::vector<std::string> expand_suite_inputs(const std::vector<std::string>& inputs);

/// Loads every file: the device count is the file's "devices" parameter unless
/// `override_devices`, else `devices` (0: none, then the file is skipped); the optimum is its
/// "optimum" parameter; a DOT file's schedule is kept. Files that fail are appended to
/// `skipped`.
std::vector<LoadedInstance> load_suite(const std::vector<std::string>& files, int devices,
                                       bool override_devices, std::vector<SkippedFile>& skipped);

}  // namespace doppler::cli
