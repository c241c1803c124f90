#include "doppler/train/pretrain_spec.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <string_view>

#include "doppler/graph/fingerprint.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/json_doc.hpp"
#include "doppler/util/number_text.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {

namespace detail {
const std::vector<std::pair<std::string_view, std::string_view>>& pretrain_spec_files();
}

namespace {

using nlohmann::json;
constexpr int kMaxDraws = 200;  // per pool problem

std::string scalar_text(const JsonDoc& doc, const json& j, const std::string& at) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_integer()) return std::to_string(j.get<std::int64_t>());
  if (j.is_number()) return shortest_text(j.get<double>());
  doc.fail(at, "expected a string or a number, got " + JsonDoc::type_name(j));
}

ParamChoice parse_param(const JsonDoc& doc, const json& j, const std::string& at) {
  ParamChoice c;
  if (j.is_object()) {
    c.range = true;
    c.lo = doc.number(doc.require(j, at, "min"), at + "/min", -1e300);
    c.hi = doc.number(doc.require(j, at, "max"), at + "/max", -1e300);
    c.log = j.value("log", false);
    c.integer = j.value("int", false);
    if (c.hi < c.lo) doc.fail(at, "max is below min");
    if (c.log && !(c.lo > 0)) doc.fail(at, "a log range needs min > 0");
    return c;
  }
  if (j.is_array()) {
    if (j.empty()) doc.fail(at, "empty list of values");
    for (std::size_t i = 0; i < j.size(); ++i)
      c.values.push_back(scalar_text(doc, j[i], at + "/" + std::to_string(i)));
    return c;
  }
  c.values.push_back(scalar_text(doc, j, at));
  return c;
}

template <class T, class F>
std::vector<T> list_of(const JsonDoc& doc, const json& f, const std::string& at, const char* key,
                       std::vector<T> fallback, F read) {
  if (!f.contains(key)) return fallback;
  const json& j = f[key];
  const std::string p = at + "/" + key;
  std::vector<T> out;
  if (!j.is_array()) return {read(j, p)};
  if (j.empty()) doc.fail(p, "empty list");
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(read(j[i], p + "/" + std::to_string(i)));
  return out;
}

ProblemFamily parse_family(const JsonDoc& doc, const json& f, const std::string& at,
                           const std::filesystem::path& base) {
  doc.expect_object(f, at);
  ProblemFamily fam;
  static const std::set<std::string> known = {"workload", "file",     "params", "training",
                                              "devices",  "hardware", "weight", "name"};
  for (const auto& [k, v] : f.items())
    if (!known.count(k)) doc.fail(at + "/" + k, "unknown member '" + k + "'");
  if (f.contains("workload") == f.contains("file"))
    doc.fail(at, "a family has exactly one of \"workload\" and \"file\"");
  if (f.contains("workload")) {
    fam.workload = doc.string(f["workload"], at + "/workload");
    bool found = false;
    for (const auto& w : workloads::list_workloads()) found = found || w.name == fam.workload;
    if (!found) doc.fail(at + "/workload", "unknown workload '" + fam.workload + "'");
  } else {
    fam.file = doc.string(f["file"], at + "/file");
    if (fam.file.is_relative()) fam.file = base / fam.file;
  }
  fam.name = f.contains("name")
                 ? doc.string(f["name"], at + "/name")
                 : (fam.workload.empty() ? fam.file.filename().string() : fam.workload);
  if (f.contains("params")) {
    doc.expect_object(f["params"], at + "/params");
    if (!fam.workload.empty() || f["params"].empty())
      for (const auto& [k, v] : f["params"].items())
        fam.params[k] = parse_param(doc, v, at + "/params/" + k);
    else
      doc.fail(at + "/params", "a graph file takes no parameters");
  }
  fam.training =
      list_of<bool>(doc, f, at, "training", {false}, [&](const json& j, const std::string& p) {
        if (!j.is_boolean()) doc.fail(p, "expected true or false");
        return j.get<bool>();
      });
  fam.devices = list_of<int>(doc, f, at, "devices", {4}, [&](const json& j, const std::string& p) {
    return static_cast<int>(doc.integer(j, p, 1, kMaxDevices));
  });
  fam.hardware = list_of<std::string>(doc, f, at, "hardware", {"reference"},
                                      [&](const json& j, const std::string& p) {
                                        std::string h = doc.string(j, p);
                                        if (h != "reference") {
                                          try {
                                            load_hardware_profile(h);
                                          } catch (const InputError& e) {
                                            doc.fail(p, e.what());
                                          }
                                        }
                                        return h;
                                      });
  if (f.contains("weight")) {
    fam.weight = doc.number(f["weight"], at + "/weight", 0);
    if (!(fam.weight > 0)) doc.fail(at + "/weight", "weight must be positive");
  }
  return fam;
}

