#pragma once
// Text for XML and SVG documents.
#include <string>

namespace doppler {

/// `s` with &, <, > and " replaced by their XML entities (for text and attribute values).
std::string xml_escape(const std::string& s);

}  // namespace doppler
