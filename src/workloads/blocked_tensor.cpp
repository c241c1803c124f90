#include "doppler/workloads/blocked_tensor.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace doppler::workloads {

Cuts even_cuts(std::int64_t extent, std::int64_t parts) {
  if (extent < 1) throw std::logic_error("even_cuts: extent must be positive");
  parts = std::clamp<std::int64_t>(parts, 1, std::min<std::int64_t>(extent, 1LL << 31));
  // floor(i * extent / parts) = i * q + floor(i * r / parts), without int64 overflow.
  const std::int64_t q = extent / parts, r = extent % parts;
  Cuts c(static_cast<std::size_t>(parts) + 1);
  for (std::int64_t i = 0; i <= parts; ++i)
    c[static_cast<std::size_t>(i)] = i * q + (i % parts) * r / parts + (i == parts ? r : 0);
  return c;
}

std::vector<Cuts> even_grid(const std::vector<std::int64_t>& shape,
                            const std::vector<std::int64_t>& parts) {
  if (shape.size() != parts.size()) throw std::logic_error("even_grid: rank mismatch");
  std::vector<Cuts> out;
  out.reserve(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) out.push_back(even_cuts(shape[d], parts[d]));
  return out;
}

Cuts cuts_within(const Cuts& src, std::int64_t offset, std::int64_t length, std::int64_t step) {
  const std::int64_t k = step < 0 ? -step : step;
  Cuts c{0, length};
  for (auto x : src) {
    const std::int64_t j = (x - offset + k - 1) / k;  // the first element at or past the cut
    if (x <= offset || j >= length) continue;
    c.push_back(step > 0 ? j : length - j);
  }
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

std::string block_name(const std::string& name, const std::vector<std::int64_t>& index) {
  return fmt::format("{}[{}]", name, fmt::join(index, ","));
}

bool cuts_refine(const Cuts& fine, const Cuts& coarse) {
  return std::includes(fine.begin(), fine.end(), coarse.begin(), coarse.end());
}

std::vector<std::int64_t> BlockedTensor::grid() const {
  std::vector<std::int64_t> g;
  g.reserve(cuts.size());
  for (const Cuts& c : cuts) g.push_back(static_cast<std::int64_t>(c.size()) - 1);
  return g;
}

std::int64_t BlockedTensor::numel() const {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

std::int64_t BlockedTensor::block_index(int d, std::int64_t x) const {
  const Cuts& c = cuts[static_cast<std::size_t>(d)];
  return static_cast<std::int64_t>(std::upper_bound(c.begin(), c.end(), x) - c.begin()) - 1;
}

NodeId BlockedTensor::block(const std::vector<std::int64_t>& index) const {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < cuts.size(); ++d)
    flat = flat * (static_cast<std::int64_t>(cuts[d].size()) - 1) + index[d];
  return blocks[static_cast<std::size_t>(flat)];
}

}  // namespace doppler::workloads
