#pragma once
// Graphviz's cgraph library as a DOT parser: one parse at a time (cgraph keeps global state),
// its messages captured instead of printed, and its errors turned into InputError.
#include <cgraph.h>

#include <mutex>
#include <string>

#include "dot_text.hpp"

namespace doppler::dot {

/// Holds cgraph for one parse: locks a process-wide mutex and captures cgraph's messages while
/// alive; the parsed graph lives as long as the reader.
class CgraphReader {
public:
  CgraphReader();
  ~CgraphReader();
  CgraphReader(const CgraphReader&) = delete;
  CgraphReader& operator=(const CgraphReader&) = delete;

  /// Parses `text` (its first graph). Throws InputError "FILE:LINE: problem" for a syntax error,
  /// for any cgraph warning (e.g. a badly delimited number) and for a text without a graph.
  Agraph_t* parse(const DotText& text, const std::string& file);

private:
  std::unique_lock<std::mutex> lock_;
  agusererrf previous_handler_ = nullptr;
  agerrlevel_t previous_level_ = AGWARN;
  Agraph_t* graph_ = nullptr;
};

/// Value of attribute `name` of a cgraph object; empty when it is not set.
std::string attribute(void* object, const char* name);

}  // namespace doppler::dot
