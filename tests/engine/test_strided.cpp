// Strided views merged before a device launch (src/engine/strided.hpp, coalesce_dims): hand-made
// cases (contiguous, transposed, broadcast, extents of 1), then random views of random shapes,
// where every element must keep its offset in every view (checked by a row-major walk written
// here).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "engine/strided.hpp"

namespace doppler {
namespace {

using engine_detail::coalesce_dims;
using engine_detail::Dims;

// Offset of row-major element i of `shape` in a view with `strides`.
std::int64_t offset_of(std::int64_t i, const Dims& shape, const Dims& strides) {
  std::int64_t off = 0;
  for (std::size_t d = shape.size(); d-- > 0;) {
    off += (i % shape[d]) * strides[d];
    i /= shape[d];
  }
  return off;
}

struct Case {
  Dims shape;
  std::vector<Dims> views;
};

// coalesce_dims on copies of c's views: the merged shape, and the views through `out`.
Dims coalesced(const Case& c, std::vector<Dims>& out) {
  out = c.views;
  std::vector<Dims*> p;
  for (Dims& v : out) p.push_back(&v);
  return coalesce_dims(c.shape, p);
}

TEST(Strided, CoalescingMergesWhatEveryViewWalksAsOne) {
  std::vector<Dims> v;
  // contiguous: one dimension
  EXPECT_EQ(coalesced({{2, 3, 4}, {{12, 4, 1}}}, v), Dims({24}));
  EXPECT_EQ(v[0], Dims({1}));
  // a [2, 4, 3] buffer read as [2, 3, 4] beside a contiguous one: nothing merges
  EXPECT_EQ(coalesced({{2, 3, 4}, {{12, 4, 1}, {12, 1, 3}}}, v), Dims({2, 3, 4}));
  EXPECT_EQ(v[1], Dims({12, 1, 3}));
  // a row broadcast over rows: the extent 1 dropped, the rows kept apart
  EXPECT_EQ(coalesced({{4, 1, 5}, {{5, 5, 1}, {0, 0, 1}}}, v), Dims({4, 5}));
  EXPECT_EQ(v[0], Dims({5, 1}));
  EXPECT_EQ(v[1], Dims({0, 1}));
  // broadcast over the two outer dimensions beside a contiguous view: those two merge (0 = 0 x 4
  // and 20 = 5 x 4), the inner one does not (0 != 1 x 5)
  EXPECT_EQ(coalesced({{3, 4, 5}, {{0, 0, 1}, {20, 5, 1}}}, v), Dims({12, 5}));
  EXPECT_EQ(v[0], Dims({0, 1}));
  EXPECT_EQ(v[1], Dims({5, 1}));
  EXPECT_EQ(coalesced({{3, 4, 5}, {{0, 0, 1}, {0, 0, 2}}}, v), Dims({12, 5}));
  EXPECT_EQ(v[1], Dims({0, 2}));
  // a column of a matrix (stride 7) over a contiguous output: merges with nothing else
  EXPECT_EQ(coalesced({{6, 1}, {{7, 1}}}, v), Dims({6}));
  EXPECT_EQ(v[0], Dims({7}));
  // rank 0 and all extents 1: no dimension
  EXPECT_EQ(coalesced({{}, {{}}}, v), Dims({}));
  EXPECT_EQ(coalesced({{1, 1}, {{3, 1}}}, v), Dims({}));
  EXPECT_EQ(v[0], Dims({}));
  // no views (a contiguous output only): one dimension
  EXPECT_EQ(coalesced({{2, 5, 3}, {}}, v), Dims({30}));
}

// A random view of `shape`: a permutation of a contiguous buffer's dimensions, some
// dimensions broadcast (stride 0), some strides scaled (a slice).
Dims random_view(const Dims& shape, std::mt19937_64& rng) {
  std::vector<std::size_t> order(shape.size());
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
  if (rng() % 2) std::shuffle(order.begin(), order.end(), rng);
  Dims strides(shape.size());
  std::int64_t s = 1 + static_cast<std::int64_t>(rng() % 2);
  for (std::size_t k = order.size(); k-- > 0;) {
    const std::size_t d = order[k];
    strides[d] = rng() % 5 == 0 ? 0 : s;
    s *= shape[d] + static_cast<std::int64_t>(rng() % 4 == 0);  // a gap now and then
  }
  return strides;
}

TEST(Strided, CoalescedViewsKeepEveryElementsOffset) {
  std::mt19937_64 rng(5);
  int merged = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Case c;
    const auto rank = static_cast<std::size_t>(rng() % 6);
    for (std::size_t d = 0; d < rank; ++d)
      c.shape.push_back(1 + static_cast<std::int64_t>(rng() % 4));
    const auto views = 1 + rng() % 3;
    for (std::size_t k = 0; k < views; ++k) c.views.push_back(random_view(c.shape, rng));
    std::vector<Dims> v;
    const Dims shape = coalesced(c, v);
    ASSERT_LE(shape.size(), c.shape.size());
    ASSERT_EQ(engine_detail::numel_of(shape), engine_detail::numel_of(c.shape));
    for (std::int64_t e : shape) ASSERT_GT(e, 1);
    merged += shape.size() < c.shape.size();
    for (std::size_t k = 0; k < views; ++k) {
      ASSERT_EQ(v[k].size(), shape.size());
      for (std::int64_t i = 0; i < engine_detail::numel_of(shape); ++i)
        ASSERT_EQ(offset_of(i, shape, v[k]), offset_of(i, c.shape, c.views[k]))
            << "trial " << trial << ", view " << k << ", element " << i;
    }
  }
  EXPECT_GT(merged, 500);  // the cases exercise merging, not only copying
}

}  // namespace
}  // namespace doppler
