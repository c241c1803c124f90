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
