#include "doppler/graph/io/assignment_json.hpp"

#include <fmt/format.h>

#include "doppler/util/error.hpp"
#include "doppler/util/json_doc.hpp"

namespace doppler {

using nlohmann::json;

Assignment parse_assignment_json(std::string_view text, const std::string& file, const Graph* g,
                                 int devices, const ReadLimits& limits) {
  JsonLimits jl;
  for (const char* member : {"", "device_of", "order"})
    jl.arrays.push_back({member, limits.max_ops, "entries", "DOPPLER_MAX_OPS"});
  const JsonDoc doc(std::string(text), file, jl);
  const json& root = doc.root();
  Assignment a;
  const json* list = nullptr;
  std::string list_ptr;
  if (root.is_array()) {
    list = &root;
    a.devices = devices;
  } else {
    doc.expect_format("doppler-assignment", 1);
    for (const auto& [key, val] : root.items()) {
      if (key != "format" && key != "version" && key != "devices" && key != "device_of" &&
          key != "order" && key != "method")
        doc.fail("/" + key, fmt::format("unknown field '{}'", key));
    }
    a.devices =
        static_cast<int>(doc.integer(doc.require(root, "", "devices"), "/devices", 1, kMaxDevices));
    if (devices > 0 && a.devices != devices)
      doc.fail("/devices", fmt::format("assignment is for {} devices, but {} were requested",
                                       a.devices, devices));
    list = &doc.require(root, "", "device_of");
    list_ptr = "/device_of";
    if (root.contains("method")) a.method = doc.string(root["method"], "/method");
  }
  doc.expect_array(*list, list_ptr);
  const std::int64_t max_dev = a.devices > 0 ? a.devices - 1 : kMaxDevices - 1;
  a.device_of.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i)
    a.device_of.push_back(static_cast<DeviceId>(
        doc.integer((*list)[i], fmt::format("{}/{}", list_ptr, i), 0, max_dev)));
  if (a.devices == 0) {
    DeviceId hi = 0;
    for (DeviceId d : a.device_of) hi = std::max(hi, d);
    a.devices = hi + 1;
  }
  if (root.is_object() && root.contains("order")) {
    const json& ord = root["order"];
    doc.expect_array(ord, "/order");
    const std::int64_t max_node = static_cast<std::int64_t>(a.device_of.size()) - 1;
    for (std::size_t i = 0; i < ord.size(); ++i)
      a.order.push_back(
          static_cast<NodeId>(doc.integer(ord[i], fmt::format("/order/{}", i), 0, max_node)));
  }
  if (g) {
    try {
      a.validate(*g, devices, file);
    } catch (const InputError& e) {
      throw InputError(file, doc.line_of(list_ptr), e.problem());
    }
  }
  return a;
}

std::string format_assignment_json(const Assignment& a) {
  std::string out = fmt::format(
      "{{\n  \"format\": \"doppler-assignment\",\n  \"version\": 1,\n  \"devices\": {},\n",
      a.devices);
  if (!a.method.empty()) out += fmt::format("  \"method\": {},\n", json(a.method).dump());
  out += fmt::format("  \"device_of\": {}", json(a.device_of).dump());
  if (!a.order.empty()) out += fmt::format(",\n  \"order\": {}", json(a.order).dump());
  out += "\n}\n";
  return out;
}

std::string format_assignment_json_line(const Assignment& a) {
  nlohmann::ordered_json j = {
      {"format", "doppler-assignment"}, {"version", 1}, {"devices", a.devices}};
  if (!a.method.empty()) j["method"] = a.method;
  j["device_of"] = a.device_of;
  if (!a.order.empty()) j["order"] = a.order;
  return j.dump();
}

}  // namespace doppler

namespace doppler {

std::vector<Assignment> parse_assignments_jsonl(std::string_view text, const std::string& file,
                                                const Graph& g, int devices,
                                                const ReadLimits& limits) {
  std::vector<Assignment> out;
  std::size_t start = 0;
  std::int64_t line = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    const std::string_view body = text.substr(start, end - start);
    start = end + 1;
    if (body.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      out.push_back(parse_assignment_json(body, file, &g, devices, limits));
    } catch (const InputError& e) {
      throw InputError(file, line, e.problem());
    }
  }
  if (out.empty())
    throw InputError(file, 0, "no assignments (expected one JSON assignment per line)");
  return out;
}

}  // namespace doppler
