// Structural checks of generated graphs: every block reads exactly the producer blocks its
// region overlaps (checked from the einsum / broadcasting semantics of docs/exec.md), edges
// match the reads and carry the bytes read, the graph is acyclic, groups number the tensor ops,
// and node counts follow the documented partitioning rules (docs/workloads.md).
#include <array>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

using Vec = std::vector<std::int64_t>;

struct Box {
  Vec lo, hi;
};

std::string key_of(const Node& n) {
  return n.name.substr(0, n.name.find('['));
}

// Global box (in its tensor's coordinates) an ExecInput reads.
Box piece(const Graph& g, const ExecInput& in) {
  const ExecDesc& p = *g.node(in.src).exec;
  Box b;
  for (std::size_t d = 0; d < p.shape.size(); ++d) {
    b.lo.push_back(p.origin[d] + (in.offset.empty() ? 0 : in.offset[d]));
    b.hi.push_back(b.lo.back() + (in.shape.empty() ? p.shape[d] : in.shape[d]));
  }
  return b;
}

Box own(const ExecDesc& e) {
  Box b{e.origin, e.origin};
  for (std::size_t d = 0; d < e.shape.size(); ++d) b.hi[d] += e.shape[d];
  return b;
}

double volume(const Box& b) {
  double v = 1;
  for (std::size_t d = 0; d < b.lo.size(); ++d) v *= static_cast<double>(b.hi[d] - b.lo[d]);
  return v;
}

bool overlap(const Box& a, const Box& b) {
  for (std::size_t d = 0; d < a.lo.size(); ++d)
    if (a.hi[d] <= b.lo[d] || b.hi[d] <= a.lo[d]) return false;
  return true;
}

struct Checker {
  const Graph& g;
  double dsize;
  std::map<std::string, std::vector<NodeId>> blocks;  // tensor key -> blocks
  std::map<std::string, Vec> extent;                  // tensor key -> full shape

