#include "doppler/workloads/workload.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "doppler/graph/types.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"
#include "doppler/workloads/chainmm.hpp"
#include "doppler/workloads/ffnn.hpp"
#include "doppler/workloads/llama.hpp"
#include "doppler/workloads/llama_model.hpp"
#include "doppler/workloads/planted.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler::workloads {

namespace {

// Reads the parameters of one workload, rejecting unknown names and malformed values.
class ParamReader {
public:
  ParamReader(const WorkloadSpec& spec, const WorkloadInfo& info) : spec_(spec) {
    std::set<std::string> known;
    for (const ParamInfo& p : info.params) known.insert(p.name);
    for (const auto& [k, v] : spec.params)
      if (!known.count(k))
        throw InputError(fmt::format("unknown parameter '{}' for workload {} (known: {})", k,
                                     spec.name, fmt::join(known, ", ")));
  }

  // A positive integer parameter, or nullopt when absent.
  std::optional<std::int64_t> positive(const std::string& name) const {
    auto v = integer(name, "a positive integer");
    if (v && *v < 1)
      throw InputError(fmt::format("parameter {} must be a positive integer, got '{}'", name,
                                   spec_.params.at(name)));
    return v;
  }

  // An integer parameter (`what` describes the expected value), or nullopt when absent.
  std::optional<std::int64_t> integer(const std::string& name, const char* what) const {
    auto it = spec_.params.find(name);
    if (it == spec_.params.end()) return std::nullopt;
    std::int64_t v = 0;
    std::string why;
    if (!parse_int64(it->second, v, why))
      throw InputError(
          fmt::format("parameter {} must be {}, got '{}' ({})", name, what, it->second, why));
    return v;
  }

  // A positive finite number, or nullopt when absent.
  std::optional<double> number(const std::string& name) const {
    auto it = spec_.params.find(name);
    if (it == spec_.params.end()) return std::nullopt;
    double v = 0;
    std::string why;
    if (!parse_finite_double(it->second, v, why) || !(v > 0))
      throw InputError(
          fmt::format("parameter {} must be a positive number, got '{}'", name, it->second));
    return v;
  }

  // A text parameter, or nullopt when absent.
  std::optional<std::string> text(const std::string& name) const {
    auto it = spec_.params.find(name);
    if (it == spec_.params.end()) return std::nullopt;
    return it->second;
  }

