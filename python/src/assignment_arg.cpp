// Assignments given from Python: checked, never cast silently (see bindings.hpp).
#include <cmath>
#include <string>

#include "bindings.hpp"

#include "doppler/util/error.hpp"

namespace doppler::python {
namespace {

// "assignment[3] (op 'conv1')" or "assignments[2, 3] (op 'conv1')".
std::string where(const std::string& what, std::int64_t row, std::int64_t col, const Graph& g) {
  const std::string index =
      row < 0 ? std::to_string(col) : std::to_string(row) + ", " + std::to_string(col);
  return what + "[" + index + "] (op '" + g.label(static_cast<NodeId>(col)) + "')";
}

// Copies n values starting at `data` into out, each a device id in 0..devices-1.
template <typename T>
void copy_checked(const T* data, std::int64_t n, std::int64_t row, const PyProblem& p,
                  const std::string& what, DeviceId* out) {
  const int devices = p.problem->devices();
  for (std::int64_t v = 0; v < n; ++v) {
    const T x = data[v];
    bool ok = true;
    if constexpr (std::is_floating_point_v<T>) ok = std::isfinite(x) && std::floor(x) == x;
    if (!ok)
      throw InputError(where(what, row, v, *p.graph) + " is " +
                       py::str(py::float_(static_cast<double>(x))).cast<std::string>() +
                       ", not a whole number: devices are integers 0.." +
                       std::to_string(devices - 1));
    if (!(x >= 0 && x < static_cast<T>(devices)))
      throw InputError(where(what, row, v, *p.graph) + " is device " +
                       py::str(py::cast(x)).cast<std::string>() + "; devices are 0.." +
                       std::to_string(devices - 1));
    out[v] = static_cast<DeviceId>(x);
  }
}

// The array's values as one of the element types copy_checked reads (a converted copy).
template <typename T>
py::array_t<T> as(const py::array& a) {
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
}

}  // namespace

std::vector<DeviceId> assignment_rows(const py::handle& value, const PyProblem& p, int ndim,
                                      const std::string& what, std::int64_t& rows) {
  const py::array a = py::array::ensure(value);
  if (!a) throw InputError(what + " must be an array of device ids (numpy array or list)");
  const std::int64_t n = p.graph->num_nodes();
  const char kind = a.dtype().kind();
  if (a.ndim() != ndim)
    throw InputError(what +
                     (ndim == 1 ? " must be 1-D (one device per op)"
                                : " must be a K x N array (one row per assignment)") +
                     ", found " + std::to_string(a.ndim()) + " dimensions");
  if (kind != 'i' && kind != 'u' && kind != 'f')
    throw InputError(what + " must hold integer device ids, found dtype " +
                     py::str(a.dtype()).cast<std::string>());
  const std::int64_t len = a.shape(ndim - 1);
  if (len != n && a.size() > 0)
    throw InputError(what + " has " + std::to_string(len) +
                     " entries per assignment; the graph has " + std::to_string(n) + " ops");
  rows = ndim == 1 ? 1 : a.shape(0);
  if (ndim == 2 && rows > 0 && len != n)
    throw InputError(what + " rows must have " + std::to_string(n) + " entries");
  std::vector<DeviceId> out(static_cast<std::size_t>(rows * n));
  const auto fill = [&](const auto& typed) {
    for (std::int64_t r = 0; r < rows; ++r)
      copy_checked(typed.data() + r * n, n, ndim == 1 ? -1 : r, p, what, out.data() + r * n);
  };
  if (kind == 'i')
    fill(as<std::int64_t>(a));
  else if (kind == 'u')
    fill(as<std::uint64_t>(a));
  else
    fill(as<double>(a));
  return out;
}

}  // namespace doppler::python