// A drawn problem's parameters.
struct Draw {
  std::map<std::string, std::string> params;
  bool training = false;
  int devices = 4;
  std::string hardware = "reference";
};

template <class T>
T pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

// A range's value as a parameter string (rounded for integer ranges).
std::string range_value(const ParamChoice& c, double x) {
  if (c.integer) return std::to_string(static_cast<std::int64_t>(std::llround(x)));
  return sig_text(x, 4);
}

std::string draw_value(const ParamChoice& c, std::mt19937_64& rng) {
  if (!c.range) return pick(c.values, rng);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  return range_value(c, c.log
                            ? std::exp(std::log(c.lo) + u(rng) * (std::log(c.hi) - std::log(c.lo)))
                            : c.lo + u(rng) * (c.hi - c.lo));
}

std::string problem_name(const ProblemFamily& f, const Draw& d) {
  std::string s = f.name;
  if (!d.params.empty()) {
    s += "[";
    bool first = true;
    for (const auto& [k, v] : d.params) {
      s += (first ? "" : ",") + k + "=" + v;
      first = false;
    }
    s += "]";
  }
  if (d.training) s += "+bwd";
  return s + "/" + d.hardware + "x" + std::to_string(d.devices);
}

// Builds the graph and problem of a draw; InputError when the draw is invalid.
PoolProblem instantiate(const ProblemFamily& f, const Draw& d, std::int64_t max_ops) {
  PoolProblem p;
  p.family = f.name;
  p.name = problem_name(f, d);
  if (f.workload.empty()) {
    p.graph = std::make_unique<Graph>(load_graph(f.file));
  } else {
    workloads::WorkloadSpec w;
    w.name = f.workload;
    w.params = d.params;
    w.devices = d.devices;
    w.training = d.training;
    p.graph = std::make_unique<Graph>(workloads::generate_workload(w));
  }
  if (max_ops > 0 && p.graph->num_nodes() > max_ops)
    throw InputError(p.name + ": " + std::to_string(p.graph->num_nodes()) + " ops (max_ops " +
                     std::to_string(max_ops) + ")");
  const Platform platform = d.hardware == "reference"
                                ? Platform::reference(d.devices)
                                : Platform::hardware(load_hardware_profile(d.hardware), d.devices);
  p.problem = std::make_unique<Problem>(*p.graph, platform);
  return p;
}

Draw draw(const ProblemFamily& f, std::mt19937_64& rng) {
  Draw d;
  for (const auto& [k, c] : f.params) d.params[k] = draw_value(c, rng);
  d.training = pick(f.training, rng);
  d.devices = pick(f.devices, rng);
  d.hardware = pick(f.hardware, rng);
  return d;
}

json family_json(const ProblemFamily& f) {
  json j;
  j["name"] = f.name;
  if (f.workload.empty())
    j["file"] = std::filesystem::absolute(f.file).lexically_normal().string();
  else
    j["workload"] = f.workload;
  if (!f.params.empty()) {
    json p = json::object();
    for (const auto& [k, c] : f.params) {
      if (c.range)
        p[k] = {{"min", c.lo}, {"max", c.hi}, {"log", c.log}, {"int", c.integer}};
      else
        p[k] = c.values;
    }
    j["params"] = p;
  }
  j["training"] = f.training;
  j["devices"] = f.devices;
  j["hardware"] = f.hardware;
  j["weight"] = f.weight;
  return j;
}

}  // namespace

std::string spec_json_text(const PretrainSpec& s) {
  json j;
  j["pool"] = s.pool;
  j["max_ops"] = s.max_ops;
  j["seed"] = s.seed;
  j["families"] = json::array();
  for (const auto& f : s.families) j["families"].push_back(family_json(f));
  j["held_out"] = json::array();
  for (const auto& f : s.held_out) j["held_out"].push_back(family_json(f));
  return j.dump();
}