  // Sets `field` from parameter `name` when present.
  void set(const std::string& name, std::int64_t& field) const {
    if (auto v = positive(name)) field = *v;
  }

private:
  const WorkloadSpec& spec_;
};

DType dtype_for(const WorkloadSpec& spec, DType fallback) {
  if (spec.dtype.empty()) return fallback;
  auto t = parse_dtype(spec.dtype);
  if (!t)
    throw InputError(fmt::format("unknown dtype '{}' (expected f32, f16 or bf16)", spec.dtype));
  return *t;
}

const WorkloadInfo& find_info(const std::vector<WorkloadInfo>& all, const std::string& name) {
  for (const WorkloadInfo& w : all)
    if (w.name == name) return w;
  std::vector<std::string> names;
  for (const WorkloadInfo& w : all) names.push_back(w.name);
  throw InputError(fmt::format("unknown workload '{}' (known: {})", name, fmt::join(names, ", ")));
}

Graph chainmm(const WorkloadSpec& s, const ParamReader& r) {
  ChainMMParams p;
  r.set("n", p.n);
  p.dtype = dtype_for(s, DType::f32);
  p.set_partition_for(s.devices);
  r.set("row_blocks", p.row_blocks);
  r.set("col_blocks", p.col_blocks);
  r.set("inner_blocks", p.inner_blocks);
  r.set("de_inner_blocks", p.de_inner_blocks);
  return generate_chainmm(p);
}

Graph ffnn(const WorkloadSpec& s, const ParamReader& r) {
  FfnnParams p;
  r.set("batch", p.batch);
  r.set("dim", p.dim);
  r.set("hidden", p.hidden);
  p.dtype = dtype_for(s, DType::f32);
  p.training = s.training;
  p.set_partition_for(s.devices);
  r.set("batch_blocks", p.batch_blocks);
  r.set("hidden_blocks", p.hidden_blocks);
  return generate_ffnn(p);
}

Graph llama(const WorkloadSpec& s, const ParamReader& r, bool layer) {
  LlamaParams p;
  r.set("batch", p.batch);
  r.set("seq", p.seq);
  r.set("dim", p.dim);
  r.set("heads", p.heads);
  r.set("ffn", p.ffn);
  if (layer) r.set("vocab", p.vocab);
  p.dtype = dtype_for(s, DType::f16);
  p.layer = layer;
  p.training = s.training;
  p.set_partition_for(s.devices);
  r.set("token_blocks", p.token_blocks);
  r.set("head_blocks", p.head_blocks);
  r.set("ffn_blocks", p.ffn_blocks);
  r.set("inner_blocks", p.inner_blocks);
  if (layer) r.set("vocab_blocks", p.vocab_blocks);
  return generate_llama(p);
}

// The whole model: a named size first, explicit sizes beside it override it.
Graph llama_model(const WorkloadSpec& s, const ParamReader& r) {
  LlamaModelParams p;
  const auto size = r.text("size");
  if (size) p.set_size(llama_size(*size));
  r.set("batch", p.batch);
  r.set("seq", p.seq);
  r.set("dim", p.dim);
  r.set("heads", p.heads);
  r.set("ffn", p.ffn);
  r.set("layers", p.layers);
  r.set("vocab", p.vocab);
  p.dtype = dtype_for(s, DType::f16);
  p.training = s.training;
  p.set_partition_for(s.devices);
  r.set("token_blocks", p.token_blocks);
  r.set("head_blocks", p.head_blocks);
  r.set("ffn_blocks", p.ffn_blocks);
  r.set("inner_blocks", p.inner_blocks);
  r.set("vocab_blocks", p.vocab_blocks);
  Graph g = generate_llama_model(p);
  if (size) {
    GraphMeta meta = g.meta();
    meta.params["size"] = *size;
    g.set_meta(std::move(meta));
  }
  return g;
}

Graph random_dag(const WorkloadSpec& s, const ParamReader& r) {
  if (!s.dtype.empty()) throw InputError("random-dag has no dtype (its costs are synthetic)");
  RandomDagParams p;
  r.set("ops", p.ops);
  p.width = std::min(p.width, std::max<std::int64_t>(1, p.ops));  // default 32, at most ops
  r.set("width", p.width);
  if (auto v = r.number("density")) p.density = *v;
  if (auto v = r.number("ccr")) p.ccr = *v;
  if (auto v = r.integer("seed", "a non-negative integer")) {
    if (*v < 0)
      throw InputError(fmt::format("parameter seed must be a non-negative integer, got {}", *v));
    p.seed = static_cast<std::uint64_t>(*v);
  }
  return generate_random_dag(p);
}

// A non-negative integer parameter as a seed, or nullopt when absent.
std::optional<std::uint64_t> seed_param(const ParamReader& r) {
  auto v = r.integer("seed", "a non-negative integer");
  if (v && *v < 0)
    throw InputError(fmt::format("parameter seed must be a non-negative integer, got {}", *v));
  return v ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*v)) : std::nullopt;
}

PlantedInstance planted(const WorkloadSpec& s, const ParamReader& r) {
  if (!s.dtype.empty()) throw InputError("planted has no dtype (its costs are synthetic)");
  PlantedParams p;
  p.devices = s.devices;
  r.set("ops", p.ops);
  if (auto v = r.number("ratio")) p.ratio = *v;
  if (auto v = r.number("density")) p.density = *v;
  if (auto v = seed_param(r)) p.seed = *v;
  return generate_planted(p);
}

std::vector<ParamInfo> llama_model_params() {
  return {
      {"batch", "1", "sequences"},
      {"seq", "4096", "tokens per sequence"},
      {"size", "7b", "Llama-2 size 7b, 13b or 70b (sets dim, heads, ffn, layers, vocab)"},
      {"dim", "4096", "model width (multiple of heads, dim/heads even; overrides size)"},
      {"heads", "32", "attention heads (overrides size)"},
      {"ffn", "11008", "SwiGLU hidden width (overrides size)"},
      {"layers", "32", "transformer blocks (overrides size)"},
      {"vocab", "32000", "vocabulary size (overrides size)"},
      {"token_blocks", "P", "token blocks of row-wise ops"},
      {"head_blocks", "P", "head blocks of projections and attention"},
      {"ffn_blocks", "P", "blocks of the FFN hidden axis"},
      {"inner_blocks", "2", "contraction blocks of weight projections"},
      {"vocab_blocks", "P", "blocks of the vocabulary axis"}};
}

std::vector<ParamInfo> llama_params(bool layer) {
  std::vector<ParamInfo> v = {{"batch", "1", "sequences"},
                              {"seq", "4096", "tokens per sequence"},
                              {"dim", "4096", "model width (multiple of heads, dim/heads even)"},
                              {"heads", "32", "attention heads"},
                              {"ffn", "11008", "SwiGLU hidden width"}};
  if (layer) v.push_back({"vocab", "32000", "vocabulary size"});
  v.push_back({"token_blocks", "P", "token blocks of row-wise ops"});
  v.push_back({"head_blocks", "P", "head blocks of projections and attention"});
  v.push_back({"ffn_blocks", "P", "blocks of the FFN hidden axis"});
  v.push_back({"inner_blocks", "2", "contraction blocks of weight projections"});
  if (layer) v.push_back({"vocab_blocks", "P", "blocks of the vocabulary axis"});
  return v;
}

}  // namespace