  Checker(const Graph& graph, double size) : g(graph), dsize(size) {
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const Node& n = g.node(v);
      if (!n.exec) continue;
      blocks[key_of(n)].push_back(v);
      Vec& e = extent[key_of(n)];
      e.resize(n.exec->shape.size(), 0);
      for (std::size_t d = 0; d < e.size(); ++d)
        e[d] = std::max(e[d], n.exec->origin[d] + n.exec->shape[d]);
    }
  }

  // Ranges of every einsum label seen by node v's operands; checks they agree.
  std::map<char, std::pair<std::int64_t, std::int64_t>> einsum_ranges(NodeId v) {
    const ExecDesc& e = *g.node(v).exec;
    const auto arrow = e.einsum.find("->");
    std::map<char, std::pair<std::int64_t, std::int64_t>> r;
    std::size_t j = 0, d = 0;
    for (char c : e.einsum.substr(0, arrow)) {
      if (c == ',') {
        ++j;
        d = 0;
        continue;
      }
      const Box b = piece(g, e.inputs.at(j));
      const auto range = std::make_pair(b.lo.at(d), b.hi.at(d));
      if (r.count(c)) {
        EXPECT_EQ(r[c], range) << g.label(v) << " label " << c;
      }
      r[c] = range;
      ++d;
    }
    const std::string out = e.einsum.substr(arrow + 2);
    for (std::size_t k = 0; k < out.size(); ++k)
      EXPECT_EQ(r[out[k]], std::make_pair(e.origin[k], e.origin[k] + e.shape[k])) << g.label(v);
    return r;
  }

  void check_node(NodeId v) {
    const Node& n = g.node(v);
    ASSERT_TRUE(n.exec) << g.label(v);
    const ExecDesc& e = *n.exec;
    SCOPED_TRACE(g.label(v));
    ASSERT_EQ(e.origin.size(), e.shape.size());
    EXPECT_DOUBLE_EQ(n.out_bytes, static_cast<double>(e.numel()) * dsize);
    // Regions inside producer blocks; edges = producers, with the bytes read.
    std::map<NodeId, double> read;
    for (const ExecInput& in : e.inputs) {
      const ExecDesc& p = *g.node(in.src).exec;
      const Box b = piece(g, in), pb = own(p);
      double elements = 1;
      for (std::size_t d = 0; d < p.shape.size(); ++d) {
        EXPECT_GE(b.lo[d], pb.lo[d]);
        EXPECT_LE(b.hi[d], pb.hi[d]);
        EXPECT_LT(b.lo[d], b.hi[d]);
        elements *= static_cast<double>(b.hi[d] - b.lo[d]);
      }
      read[in.src] = std::max(read[in.src], elements * dsize);
    }
    const auto preds = g.predecessors(v);
    ASSERT_EQ(preds.size(), read.size());
    for (std::size_t i = 0; i < preds.size(); ++i) {
      ASSERT_TRUE(read.count(preds[i]));
      EXPECT_DOUBLE_EQ(g.edge_bytes(g.in_edges(v)[i]), read[preds[i]]);
    }
    // What each kernel must read, from its semantics.
    const std::string& op = e.op;
    if (op == "input" || op == "fill") {
      EXPECT_TRUE(e.inputs.empty());
    } else if (op == "einsum") {
      const auto ranges = einsum_ranges(v);
      bool partial = false;
      for (NodeId s : g.successors(v)) partial = partial || g.node(s).name.rfind("agg:", 0) == 0;
      if (!partial) {  // every contracted label covers its whole extent
        const auto arrow = e.einsum.find("->");
        const std::string out = e.einsum.substr(arrow + 2);
        std::size_t j = 0, d = 0;
        for (char c : e.einsum.substr(0, arrow)) {
          if (c == ',') {
            ++j;
            d = 0;
            continue;
          }
          if (out.find(c) == std::string::npos) {
            const auto full = extent.at(key_of(g.node(e.inputs[j].src)))[d];
            EXPECT_EQ(ranges.at(c), std::make_pair(std::int64_t{0}, full)) << "label " << c;
          }
          ++d;
        }
      }
    } else if (op == "sum" || op == "max") {
      // Partials of one output block: same box, and together they cover the contraction.
      double covered = 0, whole = 0;
      std::set<std::vector<std::pair<std::int64_t, std::int64_t>>> seen;
      for (const ExecInput& in : e.inputs) {
        const Node& p = g.node(in.src);
        EXPECT_TRUE(in.offset.empty());
        EXPECT_EQ(p.exec->origin, e.origin);
        EXPECT_EQ(p.exec->shape, e.shape);
        std::vector<std::pair<std::int64_t, std::int64_t>> k;
        double vol = 1;
        whole = 1;
        if (p.exec->op == "einsum") {
          const auto r = einsum_ranges(in.src);
          const std::string out = p.exec->einsum.substr(p.exec->einsum.find("->") + 2);
          const auto& spec = p.exec->einsum;
          std::size_t j = 0, d = 0;
          std::set<char> done;
          for (char c : spec.substr(0, spec.find("->"))) {
            if (c == ',') {
              ++j;
              d = 0;
              continue;
            }
            if (out.find(c) == std::string::npos && !done.count(c)) {
              done.insert(c);
              k.push_back(r.at(c));
              vol *= static_cast<double>(r.at(c).second - r.at(c).first);
              whole *= static_cast<double>(extent.at(key_of(g.node(p.exec->inputs[j].src)))[d]);
            }
            ++d;
          }
        } else {  // partial reduction over the last axis
          const Box b = piece(g, p.exec->inputs.at(0));
          k.emplace_back(b.lo.back(), b.hi.back());
          vol = static_cast<double>(b.hi.back() - b.lo.back());
          whole = static_cast<double>(extent.at(key_of(g.node(p.exec->inputs[0].src))).back());
        }
        EXPECT_TRUE(seen.insert(k).second) << "two partials cover the same contraction block";
        covered += vol;
      }
      EXPECT_EQ(covered, whole);
      EXPECT_GE(e.inputs.size(), 2u);
    } else if (op == "assemble") {
      // Pieces are exactly the intersections with every source block overlapping this block.
      const std::string src = key_of(g.node(e.inputs.at(0).src));
      const Box mine = own(e);
      std::set<NodeId> want, got;
      for (NodeId b : blocks.at(src))
        if (overlap(own(*g.node(b).exec), mine)) want.insert(b);
      double vol = 0;
      for (const ExecInput& in : e.inputs) {
        EXPECT_EQ(key_of(g.node(in.src)), src);
        got.insert(in.src);
        const Box b = piece(g, in), pb = own(*g.node(in.src).exec);
        for (std::size_t d = 0; d < b.lo.size(); ++d) {
          EXPECT_EQ(b.lo[d], std::max(pb.lo[d], mine.lo[d]));
          EXPECT_EQ(b.hi[d], std::min(pb.hi[d], mine.hi[d]));
        }
        vol += volume(b);
      }
      EXPECT_EQ(got, want);
      EXPECT_EQ(vol, volume(mine));
    } else if (op == "select") {
      ASSERT_EQ(e.inputs.size(), 1u);
      const Box b = piece(g, e.inputs[0]);
      for (std::size_t d = 0; d < b.lo.size(); ++d) EXPECT_EQ(b.hi[d] - b.lo[d], e.shape[d]);
    } else if (op.rfind("reduce_", 0) == 0) {
      ASSERT_EQ(e.inputs.size(), 1u);
      const Box b = piece(g, e.inputs[0]);
      const std::size_t last = e.shape.size() - 1;
      for (std::size_t d = 0; d < last; ++d) {
        EXPECT_EQ(b.lo[d], e.origin[d]);
        EXPECT_EQ(b.hi[d], e.origin[d] + e.shape[d]);
      }
      EXPECT_EQ(e.shape[last], 1);
      bool partial = false;
      for (NodeId s : g.successors(v)) partial = partial || g.node(s).name.rfind("agg:", 0) == 0;
      if (!partial) {
        EXPECT_EQ(b.lo[last], 0);
        EXPECT_EQ(b.hi[last], extent.at(key_of(g.node(e.inputs[0].src)))[last]);
      }
    } else {  // elementwise: each operand's box is this block's box, broadcast dims excepted
      for (const ExecInput& in : e.inputs) {
        const Vec& full = extent.at(key_of(g.node(in.src)));
        const Box b = piece(g, in);
        const std::size_t off = e.shape.size() - full.size();
        for (std::size_t d = 0; d < full.size(); ++d) {
          const bool bcast =
              full[d] == 1 && e.shape[off + d] >= 1 && extent.at(key_of(n))[off + d] != 1;
          EXPECT_EQ(b.lo[d], bcast ? 0 : e.origin[off + d]);
          EXPECT_EQ(b.hi[d], bcast ? 1 : e.origin[off + d] + e.shape[off + d]);
        }
      }
    }
  }
};

