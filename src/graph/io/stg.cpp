#include "doppler/graph/io/stg.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler {

namespace {

// The lines of a text that hold data: blank lines and '#' lines (comments, the information
// part) are skipped; CR line ends are tolerated.
class DataLines {
public:
  explicit DataLines(std::string_view text) : text_(text) {}

  // The next data line and its 1-based number; false at the end.
  bool next(std::string_view& line, std::int64_t& number) {
    while (pos_ < text_.size()) {
      std::size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view l = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++number_;
      const std::string_view t = trim(l);
      if (t.empty() || t.front() == '#') continue;
      line = t;
      number = number_;
      return true;
    }
    return false;
  }
  // Number of the last line of the text.
  std::int64_t last() const { return number_; }

private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t number_ = 0;
};

std::vector<std::string_view> split_blanks(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::int64_t read_count(DataLines& lines, const std::string& file, const ReadLimits& limits) {
  std::string_view line;
  std::int64_t number = 0;
  if (!lines.next(line, number))
    throw InputError(file, 0, "empty file, expected the task count n on the first line");
  const auto fields = split_blanks(line);
  if (fields.size() != 1)
    throw InputError(file, number,
                     fmt::format("expected the task count n alone, found {} fields (the "
                                 "prototype STG format 'n processors' is not supported)",
                                 fields.size()));
  std::int64_t n = 0;
  std::string why;
  if (!parse_int64(fields[0], n, why)) throw InputError(file, number, "task count: " + why);
  if (n < 0) throw InputError(file, number, fmt::format("task count {} is negative", n));
  if (n > limits.max_ops - 2)
    throw InputError(file, number,
                     fmt::format("{} tasks plus the 2 dummy tasks is more than {} ops, the limit "
                                 "(raise it with DOPPLER_MAX_OPS)",
                                 n, limits.max_ops));
  return n;
}

// Reads task `id`'s line "id cost npred preds..." into `b`; `edges` counts all predecessors.
void read_task(std::string_view line, std::int64_t number, std::int64_t id, const std::string& file,
               const ReadLimits& limits, std::int64_t& edges, GraphBuilder& b) {
  const auto f = split_blanks(line);
  if (f.size() < 3)
    throw InputError(
        file, number,
        fmt::format("task {}: expected 'id cost npred pred...', found {} field(s)", id, f.size()));
  std::int64_t got = 0, npred = 0;
  double cost = 0;
  std::string why;
  if (!parse_int64(f[0], got, why)) throw InputError(file, number, "task id: " + why);
  if (got != id)
    throw InputError(file, number,
                     fmt::format("expected task {}, found task id {} (ids run 0..n+1 in order, "
                                 "one line each)",
                                 id, got));
  if (!parse_finite_double(f[1], cost, why))
    throw InputError(file, number, fmt::format("task {}: processing time: {}", id, why));
  if (cost < 0)
    throw InputError(file, number,
                     fmt::format("task {}: processing time is negative ({})", id, cost));
  if (!parse_int64(f[2], npred, why))
    throw InputError(file, number, fmt::format("task {}: predecessor count: {}", id, why));
  if (npred < 0 || npred != static_cast<std::int64_t>(f.size()) - 3)
    throw InputError(
        file, number,
        fmt::format("task {} announces {} predecessor(s) but lists {}", id, npred, f.size() - 3));
  edges += npred;
  if (edges > limits.max_edges)
    throw InputError(file, number,
                     fmt::format("more than {} edges, the limit (raise it with DOPPLER_MAX_EDGES)",
                                 limits.max_edges));
  std::vector<std::int64_t> preds;
  for (std::size_t i = 3; i < f.size(); ++i) {
    std::int64_t p = 0;
    if (!parse_int64(f[i], p, why))
      throw InputError(file, number, fmt::format("task {}: predecessor: {}", id, why));
    if (p < 0 || p >= id)
      throw InputError(file, number,
                       fmt::format("task {}: predecessor {} is not an earlier task (0..{}): STG "
                                   "lists every task after its predecessors",
                                   id, p, id - 1));
    preds.push_back(p);
  }
  std::sort(preds.begin(), preds.end());
  const auto twice = std::adjacent_find(preds.begin(), preds.end());
  if (twice != preds.end())
    throw InputError(file, number,
                     fmt::format("task {}: predecessor {} is listed twice", id, *twice));
  Node node;
  node.name = fmt::format("T{}", id);
  node.compute_cost = cost;
  node.transfer_cost = 0.0;
  b.add_node(std::move(node));
  for (const std::int64_t p : preds) b.add_edge(p, id, std::nullopt, 0.0);
}

}  // namespace

Graph parse_stg(std::string_view text, const std::string& file, std::vector<std::string>*,
                const ReadLimits& limits) {
  if (text.size() > limits.max_file_bytes)
    throw InputError(file, 0,
                     fmt::format("{} bytes, more than {}, the limit (raise it with "
                                 "DOPPLER_MAX_FILE_BYTES)",
                                 text.size(), limits.max_file_bytes));
  DataLines lines(text);
  const std::int64_t n = read_count(lines, file, limits);
  GraphBuilder b;
  std::int64_t edges = 0;
  std::string_view line;
  std::int64_t number = 0;
  for (std::int64_t id = 0; id <= n + 1; ++id) {
    if (!lines.next(line, number))
      throw InputError(file, lines.last() + 1,
                       fmt::format("truncated file: expected {} task lines (n = {} tasks plus the "
                                   "entry and exit dummy tasks 0 and {}), found {}",
                                   n + 2, n, n + 1, id));
    read_task(line, number, id, file, limits, edges, b);
  }
  if (lines.next(line, number))
    throw InputError(file, number,
                     fmt::format("unexpected line after the exit task {} (the first line "
                                 "announces {} tasks plus 2 dummy tasks)",
                                 n + 1, n));
  GraphMeta meta;
  meta.origin = "stg";
  meta.params["tasks"] = std::to_string(n);
  b.set_meta(std::move(meta));
  try {
    return b.build();
  } catch (const GraphError& e) {  // cannot happen: ids and predecessors were checked
    throw InputError(file, 0, e.problem());
  }
}

}  // namespace doppler
