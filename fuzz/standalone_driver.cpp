// A libFuzzer-compatible driver for compilers without libFuzzer (GCC): runs
// LLVMFuzzerTestOneInput on every seed, then on random mutations of the seeds (bit and byte
// changes, interesting integers, truncation, chunk erase / duplicate / insert, crossover between
// seeds, dictionary tokens) until -max_total_time. There is no coverage feedback: what it
// explores is the neighbourhood of the seeds, which for binary formats (checkpoints) is what
// corruption looks like. Understands libFuzzer's -max_total_time, -max_len, -runs, -seed,
// -timeout, -dict and -artifact_prefix (others are ignored); prints libFuzzer's final stats lines.
// On a crash (sanitizer report, signal, abort, timeout) the input is written to
// <artifact_prefix>crash-<hash> (or timeout-<hash>).
#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes g_current;                // the input being run, written out on a crash
std::string g_artifact_prefix;  // where crash inputs go

// Writes the current input to <prefix><kind>-<hash> (async-signal-safe enough for a dying
// process: open and write only).
bool g_running = false;  // an input is being run (not before the seeds, not at exit)

void write_artifact(const char* kind) {
  if (!g_running) return;
  std::uint64_t h = 1469598103934665603ULL;
  for (const std::uint8_t b : g_current) h = (h ^ b) * 1099511628211ULL;
  char path[4096];
  std::snprintf(path, sizeof path, "%s%s-%016llx", g_artifact_prefix.c_str(), kind,
                static_cast<unsigned long long>(h));
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (!g_current.empty()) (void)!::write(fd, g_current.data(), g_current.size());
    ::close(fd);
  }
  std::fprintf(stderr, "==standalone driver== Test unit written to %s\n", path);
}

void on_death() {
  write_artifact("crash");
}

void on_signal(int sig) {
  write_artifact(sig == SIGALRM ? "timeout" : "crash");
  if (sig == SIGALRM) ::_exit(70);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

Bytes read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Parses a libFuzzer dictionary: one "token" per line, with \\, \" and \xNN escapes.
std::vector<Bytes> read_dict(const std::string& path) {
  std::vector<Bytes> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find('"'), b = line.rfind('"');
    if (a == std::string::npos || b <= a) continue;
    Bytes t;
    for (std::size_t i = a + 1; i < b; ++i) {
      if (line[i] == '\\' && i + 1 < b) {
        if (line[i + 1] == 'x' && i + 3 < b) {
          t.push_back(static_cast<std::uint8_t>(std::stoi(line.substr(i + 2, 2), nullptr, 16)));
          i += 3;
        } else {
          t.push_back(static_cast<std::uint8_t>(line[++i]));
        }
      } else {
        t.push_back(static_cast<std::uint8_t>(line[i]));
      }
    }
    if (!t.empty()) out.push_back(std::move(t));
  }
  return out;
}

