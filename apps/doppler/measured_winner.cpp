#include "measured_winner.hpp"

#include <fmt/format.h>

namespace doppler::cli {

namespace {

std::string join(const std::vector<std::string>& names, const std::vector<std::size_t>& rows) {
  std::string out;
  for (std::size_t i : rows) out += (out.empty() ? "" : ", ") + names[i];
  return out;
}

}  // namespace

MeasuredWinner measured_winner(
    const std::vector<MedianInterval>& intervals,
    const std::function<bool(std::size_t, std::size_t)>& same_placement) {
  MeasuredWinner w{fastest_median(intervals), {}};
  std::vector<std::size_t> others;
  for (std::size_t t : w.fastest.ties)
    (same_placement(t, w.fastest.fastest) ? w.same_placement : others).push_back(t);
  w.fastest.ties = std::move(others);
  return w;
}

std::string measured_winner_line(const std::vector<std::string>& names, const MeasuredWinner& w) {
  const std::string& best = names[w.fastest.fastest];
  const std::string same =
      w.same_placement.empty()
          ? ""
          : fmt::format(" ({} {} the same placement)", join(names, w.same_placement),
                        w.same_placement.size() == 1 ? "has" : "have");
  if (w.fastest.significant())
    return fmt::format(
        "measured: {}{} is significantly the fastest (its 95% interval overlaps no other "
        "placement's)\n",
        best, same);
  const auto& ties = w.fastest.ties;
  return fmt::format(
      "measured: no significant winner: {}{} has the lowest median, but {} {} not "
      "distinguishable from it (95% intervals overlapping)\n",
      best, same, join(names, ties), ties.size() == 1 ? "is" : "are");
}

}  // namespace doppler::cli
