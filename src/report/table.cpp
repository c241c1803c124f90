#include "doppler/report/table.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace doppler {

void Table::add_column(std::string name, bool left) {
  names_.push_back(std::move(name));
  left_.push_back(left);
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != names_.size())
    throw std::logic_error(
        fmt::format("table row has {} cells, {} columns", cells.size(), names_.size()));
  rows_.push_back(std::move(cells));
}

std::string Table::to_text() const {
  std::vector<std::size_t> width(names_.size());
  for (std::size_t c = 0; c < names_.size(); ++c) {
    width[c] = names_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) out += "  ";
      const std::size_t pad = width[c] - cells[c].size();
      if (left_[c]) {
        out += cells[c];
        if (c + 1 < cells.size()) out += std::string(pad, ' ');
      } else {
        out += std::string(pad, ' ') + cells[c];
      }
    }
    return out + "\n";
  };
  std::string out = line(names_);
  std::size_t total = 0;
  for (std::size_t c = 0; c < width.size(); ++c) total += width[c] + (c ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string Table::to_csv() const {
  const auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) {
      if (ch == '"') q += '"';
      q += ch;
    }
    return q + "\"";
  };
  std::string out;
  const auto row = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + cell(cells[c]);
    out += "\n";
  };
  row(names_);
  for (const auto& r : rows_) row(r);
  return out;
}

std::string Table::to_markdown() const {
  const auto row = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) {
      std::string esc;
      for (char ch : c) esc += ch == '|' ? std::string("\\|") : std::string(1, ch);
      out += " " + esc + " |";
    }
    return out + "\n";
  };
  std::string out = row(names_) + "|";
  for (std::size_t c = 0; c < names_.size(); ++c) out += left_[c] ? "---|" : "---:|";
  out += "\n";
  for (const auto& r : rows_) out += row(r);
  return out;
}

std::string format_sig(double x, int digits) {
  if (std::isnan(x)) return "-";
  if (x == 0) return "0";
  const double a = std::fabs(x);
  if (a >= 1e7 || a < 1e-3) return fmt::format("{:.{}e}", x, digits - 1);
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  const int decimals = std::max(0, digits - 1 - magnitude);
  return fmt::format("{:.{}f}", x, decimals);
}

}  // namespace doppler
