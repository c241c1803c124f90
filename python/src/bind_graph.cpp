// doppler.Graph and the ways to make one: files, workload generators, ONNX models, arrays.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "bindings.hpp"
#include "watch.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/op_kind.hpp"
#include "doppler/hardware/platform_for.hpp"
#include "doppler/onnx/import.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/dtype.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler::python {
namespace {

GraphPtr load(const std::filesystem::path& path) {
  py::gil_scoped_release unlocked;
  return std::make_shared<Graph>(load_graph(path));
}

// A decimal string for a workload parameter given as a Python int, float or str.
std::string param_string(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) throw InputError("generate: a parameter cannot be a bool");
  if (py::isinstance<py::int_>(v)) return std::to_string(v.cast<long long>());
  if (py::isinstance<py::float_>(v)) return py::str(v).cast<std::string>();
  return v.cast<std::string>();
}

GraphPtr generate(const std::string& workload, int devices, bool training, const std::string& dtype,
                  const py::kwargs& params) {
  workloads::WorkloadSpec spec;
  spec.name = workload;
  spec.devices = devices;
  spec.training = training;
  spec.dtype = dtype;
  for (const auto& [k, v] : params) spec.params[k.cast<std::string>()] = param_string(v);
  py::gil_scoped_release unlocked;
  return std::make_shared<Graph>(workloads::generate_workload(spec));
}

GraphPtr import_model(const std::filesystem::path& path, int devices, const std::string& dtype,
                      const std::map<std::string, std::vector<std::int64_t>>& input_shapes,
                      const std::string& weights, const std::string& partition) {
  onnx_import::ImportOptions o;
  o.devices = devices;
  if (weights != "embedded" && weights != "generated")
    throw InputError("import_onnx: weights must be embedded or generated, not '" + weights + "'");
  o.generated_weights = weights == "generated";
  if (partition != "auto" && partition != "whole")
    throw InputError("import_onnx: partition must be auto or whole, not '" + partition + "'");
  o.whole_ops = partition == "whole";
  const auto dt = workloads::parse_dtype(dtype);
  if (!dt) throw InputError("import_onnx: dtype must be f32, f16 or bf16, not '" + dtype + "'");
  o.dtype = *dt;
  o.input_shapes = input_shapes;
  Watch watch;  // Ctrl-C stops the import between two ONNX nodes
  o.cancel = &watch.stop_flag();
  GraphPtr g;
  watch.run([&] { g = std::make_shared<Graph>(onnx_import::import_onnx(path, o).graph); });
  return g;
}

GraphPtr from_arrays(py::array_t<double, py::array::c_style | py::array::forcecast> compute,
                     py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> edges,
                     py::array_t<double, py::array::c_style | py::array::forcecast> transfer,
                     const std::string& name,
                     const std::optional<std::vector<std::string>>& names) {
  if (compute.ndim() != 1) throw InputError("graph_from_arrays: compute must be 1-D (one per op)");
  if (edges.size() > 0 && (edges.ndim() != 2 || edges.shape(1) != 2))
    throw InputError("graph_from_arrays: edges must be an E x 2 array of (src, dst)");
  const py::ssize_t e = edges.size() / 2;
  if (transfer.ndim() != 1 || transfer.shape(0) != e)
    throw InputError("graph_from_arrays: transfer must be 1-D with one cost per edge");
  if (names && static_cast<py::ssize_t>(names->size()) != compute.shape(0))
    throw InputError("graph_from_arrays: names must have one name per op (" +
                     std::to_string(compute.shape(0)) + "), found " +
                     std::to_string(names->size()));
  GraphBuilder b;
  for (py::ssize_t i = 0; i < compute.shape(0); ++i) {
    Node n;
    n.compute_cost = compute.at(i);
    if (names) n.name = (*names)[static_cast<std::size_t>(i)];
    b.add_node(std::move(n));
  }
  const auto* ed = edges.data();
  for (py::ssize_t k = 0; k < e; ++k)
    b.add_edge(ed[2 * k], ed[2 * k + 1], std::nullopt, transfer.at(k));
  b.set_meta({name, "python", {}});
  try {
    return std::make_shared<Graph>(b.build());
  } catch (const GraphError& err) {  // name the op or edge as the caller knows it
    std::string where;
    const auto label = [&](std::int64_t v) {
      return names && v >= 0 && v < compute.shape(0)
                 ? "'" + (*names)[static_cast<std::size_t>(v)] + "'"
                 : "op " + std::to_string(v);
    };
    if (err.node() >= 0) where = " (" + label(err.node()) + ")";
    if (err.edge() >= 0)
      where = " (edge " + std::to_string(err.edge()) + ": " + label(ed[2 * err.edge()]) + " -> " +
              label(ed[2 * err.edge() + 1]) + ")";
    throw InputError("graph_from_arrays: " + std::string(err.what()) + where);
  }
}

