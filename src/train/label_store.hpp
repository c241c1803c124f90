#pragma once
// Internal: the best-known assignment of every pool problem of a distillation run (the labels),
// and their file RUN/labels.jsonl: one line per (round, problem) in problem order, holding the
// search's makespan and, when it improved the label, the assignment. Appending line by line makes
// label generation resumable after a kill: a torn last line is dropped and the problems of the
// round that have no line yet are searched again (deterministically, so with the same result).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler::detail {

/// One problem's label.
struct Label {
  std::vector<DeviceId> device_of;  ///< empty: no label yet
  double makespan = 0;              ///< simulated (FIFO), problem units
  int round = -1;                   ///< the round that found it
  std::string source;               ///< the search that found it ("local-search", ...)
};

/// One search result as recorded.
struct LabelRecord {
  int round = 0;
  int problem = 0;
  std::string source;
  double makespan = 0;    ///< the search's best
  bool improved = false;  ///< it replaced the label
  /// Simulator calls spent: the search's, plus one when improved (the new label's schedule, which
  /// the trainer simulates once for its start times).
  std::int64_t calls = 0;
  std::vector<DeviceId> device_of;  ///< the assignment (when improved)
};

/// The labels of a pool and their file.
class LabelStore {
public:
  /// `problems` labels, none yet; the file (when given) is created empty.
  LabelStore(int problems, std::optional<std::filesystem::path> file);
  /// Reads `file`, dropping a torn last line (and, when `writable`, truncating the file to its
  /// complete lines and appending the later records to it). InputError naming the file and line
  /// when a complete line is invalid.
  static LabelStore load(int problems, const std::filesystem::path& file, bool writable = true);

  /// Offers a search result for problem `i` found with `calls` simulator calls: it replaces the
  /// label when better (strictly lower makespan, or no label yet); the record is appended to the
  /// file. Returns true when replaced.
  bool offer(int round, int i, const std::string& source, double makespan,
             const std::vector<DeviceId>& device_of, std::int64_t calls);
  /// Simulator calls of every recorded search (so a resumed run counts what it did not redo).
  std::int64_t calls() const { return calls_; }
  /// The same for the searches of one round.
  std::int64_t calls(int round) const;
  /// Problems of `round` already recorded (they come in problem order: 0 .. n-1).
  int recorded(int round) const;
  /// The label of problem i.
  const Label& label(int i) const { return labels_[static_cast<std::size_t>(i)]; }
  /// Number of problems.
  int size() const { return static_cast<int>(labels_.size()); }

private:
  void apply(const LabelRecord& r);
  std::vector<Label> labels_;
  std::vector<int> recorded_;              // per round
  std::vector<std::int64_t> round_calls_;  // per round
  std::int64_t calls_ = 0;
  std::optional<std::filesystem::path> file_;
};

}  // namespace doppler::detail