std::vector<WorkloadInfo> list_workloads() {
  return {
      {"chainmm",
       "Y = C(DE) + AB, square n x n matrices, 3D-decomposed matmuls with partial-sum aggregation",
       {{"n", "10000", "matrix size"},
        {"row_blocks", "2P/col_blocks", "row blocks of Y"},
        {"col_blocks", "largest divisor of 2P <= sqrt(2P)", "column blocks of Y"},
        {"inner_blocks", "2", "contraction blocks of C(DE) and AB"},
        {"de_inner_blocks", "2P/col_blocks", "contraction blocks of DE"}},
       "f32",
       false},
      {"ffnn",
       "row softmax(relu(x W1) W2), x [batch, dim], W1 [dim, hidden], W2 [hidden, dim]",
       {{"batch", "32768", "rows of x"},
        {"dim", "32", "input and output features"},
        {"hidden", "65536", "hidden features"},
        {"batch_blocks", "4P", "row blocks of every op"},
        {"hidden_blocks", "2", "blocks of the hidden axis"}},
       "f32",
       true},
      {"llama-block", "one Llama transformer block forward pass (Llama-7B sizes by default)",
       llama_params(false), "f16", true},
      {"llama-layer",
       "Llama block + causal mask, final norm, last-token select, vocabulary projection",
       llama_params(true), "f16", false},
      {"llama", "whole Llama model: embedding rows, N blocks, final norm, logits of every token",
       llama_model_params(), "f16", true},
      {"random-dag",
       "layered random DAG with synthetic reference costs (no exec descriptions)",
       {{"ops", "1000", "total ops (<= 1000000)"},
        {"width", "32", "largest layer (sizes uniform in 1..width; default min(32, ops))"},
        {"density", "0.2", "edge probability between consecutive layers, in (0, 1]"},
        {"ccr", "1", "mean compute cost / mean edge transfer cost"},
        {"seed", "0", "random seed (non-negative integer)"}},
       "",
       false},
      {"planted",
       "random task graph with a known optimal makespan for exactly P devices (docs/planted.md)",
       {{"ops", "1000", "total tasks (P .. 1000000)"},
        {"ratio", "1", "target mean edge transfer cost / mean task compute cost (<= 100)"},
        {"density", "2", "mean extra in-degree of a task besides its chain edge (<= 100)"},
        {"seed", "0", "random seed (non-negative integer)"}},
       "",
       false},
  };
}

Graph generate_workload(const WorkloadSpec& spec) {
  return generate_workload_with_assignment(spec).graph;
}

GeneratedWorkload generate_workload_with_assignment(const WorkloadSpec& spec) {
  const auto all = list_workloads();
  const WorkloadInfo& info = find_info(all, spec.name);
  if (spec.devices < 1 || spec.devices > kMaxDevices)
    throw InputError(
        fmt::format("device count must be in 1..{}, got {}", kMaxDevices, spec.devices));
  if (spec.training && !info.supports_training)
    throw InputError(fmt::format(
        "workload {} has no training variant (ffnn, llama-block and llama do)", spec.name));
  const ParamReader reader(spec, info);
  GeneratedWorkload out;
  Graph& g = out.graph;
  if (spec.name == "chainmm") g = chainmm(spec, reader);
  if (spec.name == "ffnn") g = ffnn(spec, reader);
  if (spec.name == "llama-block") g = llama(spec, reader, false);
  if (spec.name == "llama-layer") g = llama(spec, reader, true);
  if (spec.name == "llama") g = llama_model(spec, reader);
  if (spec.name == "random-dag") g = random_dag(spec, reader);
  if (spec.name == "planted") {
    PlantedInstance inst = planted(spec, reader);
    g = std::move(inst.graph);
    out.optimal = std::move(inst.assignment);
  }
  GraphMeta meta = g.meta();
  meta.params["devices"] = std::to_string(spec.devices);
  g.set_meta(std::move(meta));
  return out;
}

WorkloadSpec default_workload_spec() {
  WorkloadSpec s;
  s.name = "llama-layer";
  s.devices = 4;
  return s;
}

Graph default_workload() {
  return generate_workload(default_workload_spec());
}

WorkloadSpec demo_workload_spec(int devices) {
  WorkloadSpec s;
  s.name = "llama-layer";
  s.params = {{"seq", "256"}, {"dim", "256"}, {"heads", "4"}, {"ffn", "512"}, {"vocab", "1024"}};
  s.dtype = "f32";
  s.devices = devices;
  return s;
}

}  // namespace doppler::workloads