bool acyclic(const Graph& g) {
  std::vector<int> state(static_cast<std::size_t>(g.num_nodes()), 0);
  std::vector<std::pair<NodeId, std::size_t>> stack;
  for (NodeId s = 0; s < g.num_nodes(); ++s) {
    if (state[static_cast<std::size_t>(s)]) continue;
    stack.push_back({s, 0});
    state[static_cast<std::size_t>(s)] = 1;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      const auto succ = g.successors(v);
      if (i == succ.size()) {
        state[static_cast<std::size_t>(v)] = 2;
        stack.pop_back();
        continue;
      }
      const NodeId w = succ[i++];
      if (state[static_cast<std::size_t>(w)] == 1) return false;
      if (!state[static_cast<std::size_t>(w)]) {
        state[static_cast<std::size_t>(w)] = 1;
        stack.push_back({w, 0});
      }
    }
  }
  return true;
}

Graph make(const std::string& name, std::map<std::string, std::string> params, int devices,
           bool training = false) {
  workloads::WorkloadSpec s;
  s.name = name;
  s.params = std::move(params);
  s.devices = devices;
  s.training = training;
  return workloads::generate_workload(s);
}

int placed(const Graph& g) {
  int n = 0;
  for (const Node& v : g.nodes()) n += v.kind != OpKind::input;
  return n;
}

void check_graph(const Graph& g) {
  EXPECT_TRUE(acyclic(g));
  const double dsize = g.meta().params.at("dtype") == "f32" ? 4 : 2;
  Checker c(g, dsize);
  std::set<std::string> names;
  std::map<int, std::string> group_key;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    c.check_node(v);
    const Node& n = g.node(v);
    EXPECT_TRUE(names.insert(n.name).second) << "duplicate name " << n.name;
    ASSERT_GE(n.group, 0);
    auto [it, fresh] = group_key.emplace(n.group, key_of(n));
    EXPECT_EQ(it->second, key_of(n)) << "group " << n.group << " mixes tensor ops";
    EXPECT_TRUE(n.compute_cost && n.transfer_cost);
    if (n.kind != OpKind::input) {
      EXPECT_DOUBLE_EQ(*n.transfer_cost, 4 * *n.compute_cost);
    }
  }
  // Groups are 0..G-1.
  EXPECT_EQ(group_key.begin()->first, 0);
  EXPECT_EQ(group_key.rbegin()->first, static_cast<int>(group_key.size()) - 1);
}

const std::map<std::string, std::string> kSmall = {
    {"seq", "32"}, {"dim", "64"}, {"heads", "4"}, {"ffn", "96"}, {"vocab", "100"}};

