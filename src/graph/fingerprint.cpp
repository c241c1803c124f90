#include "doppler/graph/fingerprint.hpp"

#include <cstring>

#include <fmt/format.h>

namespace doppler {

namespace {
class Fnv {
public:
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h_ ^= b[i];
      h_ *= 0x100000001b3ULL;
    }
  }
  template <typename T>
  void value(T x) {
    bytes(&x, sizeof x);
  }
  std::uint64_t hash() const { return h_; }

private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};
}  // namespace

std::uint64_t graph_fingerprint(const Graph& g) {
  Fnv f;
  f.value<std::int64_t>(g.num_nodes());
  for (const Node& n : g.nodes()) {
    f.value(static_cast<int>(n.kind));
    f.value(n.flops);
    f.value(n.out_bytes);
    f.value(n.group);
    f.value(n.compute_cost.value_or(-1.0));
    f.value(n.transfer_cost.value_or(-1.0));
  }
  f.value<std::int64_t>(g.num_edges());
  for (const Edge& e : g.edges()) {
    f.value(e.src);
    f.value(e.dst);
    f.value(e.bytes.value_or(-1.0));
  }
  return f.hash();
}

std::string fingerprint_hex(std::uint64_t f) {
  return fmt::format("{:016x}", f);
}

}  // namespace doppler