PretrainSpec parse_pretrain_spec(const std::string& text, const std::string& file,
                                 const std::filesystem::path& base) {
  const JsonDoc doc(text, file);
  const json& r = doc.root();
  doc.expect_object(r, "");
  static const std::set<std::string> known = {"pool",     "max_ops",  "seed",
                                              "families", "held_out", "comment"};
  for (const auto& [k, v] : r.items())
    if (!known.count(k)) doc.fail("/" + k, "unknown member '" + k + "'");
  PretrainSpec s;
  if (r.contains("pool")) s.pool = static_cast<int>(doc.integer(r["pool"], "/pool", 1, 100000));
  if (r.contains("max_ops")) s.max_ops = doc.integer(r["max_ops"], "/max_ops", 0, 100'000'000);
  if (r.contains("seed"))
    s.seed = static_cast<std::uint64_t>(doc.integer(r["seed"], "/seed", 0, INT64_MAX));
  const json& fams = doc.require(r, "", "families");
  doc.expect_array(fams, "/families");
  if (fams.empty()) doc.fail("/families", "at least one family is needed");
  for (std::size_t i = 0; i < fams.size(); ++i)
    s.families.push_back(parse_family(doc, fams[i], "/families/" + std::to_string(i), base));
  if (r.contains("held_out")) {
    doc.expect_array(r["held_out"], "/held_out");
    for (std::size_t i = 0; i < r["held_out"].size(); ++i)
      s.held_out.push_back(
          parse_family(doc, r["held_out"][i], "/held_out/" + std::to_string(i), base));
  }
  s.text = text;
  return s;
}

PretrainSpec load_pretrain_spec(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  return parse_pretrain_spec(text, path.string(), path.parent_path());
}

std::string default_pretrain_spec_text() {
  for (const auto& [name, text] : detail::pretrain_spec_files())
    if (name == "pretrain-spec.json") return std::string(text);
  throw std::logic_error("the default pretraining spec is not embedded");
}

ProblemFamily held_out_file(const std::filesystem::path& file, int devices) {
  ProblemFamily f;
  f.name = file.filename().string();
  f.file = file;
  f.devices = {devices};
  return f;
}

std::vector<PoolProblem> draw_pool(const PretrainSpec& spec,
                                   const std::vector<std::uint64_t>& excluded) {
  std::mt19937_64 rng(spec.seed);
  double total = 0;
  for (const auto& f : spec.families) total += f.weight;
  std::vector<PoolProblem> pool;
  std::set<std::string> names;
  std::string last_error;
  for (int i = 0; i < spec.pool; ++i) {
    bool ok = false;
    for (int attempt = 0; attempt < kMaxDraws && !ok; ++attempt) {
      double r = std::uniform_real_distribution<double>(0.0, total)(rng);
      std::size_t k = 0;
      while (k + 1 < spec.families.size() && r >= spec.families[k].weight)
        r -= spec.families[k++].weight;
      const Draw d = draw(spec.families[k], rng);
      try {
        PoolProblem p = instantiate(spec.families[k], d, spec.max_ops);
        const std::uint64_t fp = graph_fingerprint(*p.graph);
        if (std::find(excluded.begin(), excluded.end(), fp) != excluded.end()) {
          last_error = p.name + " is a held-out graph";
          continue;
        }
        if (!names.insert(p.name).second) continue;  // the same draw twice
        pool.push_back(std::move(p));
        ok = true;
      } catch (const InputError& e) {
        last_error = e.what();
      }
    }
    if (!ok)
      throw InputError("pretraining spec: could not draw problem " + std::to_string(i + 1) +
                       " of " + std::to_string(spec.pool) + " in " + std::to_string(kMaxDraws) +
                       " tries (last: " + last_error + ")");
  }
  return pool;
}

std::vector<PoolProblem> held_out_problems(const PretrainSpec& spec) {
  std::vector<PoolProblem> out;
  for (const ProblemFamily& f : spec.held_out)
    for (int p : f.devices)
      for (const std::string& h : f.hardware)
        for (bool t : f.training) {
          Draw d;
          for (const auto& [k, c] : f.params)
            d.params[k] = c.range ? range_value(c, c.lo) : c.values.front();
          d.devices = p;
          d.hardware = h;
          d.training = t;
          out.push_back(instantiate(f, d, 0));
        }
  return out;
}

}  // namespace doppler