py::array_t<std::int64_t> edge_array(const Graph& g) {
  py::array_t<std::int64_t> a({static_cast<py::ssize_t>(g.num_edges()), py::ssize_t{2}});
  auto r = a.mutable_unchecked<2>();
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    r(e, 0) = g.edge(e).src;
    r(e, 1) = g.edge(e).dst;
  }
  return a;
}

py::array_t<double> compute_costs(const Graph& g) {
  std::vector<double> c;
  for (const Node& n : g.nodes()) c.push_back(n.compute_cost.value_or(std::nan("")));
  return to_array<double>(c);
}

py::array_t<double> transfer_costs(const Graph& g) {
  std::vector<double> c;
  for (EdgeId e = 0; e < g.num_edges(); ++e)
    c.push_back(g.has_reference_costs() || g.edge(e).transfer_cost ||
                        g.node(g.edge(e).src).transfer_cost
                    ? g.edge_transfer_cost(e)
                    : std::nan(""));
  return to_array<double>(c);
}

double lower_bound(const Graph& g, int devices, const std::optional<std::string>& hardware) {
  const Problem p(g, platform_for(g, hardware.value_or(""), devices));
  return p.lower_bound();
}

// Pickled state: the doppler-graph JSON text, which keeps every field of the graph.
py::tuple graph_state(const Graph& g) {
  return py::make_tuple(1, format_graph_json(g));
}

GraphPtr graph_from_state(const py::tuple& t) {
  if (t.size() != 2 || t[0].cast<int>() != 1)
    throw InputError("Graph: unpickling a state of another version");
  return std::make_shared<Graph>(parse_graph_json(t[1].cast<std::string>(), "<pickle>"));
}

void save(const Graph& g, const std::filesystem::path& path,
          const std::optional<std::string>& format) {
  GraphFormat f{};
  if (format) {
    const auto parsed = parse_graph_format(*format);
    if (!parsed) throw InputError("save: unknown format '" + *format + "' (txt, json, dot)");
    f = *parsed;
  } else {
    f = graph_format_of(path);
  }
  save_graph(path, g, f);
}

