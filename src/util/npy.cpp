#include "doppler/util/npy.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 62;

// The element types read_npy() converts to float.
enum class NpyType { f4, f8, i8, i4, b1, u1 };

struct TypeInfo {
  std::string_view descr;
  NpyType type;
  std::size_t size;
};

constexpr TypeInfo kTypes[] = {{"<f4", NpyType::f4, 4}, {"<f8", NpyType::f8, 8},
                               {"<i8", NpyType::i8, 8}, {"<i4", NpyType::i4, 4},
                               {"|b1", NpyType::b1, 1}, {"|u1", NpyType::u1, 1}};

// Little-endian unsigned integer of `n` bytes at `p`.
std::uint64_t load_le(const char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

// A value of the header dict: a string, a boolean or a tuple of integers.
struct HeaderValue {
  enum class Kind { string, boolean, tuple } kind = Kind::string;
  std::string text;
  bool flag = false;
  std::vector<std::int64_t> items;
};

// Recursive-descent parser of the header, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  // Parses the whole header into (descr, fortran_order, shape).
  void parse(std::string& descr, bool& fortran_order, std::vector<std::int64_t>& shape) {
    std::optional<HeaderValue> d, f, sh;
    skip_ws();
    expect('{', "the header to start with '{'");
    skip_ws();
    while (peek() != '}') {
      const std::size_t key_at = i_;
      const std::string key = string_literal();
      skip_ws();
      expect(':', "':' after a key");
      skip_ws();
      std::optional<HeaderValue>* slot = key == "descr"           ? &d
                                         : key == "fortran_order" ? &f
                                         : key == "shape"         ? &sh
                                                                  : nullptr;
      if (!slot)
        fail(
            fmt::format("unexpected key {} at byte {} of the header (expected 'descr', "
                        "'fortran_order' and 'shape')",
                        quote_token(key), key_at));
      if (*slot) fail(fmt::format("duplicate key '{}' in the header", key));
      *slot = value();
      skip_ws();
      if (peek() == ',') {
        ++i_;
        skip_ws();
        continue;
      }
      if (peek() != '}') fail(found("',' or '}' after a value"));
    }
    ++i_;
    skip_ws();
    if (i_ != s_.size()) fail(found("only blanks after the closing '}'"));
    for (const auto& [slot, key] :
         {std::pair{&d, "descr"}, std::pair{&f, "fortran_order"}, std::pair{&sh, "shape"}})
      if (!*slot) fail(fmt::format("the header has no '{}' key", key));
    if (d->kind != HeaderValue::Kind::string) fail("'descr' must be a string such as '<f4'");
    if (f->kind != HeaderValue::Kind::boolean) fail("'fortran_order' must be True or False");
    if (sh->kind != HeaderValue::Kind::tuple)
      fail("'shape' must be a tuple of integers such as (3, 4)");
    descr = d->text;
    fortran_order = f->flag;
    shape = sh->items;
  }

private:
  [[noreturn]] void fail(const std::string& problem) const { throw InputError(name_, 0, problem); }

  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }

  // "expected WHAT at byte N of the header, found ..."
  std::string found(const std::string& what) const {
    if (i_ >= s_.size()) return fmt::format("expected {}, found the end of the header", what);
    return fmt::format("expected {} at byte {} of the header, found {}", what, i_,
                       quote_token(s_.substr(i_), 12));
  }

  void expect(char c, const std::string& what) {
    if (peek() != c) fail(found(what));
    ++i_;
  }

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }

  std::string string_literal() {
    const char q = peek();
    if (i_ >= s_.size() || (q != '\'' && q != '"')) fail(found("a quoted string"));
    const std::size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != q) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '\\' || c == '\n' || c < 0x20 || c >= 0x7f)
        fail(fmt::format("unsupported character in a string at byte {} of the header", i_));
      ++i_;
    }
    if (i_ >= s_.size()) fail("unterminated string in the header");
    return std::string(s_.substr(start, i_++ - start));
  }

  std::int64_t integer() {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    if (i_ == start) fail(found("a non-negative integer"));
    const std::string_view digits = s_.substr(start, i_ - start);
    if (digits.size() > 1 && digits[0] == '0')
      fail(fmt::format("integer {} with a leading zero in the shape", quote_token(digits)));
    std::int64_t v = 0;
    std::string why;
    if (!parse_int64(digits, v, why) || v > kMaxExtent)
      fail(fmt::format("extent {} in the shape is too large", quote_token(digits)));
    return v;
  }

  HeaderValue value() {
    HeaderValue v;
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = HeaderValue::Kind::string;
      v.text = string_literal();
      return v;
    }
    if (c == '(') {
      v.kind = HeaderValue::Kind::tuple;
      ++i_;
      skip_ws();
      bool trailing_comma = false;
      while (peek() != ')') {
        if (v.items.size() >= kMaxNpyRank)
          fail(fmt::format("the shape has more than {} dimensions", kMaxNpyRank));
        v.items.push_back(integer());
        skip_ws();
        trailing_comma = false;
        if (peek() == ',') {
          ++i_;
          skip_ws();
          trailing_comma = true;
          continue;
        }
        if (peek() != ')') fail(found("',' or ')' in the shape"));
      }
      if (v.items.size() == 1 && !trailing_comma)
        fail("a one-dimensional shape needs a trailing comma, as in (3,)");
      ++i_;
      return v;
    }
    for (const auto& [word, flag] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
      if (s_.substr(i_, word.size()) == word) {
        i_ += word.size();
        const char next = peek();
        if ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
            (next >= '0' && next <= '9') || next == '_')
          fail(found("True, False, a string or a tuple"));
        v.kind = HeaderValue::Kind::boolean;
        v.flag = flag;
        return v;
      }
    fail(found("True, False, a string or a tuple"));
  }

  std::string_view s_;
  const std::string& name_;
  std::size_t i_ = 0;
};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace

NpyArray parse_npy(std::string_view bytes, const std::string& name) {
  const auto fail = [&](const std::string& problem) { throw InputError(name, 0, problem); };
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic)
    fail("not a NumPy .npy file (no \\x93NUMPY magic string)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  const auto minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(fmt::format("unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", major,
                     minor));
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_bytes) fail("truncated .npy header");
  const std::uint64_t header_len = load_le(bytes.data() + 8, len_bytes);
  if (header_len > kMaxNpyHeaderBytes)
    fail(fmt::format("header of {} bytes, larger than the limit of {} bytes", header_len,
                     kMaxNpyHeaderBytes));
  const std::size_t data_at = 8 + len_bytes + static_cast<std::size_t>(header_len);
  if (bytes.size() < data_at)
    fail(fmt::format("truncated .npy header ({} bytes announced, {} present)", header_len,
                     bytes.size() - 8 - len_bytes));
  std::string descr;
  bool fortran_order = false;
  NpyArray out;
  HeaderParser(bytes.substr(8 + len_bytes, static_cast<std::size_t>(header_len)), name)
      .parse(descr, fortran_order, out.shape);
  const TypeInfo* type = nullptr;
  for (const TypeInfo& t : kTypes)
    if (t.descr == descr) type = &t;
  if (!type)
    fail(fmt::format("unsupported dtype {} (supported: <f4, <f8, <i8, <i4, |b1, |u1)",
                     quote_token(descr)));
  if (fortran_order)
    fail("fortran_order is True: only C-order arrays are supported (save np.ascontiguousarray)");
  std::uint64_t numel = 1;
  for (const std::int64_t e : out.shape) {
    const auto ue = static_cast<std::uint64_t>(e);
    if (ue != 0 && numel > static_cast<std::uint64_t>(kMaxExtent) / ue)
      fail(fmt::format("shape {} has too many elements", shape_text(out.shape)));
    numel *= ue;
  }
  const std::size_t data = bytes.size() - data_at;
  if (numel > data / type->size)
    fail(fmt::format("truncated data: shape {} of {} needs {} bytes, the file has {} bytes of data",
                     shape_text(out.shape), descr,
                     static_cast<double>(numel) * static_cast<double>(type->size), data));
  if (numel * type->size != data)
    fail(fmt::format("{} bytes after the data of shape {} of {}", data - numel * type->size,
                     shape_text(out.shape), descr));
  out.values.resize(static_cast<std::size_t>(numel));
  const char* p = bytes.data() + data_at;
  for (std::size_t i = 0; i < out.values.size(); ++i, p += type->size) {
    const std::uint64_t raw = load_le(p, type->size);
    float& x = out.values[i];
    switch (type->type) {
      case NpyType::f4:
        x = std::bit_cast<float>(static_cast<std::uint32_t>(raw));
        break;
      case NpyType::f8:
        x = static_cast<float>(std::bit_cast<double>(raw));
        break;
      case NpyType::i8:
        x = static_cast<float>(std::bit_cast<std::int64_t>(raw));
        break;
      case NpyType::i4:
        x = static_cast<float>(std::bit_cast<std::int32_t>(static_cast<std::uint32_t>(raw)));
        break;
      case NpyType::b1:
        x = raw != 0 ? 1.0f : 0.0f;
        break;
      case NpyType::u1:
        x = static_cast<float>(raw);
        break;
    }
  }
  return out;
}

NpyArray read_npy(const std::string& path) {
  return parse_npy(read_file(path), path);
}

std::string format_npy(const std::vector<std::int64_t>& shape, std::span<const float> values) {
  std::uint64_t numel = 1;
  for (const std::int64_t e : shape) {
    if (e < 0) throw std::invalid_argument("format_npy: negative extent");
    numel *= static_cast<std::uint64_t>(e);
  }
  if (numel != values.size())
    throw std::invalid_argument(
        fmt::format("format_npy: {} values for shape {}", values.size(), shape_text(shape)));
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape_text(shape));
  // Pad with blanks so that magic + version + length + header + '\n' is a multiple of 64.
  const std::size_t unpadded = kMagic.size() + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xffff) throw std::invalid_argument("format_npy: header too long");
  std::string out;
  out.reserve(kMagic.size() + 4 + header.size() + 4 * values.size());
  out.append(kMagic);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out.append(header);
  for (const float v : values) {
    const auto bits = std::bit_cast<std::uint32_t>(v);
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
  }
  return out;
}

void write_npy(const std::string& path, const std::vector<std::int64_t>& shape,
               std::span<const float> values) {
  write_file_atomic(path, format_npy(shape, values));
}

}  // namespace doppler
