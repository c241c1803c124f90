#include "strided.hpp"

#include <cstring>

namespace doppler::engine_detail {

Dims contiguous_strides(const Dims& shape) {
  Dims s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

std::int64_t numel_of(const Dims& shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

namespace {

// Whether every view walks dimension d right after the last kept one as its continuation.
bool continues(std::span<Dims* const> views, const std::vector<Dims>& kept, const Dims& shape,
               std::size_t d) {
  for (std::size_t v = 0; v < views.size(); ++v)
    if (kept[v].back() != (*views[v])[d] * shape[d]) return false;
  return true;
}

}  // namespace

Dims coalesce_dims(const Dims& shape, std::span<Dims* const> views) {
  Dims out;
  std::vector<Dims> kept(views.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const bool merge = !out.empty() && continues(views, kept, shape, d);
    if (merge)
      out.back() *= shape[d];
    else
      out.push_back(shape[d]);
    for (std::size_t v = 0; v < views.size(); ++v) {
      if (merge)
        kept[v].back() = (*views[v])[d];
      else
        kept[v].push_back((*views[v])[d]);
    }
  }
  for (std::size_t v = 0; v < views.size(); ++v) *views[v] = std::move(kept[v]);
  return out;
}

void copy_strided(const float* src, const Dims& src_strides, float* dst, const Dims& dst_strides,
                  const Dims& shape) {
  for_each_row<2>(shape, {&src_strides, &dst_strides}, [&](auto off, std::int64_t len, auto in) {
    const float* s = src + off[0];
    float* d = dst + off[1];
    if (in[0] == 1 && in[1] == 1) {
      std::memcpy(d, s, static_cast<std::size_t>(len) * sizeof(float));
    } else {
      for (std::int64_t i = 0; i < len; ++i) d[i * in[1]] = s[i * in[0]];
    }
  });
}

}  // namespace doppler::engine_detail