void bind_graph_class(py::module_& m) {
  py::class_<Graph, GraphPtr>(m, "Graph", "An immutable DAG of block operations (ops 0..N-1).")
      .def_property_readonly(
          "name", [](const Graph& g) { return g.meta().name; },
          "the graph's name (a file's stem, a workload's name)")
      .def_property_readonly(
          "origin", [](const Graph& g) { return g.meta().origin; },
          "where it came from: reference-text, json, dot, stg, generated, onnx, "
          "python")
      .def_property_readonly(
          "params", [](const Graph& g) { return g.meta().params; },
          "workload parameters (str -> str)")
      .def_property_readonly("num_ops", &Graph::num_nodes,
                             "ops N: the length of an assignment array")
      .def_property_readonly("num_edges", &Graph::num_edges, "distinct edges E")
      .def_property_readonly("edges", &edge_array, "int64 array E x 2 of (src, dst), sorted")
      .def_property_readonly("compute_cost", &compute_costs,
                             "reference-model compute cost per op (abstract units; NaN where the "
                             "graph has none: use flops with a hardware profile)")
      .def_property_readonly("transfer_cost", &transfer_costs,
                             "reference-model cost per edge of moving its data to another "
                             "device (NaN where none)")
      .def_property_readonly(
          "flops",
          [](const Graph& g) {
            std::vector<double> f;
            for (const Node& n : g.nodes()) f.push_back(n.flops);
            return to_array<double>(f);
          },
          "FLOPs per op")
      .def_property_readonly(
          "out_bytes",
          [](const Graph& g) {
            std::vector<double> f;
            for (const Node& n : g.nodes()) f.push_back(n.out_bytes);
            return to_array<double>(f);
          },
          "bytes of each op's output")
      .def_property_readonly(
          "kinds",
          [](const Graph& g) {
            py::list out;
            for (const Node& n : g.nodes()) out.append(std::string(op_kind_name(n.kind)));
            return out;
          },
          "op kind per op: einsum, aggregate, elementwise, input, fill, select, squeeze, "
          "complexer, other")
      .def_property_readonly(
          "names",
          [](const Graph& g) {
            py::list out;
            for (NodeId v = 0; v < g.num_nodes(); ++v) out.append(g.label(v));
            return out;
          },
          "label per op (its name, or #id)")
      .def_property_readonly("has_reference_costs", &Graph::has_reference_costs,
                             "True when the reference model can simulate it (no hardware needed)")
      .def(
          "topological_order",
          [](const Graph& g) { return to_array<std::int64_t>(g.topo_order()); },
          "ops in the canonical topological order (smallest ready id first)")
      .def("lower_bound", &lower_bound, py::arg("devices"), py::arg("hardware") = py::none(),
           "makespan lower bound on `devices` devices (critical path without transfers, work "
           "over devices), in the problem's units")
      .def("save", &save, py::arg("path"), py::arg("format") = py::none(),
           "write the graph (format from the extension: .txt, .json, .dot, or format='txt', "
           "'json', 'dot'), atomically; path: str or os.PathLike")
      .def(py::pickle(&graph_state, &graph_from_state))
      .def("__repr__", [](const Graph& g) {
        return "<doppler.Graph '" + g.meta().name + "': " + std::to_string(g.num_nodes()) +
               " ops, " + std::to_string(g.num_edges()) + " edges>";
      });
}

}  // namespace

void bind_graph(py::module_& m) {
  bind_graph_class(m);
  m.def("load_graph", &load, py::arg("path"),
        "Load a graph file (str or os.PathLike): reference .txt, doppler-graph .json, Graphviz "
        ".dot/.gv, STG .stg; another extension is refused. Bad input raises ValueError naming "
        "the file and line.");
  m.def("generate", &generate, py::arg("workload"), py::kw_only(), py::arg("devices") = 4,
        py::arg("training") = false, py::arg("dtype") = "",
        "Generate a workload by name (doppler.workloads() lists them); parameters as keyword "
        "arguments, e.g. generate('random-dag', devices=8, ops=2000, seed=1).");
  m.def("import_onnx", &import_model, py::arg("path"), py::kw_only(), py::arg("devices") = 4,
        py::arg("dtype") = "f32",
        py::arg("input_shapes") = std::map<std::string, std::vector<std::int64_t>>{},
        py::arg("weights") = "embedded", py::arg("partition") = "auto",
        "Import an ONNX model (str or os.PathLike; external data files beside it) as a blocked "
        "graph partitioned for `devices` devices (4 by default, as generate); input_shapes: "
        "{input name: [dims]} for inputs with dynamic dimensions; weights: 'embedded' (the "
        "model's) or 'generated' (seeded, each with its weight's mean and spread: no constants, "
        "as `doppler import --weights generated`); partition: 'auto' (every op in about "
        "`devices` blocks) or 'whole' (every op one block, placed whole on the devices). "
        "Ctrl-C stops a long import "
        "(KeyboardInterrupt).");
  m.def("graph_from_arrays", &from_arrays, py::arg("compute"), py::arg("edges"),
        py::arg("transfer"), py::arg("name") = "graph", py::arg("names") = py::none(),
        "A reference-model graph from arrays: compute cost per op (N), edges (E x 2 of src, "
        "dst), transfer cost per edge (E), paid when the ends are on different devices; names: "
        "a label per op (N strings), used by Graph.names and in error messages. Repeated "
        "(src, dst) pairs collapse into one edge that keeps the largest cost.");
  m.def(
      "workloads",
      [] {
        py::dict out;
        for (const auto& w : workloads::list_workloads()) {
          py::dict params;
          for (const auto& p : w.params) params[py::str(p.name)] = p.default_value;
          out[py::str(w.name)] =
              py::dict(py::arg("description") = w.description, py::arg("params") = params,
                       py::arg("training") = w.supports_training);
        }
        return out;
      },
      "The workload generators: name -> description, parameters with defaults, training.");
}

}  // namespace doppler::python
