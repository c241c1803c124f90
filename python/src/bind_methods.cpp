// doppler.methods(): the placement methods of the registry and their options.
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"

#include "doppler/heuristics/placer.hpp"

namespace doppler::python {

namespace {

// The option's default as a Python value of its type; None when it has no fixed default.
py::object default_of(const PlacerOption& o) {
  if (!has_fixed_default(o)) return py::none();
  if (o.type == OptionType::number) return py::float_(std::stod(o.default_value));
  if (o.type == OptionType::integer) return py::int_(std::stoll(o.default_value));
  return py::str(o.default_value);
}

// One option as {name, type, default, choices, description}.
py::dict option_dict(const PlacerOption& o) {
  return py::dict(py::arg("name") = o.name, py::arg("type") = std::string(option_type_name(o.type)),
                  py::arg("default") = default_of(o), py::arg("choices") = o.choices,
                  py::arg("description") = o.description);
}

// One method as {name, description, deterministic, learned, params}.
py::dict method_dict(const PlacerInfo& i) {
  py::list params;
  for (const PlacerOption& o : i.options) params.append(option_dict(o));
  return py::dict(py::arg("name") = i.name, py::arg("description") = i.description,
                  py::arg("deterministic") = i.deterministic, py::arg("learned") = i.learned,
                  py::arg("params") = params);
}

}  // namespace

void bind_methods(py::module_& m) {
  m.def(
      "methods",
      [] {
        py::list out;
        for (const PlacerInfo& i : placer_infos()) out.append(method_dict(i));
        return out;
      },
      "Every placement method of the registry, in `--methods all` order, the learned ones last:\n"
      "a list of dicts {name, description, deterministic, learned, params}. `params` lists the\n"
      "options of a spec \"name:key=value,...\", each a dict {name, type, default, choices,\n"
      "description}: type is 'number', 'integer', 'choice', 'string' or 'path'; default is a\n"
      "float, int or str of that type, or None when the default is derived (the description\n"
      "says from what: the budget, the preset) or absent; choices lists a choice's values.");
}

}  // namespace doppler::python
