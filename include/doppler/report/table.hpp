#pragma once
// A small text table for terminal reports (aligned columns, a header rule) that can also be
// written as CSV.
#include <string>
#include <vector>

namespace doppler {

/// Rows of string cells under named columns. Columns are right-aligned unless marked left.
class Table {
public:
  /// Adds a column; `left` aligns it to the left (names, labels).
  void add_column(std::string name, bool left = false);
  /// Appends a row; it must have one cell per column.
  void add_row(std::vector<std::string> cells);
  /// Number of rows.
  std::size_t rows() const { return rows_.size(); }

  /// Aligned text with a rule under the header, each line ending in '\n'.
  std::string to_text() const;
  /// RFC 4180 CSV (header row first; cells quoted when needed).
  std::string to_csv() const;
  /// A GitHub-flavoured Markdown table ('|' in cells escaped).
  std::string to_markdown() const;

private:
  std::vector<std::string> names_;
  std::vector<bool> left_;
  std::vector<std::vector<std::string>> rows_;
};

/// `x` with `digits` significant digits, switching to exponent notation for very large or small
/// magnitudes (e.g. 1.235e+12); "-" for NaN.
std::string format_sig(double x, int digits = 4);

}  // namespace doppler