TEST(Structure, BlocksReadExactlyTheRegionsTheyNeed) {
  auto small_block = kSmall;
  small_block.erase("vocab");
  for (int devices : {1, 3, 4, 8}) {
    SCOPED_TRACE(devices);
    check_graph(make("chainmm", {{"n", "60"}}, devices));
    check_graph(make("ffnn", {{"batch", "64"}, {"dim", "8"}, {"hidden", "40"}}, devices));
    check_graph(make("llama-block", small_block, devices));
    check_graph(make("llama-layer", kSmall, devices));
    check_graph(make("ffnn", {{"batch", "64"}, {"dim", "8"}, {"hidden", "40"}}, devices, true));
    check_graph(make("llama-block", small_block, devices, true));
    auto model = kSmall;
    model["layers"] = "2";
    check_graph(make("llama", model, devices));
    check_graph(make("llama", model, devices, true));
  }
}

TEST(Structure, DefaultGraphsHaveTheDocumentedSizes) {
  // docs/workloads.md, "Node counts": placed ops (inputs excluded) for 4 and 8 devices.
  const std::map<std::pair<std::string, int>, std::pair<int, int>> documented = {
      {{"chainmm", 4}, {76, 36}},       {{"ffnn", 4}, {192, 20}},
      {{"llama-block", 4}, {170, 54}},  {{"llama-layer", 4}, {204, 63}},
      {{"chainmm", 8}, {152, 48}},      {{"ffnn", 8}, {384, 36}},
      {{"llama-block", 8}, {334, 106}}, {{"llama-layer", 8}, {400, 123}}};
  for (const auto& [key, counts] : documented) {
    const Graph g = make(key.first, {}, key.second);
    EXPECT_EQ(placed(g), counts.first) << key.first << " P=" << key.second;
    EXPECT_EQ(g.num_nodes() - placed(g), counts.second) << key.first << " P=" << key.second;
  }
}

TEST(Structure, CountsFollowThePartitioningRules) {
  // chainmm: X = DE has K*c output blocks of kx partials; C X and A B r*c blocks of K partials.
  for (const auto& [r, c, k, kx] :
       std::vector<std::array<int, 4>>{{4, 2, 2, 4}, {3, 5, 2, 3}, {2, 2, 3, 2}}) {
    const Graph g = make("chainmm",
                         {{"n", "60"},
                          {"row_blocks", std::to_string(r)},
                          {"col_blocks", std::to_string(c)},
                          {"inner_blocks", std::to_string(k)},
                          {"de_inner_blocks", std::to_string(kx)}},
                         4);
    EXPECT_EQ(placed(g), k * c * kx + k * c + 2 * (r * c * k + r * c) + r * c);
    EXPECT_EQ(g.num_nodes() - placed(g), 2 * r * k + k * c + k * kx + kx * c);
  }
  // ffnn: B row blocks, H hidden blocks (H > 1): 3BH + B aggregations + 5B softmax ops.
  for (const auto& [b, h] : std::vector<std::array<int, 2>>{{16, 2}, {5, 3}, {8, 4}}) {
    const Graph g = make(
        "ffnn", {{"batch_blocks", std::to_string(b)}, {"hidden_blocks", std::to_string(h)}}, 4);
    EXPECT_EQ(placed(g), 3 * b * h + b + 5 * b);
  }
  // llama (batch 1, T > 1, K divides T), agg(k) = 1 when k > 1 (partials are aggregated):
  // block = 10T norms and residuals + 2 relayouts + 3 (HK + agg(K) H) q, k, v + 10H attention
  // + (HK + agg(H) K) output projection + 2 (FK + agg(K) F) w1, w3 + 2F + (FK + agg(F) K) w2;
  // the layer adds mask 1 + H, final norm 4T, select 1 and logits VK + agg(K) V.
  const auto agg = [](int x) { return x > 1 ? 1 : 0; };
  for (const auto& [t, h, f, k, v] : std::vector<std::array<int, 5>>{
           {4, 4, 4, 2, 4}, {8, 8, 8, 2, 8}, {6, 2, 5, 3, 7}, {4, 1, 3, 1, 2}}) {
    std::map<std::string, std::string> p = {{"token_blocks", std::to_string(t)},
                                            {"head_blocks", std::to_string(h)},
                                            {"ffn_blocks", std::to_string(f)},
                                            {"inner_blocks", std::to_string(k)},
                                            {"vocab_blocks", std::to_string(v)}};
    const int block = 10 * t + 2 + 3 * (h * k + agg(k) * h) + 10 * h + (h * k + agg(h) * k) +
                      2 * (f * k + agg(k) * f) + 2 * f + (f * k + agg(f) * k);
    const Graph layer = make("llama-layer", p, 4);
    p.erase("vocab_blocks");
    const Graph blk = make("llama-block", p, 4);
    EXPECT_EQ(placed(blk), block) << t << " " << h << " " << f << " " << k;
    EXPECT_EQ(placed(layer), block + 1 + h + 4 * t + 1 + v * k + agg(k) * v);
  }
}

}  // namespace
}  // namespace doppler