// One to four stacked random mutations of `in`.
Bytes mutate(Bytes m, std::mt19937_64& rng, const std::vector<Bytes>& seeds,
             const std::vector<Bytes>& dict, std::size_t max_len) {
  static const std::uint8_t kBytes[] = {0, 1, 0x7f, 0x80, 0xff, '0', '9', '-', '"', '{', '[', ','};
  static const std::uint64_t kInts[] = {
      0, 1, ~0ULL, 0x7fffffffULL, 0x80000000ULL, 0xffffffffULL, 0x7fffffffffffffffULL, 1ULL << 32};
  const auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  const int stacked = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < stacked; ++k) {
    const std::size_t pos = pick(m.size() + 1);
    switch (rng() % 10) {
      case 0:
        if (!m.empty()) m[pick(m.size())] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!m.empty()) m[pick(m.size())] = static_cast<std::uint8_t>(rng());
        break;
      case 2:
        if (!m.empty()) m[pick(m.size())] = kBytes[pick(std::size(kBytes))];
        break;
      case 3:
        m.resize(pick(m.size() + 1));
        break;
      case 4: {
        const std::size_t len =
            std::min<std::size_t>(1 + pick(64), m.size() - std::min(pos, m.size()));
        m.erase(m.begin() + static_cast<std::ptrdiff_t>(std::min(pos, m.size())),
                m.begin() + static_cast<std::ptrdiff_t>(std::min(pos, m.size()) + len));
        break;
      }
      case 5: {
        if (m.empty()) break;
        const std::size_t from = pick(m.size()),
                          len = std::min<std::size_t>(1 + pick(64), m.size() - from);
        const Bytes chunk(m.begin() + static_cast<std::ptrdiff_t>(from),
                          m.begin() + static_cast<std::ptrdiff_t>(from + len));
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(std::min(pos, m.size())), chunk.begin(),
                 chunk.end());
        break;
      }
      case 6:
        for (std::size_t i = 1 + pick(8); i > 0; --i)
          m.insert(m.begin() + static_cast<std::ptrdiff_t>(std::min(pos, m.size())),
                   static_cast<std::uint8_t>(rng()));
        break;
      case 7: {
        const std::uint64_t v = kInts[pick(std::size(kInts))];
        const std::size_t width = rng() % 2 ? 4 : 8;
        for (std::size_t i = 0; i < width && pos + i < m.size(); ++i)
          m[pos + i] = static_cast<std::uint8_t>(v >> (8 * i));
        break;
      }
      case 8: {
        const Bytes& other = seeds[pick(seeds.size())];
        if (other.empty() || m.empty()) break;
        const std::size_t from = pick(other.size()),
                          len = std::min<std::size_t>(1 + pick(256), other.size() - from);
        for (std::size_t i = 0; i < len && pos + i < m.size(); ++i) m[pos + i] = other[from + i];
        break;
      }
      default: {
        if (dict.empty()) break;
        const Bytes& t = dict[pick(dict.size())];
        if (rng() % 2)
          m.insert(m.begin() + static_cast<std::ptrdiff_t>(std::min(pos, m.size())), t.begin(),
                   t.end());
        else
          for (std::size_t i = 0; i < t.size() && pos + i < m.size(); ++i) m[pos + i] = t[i];
      }
    }
  }
  if (m.size() > max_len) m.resize(max_len);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  double max_time = 0;
  std::size_t max_len = 1 << 20;
  long long runs = -1;
  unsigned timeout = 0;
  std::uint64_t seed =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::vector<Bytes> seeds, dict;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&](const char* flag) -> const char* {
      const std::string f = std::string("-") + flag + "=";
      return a.rfind(f, 0) == 0 ? argv[i] + f.size() : nullptr;
    };
    if (const char* v = value("max_total_time"))
      max_time = std::atof(v);
    else if (const char* v = value("max_len"))
      max_len = std::strtoull(v, nullptr, 10);
    else if (const char* v = value("runs"))
      runs = std::atoll(v);
    else if (const char* v = value("seed"))
      seed = std::strtoull(v, nullptr, 10);
    else if (const char* v = value("timeout"))
      timeout = static_cast<unsigned>(std::atoi(v));
    else if (const char* v = value("artifact_prefix"))
      g_artifact_prefix = v;
    else if (const char* v = value("dict"))
      dict = read_dict(v);
    else if (a.rfind("-", 0) == 0)
      continue;  // other libFuzzer flags
    else if (std::filesystem::is_directory(a)) {
      for (const auto& e : std::filesystem::directory_iterator(a))
        if (e.is_regular_file()) seeds.push_back(read_bytes(e.path()));
    } else if (std::filesystem::is_regular_file(a)) {
      seeds.push_back(read_bytes(a));
    }
  }
  if (seeds.empty()) seeds.push_back({});
  for (Bytes& s : seeds)
    if (s.size() > max_len) s.resize(max_len);
  __sanitizer_set_death_callback(on_death);
  // SIGSEGV, SIGBUS and SIGFPE stay with AddressSanitizer, which prints the stack and then calls
  // on_death(); the others it does not handle by default.
  for (const int sig : {SIGABRT, SIGILL, SIGALRM}) ::signal(sig, on_signal);
  std::printf("INFO: standalone driver (GCC, no coverage feedback): %zu seeds, -seed=%llu\n",
              seeds.size(), static_cast<unsigned long long>(seed));
  std::fflush(stdout);

  std::mt19937_64 rng(seed);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  long long executed = 0;
  const auto run_one = [&](Bytes input) {
    g_current = std::move(input);
    g_running = true;
    if (timeout) ::alarm(timeout);
    LLVMFuzzerTestOneInput(g_current.data(), g_current.size());
    if (timeout) ::alarm(0);
    g_running = false;
    ++executed;
  };
  for (const Bytes& s : seeds) run_one(s);
  double next_report = 1;
  while ((runs < 0 || executed < runs) && (max_time <= 0 ? runs >= 0 : elapsed() < max_time)) {
    run_one(mutate(seeds[rng() % seeds.size()], rng, seeds, dict, max_len));
    if (elapsed() >= next_report) {
      std::printf("#%lld\tpulse  exec/s: %.0f\n", executed, executed / elapsed());
      std::fflush(stdout);
      next_report *= 2;
    }
  }
  const double t = elapsed();
  std::printf("#%lld\tDONE   exec/s: %.0f\n", executed, t > 0 ? executed / t : 0.0);
  std::printf("stat::number_of_executed_units: %lld\n", executed);
  std::printf("stat::average_exec_per_sec:     %.0f\n", t > 0 ? executed / t : 0.0);
  return 0;
}
