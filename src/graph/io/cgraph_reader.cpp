#include "cgraph_reader.hpp"

#include <cctype>

#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

// Exported by libcgraph (scan.l) but not declared in cgraph.h: flushes the lexer's buffer.
extern "C" void aglexbad(void);

namespace doppler::dot {

namespace {

std::mutex& cgraph_mutex() {
  static std::mutex m;
  return m;
}

// cgraph's messages of the current parse ("Error", ": ", text... in pieces).
std::string& captured() {
  static std::string messages;
  return messages;
}

int capture(char* piece) {
  if (captured().size() < 4096) captured() += piece;
  return 0;
}

// The first message, without its "Error: " / "Warning: " prefix, on one line.
std::string first_message(const std::string& all) {
  std::string_view m = all;
  for (const std::string_view prefix : {"Error: ", "Warning: "})
    if (m.substr(0, prefix.size()) == prefix) m.remove_prefix(prefix.size());
  m = m.substr(0, m.find('\n'));
  std::string out;
  for (const char c : m) out += std::iscntrl(static_cast<unsigned char>(c)) ? '?' : c;
  if (out.size() > 200) out = out.substr(0, 200) + "...";
  return out;
}

// Takes " in line N" (and the " of input" after it) out of `message`; returns N, or 0.
std::int64_t take_line(std::string& message) {
  const std::string key = " in line ";
  const auto at = message.find(key);
  if (at == std::string::npos) return 0;
  std::size_t end = at + key.size();
  while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
  std::int64_t line = 0;
  std::string why;
  if (!parse_int64(std::string_view(message).substr(at + key.size(), end - at - key.size()), line,
                   why))
    line = 0;
  if (message.compare(end, 9, " of input") == 0) end += 9;
  message.erase(at, end - at);
  return line;
}

}  // namespace

CgraphReader::CgraphReader() : lock_(cgraph_mutex()) {
  captured().clear();
  previous_handler_ = agseterrf(capture);
  previous_level_ = agseterr(AGWARN);  // every message goes to the handler, none to stderr
}

CgraphReader::~CgraphReader() {
  if (graph_) agclose(graph_);
  agseterrf(previous_handler_);
  agseterr(previous_level_);
  captured().clear();
}

Agraph_t* CgraphReader::parse(const DotText& text, const std::string& file) {
  aglexbad();          // drop what the lexer may hold from an earlier text
  agsetfile(nullptr);  // no file name in messages; line numbers from 1
  agreseterrors();
  graph_ = agmemread(text.for_cgraph().c_str());
  if (captured().empty() && graph_) return graph_;
  if (captured().empty())
    throw InputError(file, 0, "no graph in the file (expected 'digraph NAME { ... }')");
  std::string problem = first_message(captured());
  const std::int64_t line = take_line(problem);
  throw InputError(file, text.physical_line(line), problem);
}

std::string attribute(void* object, const char* name) {
  const char* v = agget(object, const_cast<char*>(name));
  return v ? std::string(v) : std::string();
}

}  // namespace doppler::dot
