#include "doppler/util/enum_names.hpp"

#include <string>

#include "doppler/util/error.hpp"

namespace doppler {

void throw_unknown_name(std::string_view what, std::string_view name,
                        const std::vector<std::string_view>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? " or " : ", ";
    list += names[i];
  }
  throw InputError("unknown " + std::string(what) + " '" + std::string(name) + "' (expected " +
                   list + ")");
}

}  // namespace doppler
