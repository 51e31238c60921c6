#include "models/core/npy.hpp"

#include <fmt/format.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

namespace ringsim {

namespace {

// Format description: numpy/doc/neps/nep-0001-npy-format.rst and
// numpy.lib.format: magic "\x93NUMPY", major, minor, header length (uint16 for
// 1.0, uint32 for 2.0/3.0, little-endian), then an ASCII (3.0: UTF-8) Python
// dict literal padded with spaces and ended by '\n'.
constexpr std::string_view kMagic{"\x93NUMPY", 6};
constexpr std::size_t kMaxHeader = 1 << 20;  // numpy itself refuses headers above 10 KB by default
constexpr int kMaxRank = 32;                 // numpy's NPY_MAXDIMS

[[noreturn]] void fail(const std::string& label, const std::string& msg) {
  throw InputError(label.empty() ? msg : label + ": " + msg);
}

// Which dtypes a reader takes: the attention tensors are floats, cu_seqlens integers.
enum class Kind { Float, Integer };

const char* allowed_dtypes(Kind k) {
  return k == Kind::Float ? "float16, float32 or float64" : "int32 or int64";
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// A tiny reader for the three-key dict numpy writes. It accepts what Python's
// literal syntax allows there (either quote, any spacing, trailing commas) and
// nothing else.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& label, Kind kind)
      : t_(text), label_(label), kind_(kind) {}

  void parse(std::string& descr, bool& fortran, std::vector<std::int64_t>& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = string_literal();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (have_descr) bad("key 'descr' appears twice");
        if (peek() != '\'' && peek() != '"')
          bad(fmt::format("structured dtypes are not supported; use {}", allowed_dtypes(kind_)));
        descr = string_literal();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) bad("key 'fortran_order' appears twice");
        fortran = boolean();
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape) bad("key 'shape' appears twice");
        shape = tuple();
        have_shape = true;
      } else {
        bad(fmt::format("unexpected key '{}'", key));
      }
      skip_ws();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (peek() != '}') bad("expected ',' or '}'");
    }
    ++p_;
    skip_ws();
    if (p_ != t_.size()) bad("unexpected text after the dict");
    if (!have_descr || !have_fortran || !have_shape)
      bad("the dict needs the keys 'descr', 'fortran_order' and 'shape'");
  }

 private:
  [[noreturn]] void bad(const std::string& what) const { fail(label_, "bad .npy header: " + what); }
  char peek() const { return p_ < t_.size() ? t_[p_] : '\0'; }
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r'))
      ++p_;
  }
  void expect(char c) {
    if (peek() != c) bad(fmt::format("expected '{}'", c));
    ++p_;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') bad("expected a quoted string");
    const auto end = t_.find(q, p_ + 1);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string s(t_.substr(p_ + 1, end - p_ - 1));
    // A newline cannot be inside a Python string literal, and would split the error line.
    if (s.find_first_of("\\\n\r") != std::string::npos || s.size() > 64) bad("unexpected string");
    p_ = end + 1;
    return s;
  }
  bool boolean() {
    if (t_.substr(p_, 4) == "True") {
      p_ += 4;
      return true;
    }
    if (t_.substr(p_, 5) == "False") {
      p_ += 5;
      return false;
    }
    bad("'fortran_order' must be True or False");
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> dims;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') bad("'shape' must be a tuple of non-negative integers");
      std::int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
          bad("a dimension is too large");
        v = v * 10 + (peek() - '0');
        ++p_;
      }
      if (static_cast<int>(dims.size()) >= kMaxRank) bad("more than 32 dimensions");
      dims.push_back(v);
      skip_ws();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (peek() != ')') bad("expected ',' or ')' in 'shape'");
    }
    ++p_;
    // Python needs the trailing comma for a 1-tuple: "(5)" is an int, not a shape.
    return dims;
  }

  std::string_view t_;
  std::size_t p_ = 0;
  const std::string& label_;
  Kind kind_;
};

std::uint64_t load_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int b = bytes - 1; b >= 0; --b) v = (v << 8) | p[b];
  return v;
}

void store_le(char* p, std::uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) p[b] = static_cast<char>((v >> (8 * b)) & 0xff);
}

NpyDType parse_descr(const std::string& d, const std::string& label, Kind kind) {
  if (kind == Kind::Float) {
    if (d == "<f2") return NpyDType::F16;
    if (d == "<f4") return NpyDType::F32;
    if (d == "<f8") return NpyDType::F64;
  } else {
    if (d == "<i4") return NpyDType::I32;
    if (d == "<i8") return NpyDType::I64;
  }
  if (!d.empty() && d[0] == '>')
    fail(label, fmt::format("big-endian dtype '{}' is not supported; save it little-endian", d));
  fail(label,
       fmt::format("unsupported dtype '{}'; use {} (little-endian)", d, allowed_dtypes(kind)));
}

std::string index_text(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t a = shape.size(); a-- > 0;) {
    idx[a] = flat % shape[a];
    flat /= shape[a];
  }
  std::string s = "[";
  for (std::size_t a = 0; a < idx.size(); ++a) s += (a ? ", " : "") + std::to_string(idx[a]);
  return s + "]";
}

}  // namespace

const char* npy_descr(NpyDType t) {
  switch (t) {
    case NpyDType::F16:
      return "<f2";
    case NpyDType::F32:
      return "<f4";
    case NpyDType::I32:
      return "<i4";
    case NpyDType::I64:
      return "<i8";
    default:
      return "<f8";
  }
}

int npy_item_bytes(NpyDType t) {
  switch (t) {
    case NpyDType::F16:
      return 2;
    case NpyDType::F32:
    case NpyDType::I32:
      return 4;
    default:
      return 8;
  }
}

bool npy_is_integer(NpyDType t) {
  return t == NpyDType::I32 || t == NpyDType::I64;
}

namespace {
std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}
}  // namespace

std::int64_t NpyArray::size() const {
  return product(shape);
}
std::int64_t NpyIntArray::size() const {
  return product(shape);
}

double half_to_double(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  double v;
  if (e == 0)
    v = std::ldexp(static_cast<double>(m), -24);  // subnormal: m * 2^-24
  else if (e == 31)
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else
    v = std::ldexp(static_cast<double>(m + 1024), e - 25);  // (1 + m/1024) * 2^(e-15)
  return (h & 0x8000) ? -v : v;
}

std::uint16_t double_to_half(double d) {
  const std::uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double a = std::fabs(d);
  if (std::isnan(d)) return sign | 0x7e00;
  // 65520 is halfway between the largest half (65504) and 2^16: ties go to
  // the even neighbour, which is infinity.
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal: an integer number of 2^-24 units; scaling by 2^24 is exact and
    // nearbyint rounds to nearest even in the default rounding mode.
    return sign | static_cast<std::uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  }
  int k = 0;
  std::frexp(a, &k);    // a = f * 2^k, f in [0.5, 1)
  const int e = k - 1;  // a = (1 + m/1024) * 2^e, e in [-14, 15]
  const auto r = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(a, 10 - e)));  // 1024..2048
  // r == 2048 carries into the exponent, which the addition does by itself.
  return sign | static_cast<std::uint16_t>((static_cast<std::uint32_t>(e + 15) << 10) + (r - 1024));
}

namespace {

// What the header says, checked against the file's total size before any data
// is read: a file with a wrong magic, a bad header or a size that does not match
// its shape is refused after reading at most its first header's worth of bytes.
struct NpyLayout {
  std::vector<std::int64_t> shape;
  NpyDType dtype = NpyDType::F32;
  std::size_t data_offset = 0;
  std::int64_t elements = 0;
  int item = 0;
};

NpyLayout parse_layout(std::string_view head, std::uint64_t file_size, const std::string& label,
                       int rank, Kind kind) {
  if (file_size < 10 || head.size() < 10 || head.substr(0, 6) != kMagic)
    fail(label, "not a .npy file (missing the \\x93NUMPY magic); save it with numpy.save");
  const auto* u = reinterpret_cast<const unsigned char*>(head.data());
  const int major = u[6], minor = u[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(label, fmt::format("unsupported .npy format version {}.{}; expected 1.0, 2.0 or 3.0",
                            major, minor));
  const std::size_t prefix = major == 1 ? 10 : 12;
  if (head.size() < prefix) fail(label, "truncated .npy header");
  const std::uint64_t hlen = load_le(u + 8, major == 1 ? 2 : 4);
  if (hlen > kMaxHeader)
    fail(label, fmt::format("bad .npy header: length {} is implausible", hlen));
  if (hlen > file_size - prefix || hlen > head.size() - prefix)
    fail(label, fmt::format("truncated .npy header: it claims {} bytes, the file has {}", hlen,
                            file_size - prefix));
  const std::string_view header = head.substr(prefix, hlen);
  for (unsigned char c : header)
    if (c >= 0x80 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t'))
      fail(label, "bad .npy header: non-ASCII or control characters");

  std::string descr;
  bool fortran = false;
  NpyLayout l;
  HeaderParser(header, label, kind).parse(descr, fortran, l.shape);
  l.dtype = parse_descr(descr, label, kind);
  if (fortran) fail(label, "fortran_order is True; save a C-order array (numpy.ascontiguousarray)");
  if (rank >= 0 && static_cast<int>(l.shape.size()) != rank) {
    const std::string want =
        rank == 3 ? "a 3-d array [seq, heads, head_dim]" : fmt::format("a {}-d array", rank);
    fail(label, fmt::format("expected {}, got shape {}", want, shape_text(l.shape)));
  }
  std::int64_t n = 1;
  for (auto d : l.shape) {
    if (d == 0) fail(label, fmt::format("empty array (shape {})", shape_text(l.shape)));
    if (d > kNpyMaxElements || n > kNpyMaxElements / d)
      fail(label, fmt::format("shape {} has more than 2^31 elements", shape_text(l.shape)));
    n *= d;
  }
  l.item = npy_item_bytes(l.dtype);
  l.elements = n;
  l.data_offset = prefix + hlen;
  const std::uint64_t want = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(l.item);
  const std::uint64_t have = file_size - l.data_offset;
  if (have < want)
    fail(label, fmt::format("truncated data: shape {} of {} needs {} bytes, the file has {}",
                            shape_text(l.shape), descr, want, have));
  if (have > want)
    fail(label, fmt::format("{} unexpected bytes after the data of shape {}", have - want,
                            shape_text(l.shape)));
  return l;
}

NpyArray decode_data(NpyLayout l, const unsigned char* p, const std::string& label) {
  NpyArray a{std::move(l.shape), l.dtype, {}};
  a.data.resize(static_cast<std::size_t>(l.elements));
  for (std::int64_t i = 0; i < l.elements; ++i, p += l.item) {
    const std::uint64_t bits = load_le(p, l.item);
    double v;
    if (l.item == 2) {
      v = half_to_double(static_cast<std::uint16_t>(bits));
    } else if (l.item == 4) {
      v = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    } else {
      v = std::bit_cast<double>(bits);
    }
    if (!std::isfinite(v))
      fail(label, fmt::format("value at {} is {}; inputs must be finite", index_text(i, a.shape),
                              std::isnan(v) ? "NaN" : (v > 0 ? "Inf" : "-Inf")));
    a.data[static_cast<std::size_t>(i)] = v;
  }
  return a;
}

NpyIntArray decode_ints(NpyLayout l, const unsigned char* p) {
  NpyIntArray a{std::move(l.shape), l.dtype, {}};
  a.data.resize(static_cast<std::size_t>(l.elements));
  for (std::int64_t i = 0; i < l.elements; ++i, p += l.item) {
    const std::uint64_t bits = load_le(p, l.item);
    // Two's complement, sign-extended from the item's width.
    a.data[static_cast<std::size_t>(i)] =
        l.item == 4 ? std::int64_t{std::bit_cast<std::int32_t>(static_cast<std::uint32_t>(bits))}
                    : std::bit_cast<std::int64_t>(bits);
  }
  return a;
}

// A file's layout and its data bytes. The header is read first: magic,
// version, shape and the size they imply are checked against the file (and
// `check`, a budget) before the data is read or any of it is allocated.
struct NpyFile {
  NpyLayout layout;
  std::string data;
};

NpyFile load_file(const std::string& path, const std::string& label, int rank, Kind kind,
                  const std::function<void(const NpyLayout&)>& check) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(label, "no such file");
  if (!std::filesystem::is_regular_file(path, ec)) fail(label, "not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(label, "cannot read: " + ec.message());
  if (size > static_cast<std::uintmax_t>(kNpyMaxElements) * 8 + kMaxHeader + 12)
    fail(label, "file is larger than any array ringsim accepts (2^31 elements)");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(label, fmt::format("cannot open: {}", std::strerror(errno)));
  std::string head(static_cast<std::size_t>(std::min<std::uintmax_t>(size, 12 + kMaxHeader)), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (in.gcount() != static_cast<std::streamsize>(head.size()))
    fail(label, "cannot read the whole file");
  NpyFile f{parse_layout(head, size, label, rank, kind), {}};
  check(f.layout);
  f.data.assign(static_cast<std::size_t>(size - f.layout.data_offset), '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(f.layout.data_offset));
  in.read(f.data.data(), static_cast<std::streamsize>(f.data.size()));
  if (in.gcount() != static_cast<std::streamsize>(f.data.size()))
    fail(label, "cannot read the whole file");
  return f;
}

const unsigned char* bytes_of(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string encode(const std::vector<std::int64_t>& shape, NpyDType dtype, std::size_t count,
                   const std::function<void(char*)>& write_data) {
  if (product(shape) != static_cast<std::int64_t>(count))
    throw std::invalid_argument("encode_npy: data size does not match the shape");
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 npy_descr(dtype), shape_text(shape));
  // Pad with spaces so magic + version + length + header + '\n' is a multiple
  // of 64 bytes, as numpy >= 1.22 does (aligned data for memory mapping).
  std::size_t prefix = 10;
  std::size_t total = prefix + dict.size() + 1;
  if ((total + 63) / 64 * 64 - prefix > 0xffff) prefix = 12;
  total = prefix + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  const int item = npy_item_bytes(dtype);
  std::string out(prefix + dict.size() + count * static_cast<std::size_t>(item), '\0');
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  out[6] = static_cast<char>(prefix == 10 ? 1 : 2);
  out[7] = 0;
  store_le(out.data() + 8, dict.size(), prefix == 10 ? 2 : 4);
  std::memcpy(out.data() + prefix, dict.data(), dict.size());
  write_data(out.data() + prefix + dict.size());
  return out;
}

}  // namespace

NpyArray parse_npy(std::string_view bytes, const std::string& label, int rank) {
  auto l = parse_layout(bytes, bytes.size(), label, rank, Kind::Float);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data()) + l.data_offset;
  return decode_data(std::move(l), p, label);
}

NpyArray read_npy(const std::string& path, const std::string& label, int rank) {
  return read_npy(path, label, rank, 0, "");
}

NpyArray read_npy(const std::string& path, const std::string& label, int rank,
                  std::uint64_t budget_bytes, const std::string& budget_flag) {
  auto f = load_file(path, label, rank, Kind::Float, [&](const NpyLayout& l) {
    const auto need = static_cast<std::uint64_t>(l.elements) * sizeof(double);
    if (budget_bytes > 0 && need > budget_bytes)
      fail(label,
           fmt::format("shape {} needs {} as float64, more than the {} budget of {}; raise {} "
                       "to read it",
                       shape_text(l.shape), human_bytes(static_cast<double>(need)), budget_flag,
                       human_bytes(static_cast<double>(budget_bytes)), budget_flag));
  });
  return decode_data(std::move(f.layout), bytes_of(f.data), label);
}

NpyIntArray parse_npy_ints(std::string_view bytes, const std::string& label, int rank) {
  auto l = parse_layout(bytes, bytes.size(), label, rank, Kind::Integer);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data()) + l.data_offset;
  return decode_ints(std::move(l), p);
}

NpyIntArray read_npy_ints(const std::string& path, const std::string& label, int rank,
                          std::int64_t max_elements, const std::string& why) {
  auto f = load_file(path, label, rank, Kind::Integer, [&](const NpyLayout& l) {
    if (l.elements > max_elements)
      fail(label, fmt::format("shape {} has more than {} elements ({})", shape_text(l.shape),
                              max_elements, why));
  });
  return decode_ints(std::move(f.layout), bytes_of(f.data));
}

std::string encode_npy(const std::vector<std::int64_t>& shape, NpyDType dtype,
                       const std::vector<double>& data) {
  if (npy_is_integer(dtype))
    throw std::invalid_argument("encode_npy: integer dtypes go through encode_npy_ints");
  const int item = npy_item_bytes(dtype);
  return encode(shape, dtype, data.size(), [&](char* p) {
    for (double v : data) {
      if (item == 2)
        store_le(p, double_to_half(v), 2);
      else if (item == 4)
        store_le(p, std::bit_cast<std::uint32_t>(static_cast<float>(v)), 4);
      else
        store_le(p, std::bit_cast<std::uint64_t>(v), 8);
      p += item;
    }
  });
}

std::string encode_npy_ints(const std::vector<std::int64_t>& shape, NpyDType dtype,
                            const std::vector<std::int64_t>& data) {
  if (!npy_is_integer(dtype))
    throw std::invalid_argument("encode_npy_ints: float dtypes go through encode_npy");
  const int item = npy_item_bytes(dtype);
  if (item == 4)
    for (auto v : data)
      if (v < std::numeric_limits<std::int32_t>::min() ||
          v > std::numeric_limits<std::int32_t>::max())
        throw std::invalid_argument("encode_npy_ints: a value does not fit int32");
  return encode(shape, dtype, data.size(), [&](char* p) {
    for (auto v : data) {
      store_le(p, static_cast<std::uint64_t>(v), item);
      p += item;
    }
  });
}

void write_npy(const std::string& path, const std::string& label,
               const std::vector<std::int64_t>& shape, NpyDType dtype,
               const std::vector<double>& data) {
  const std::string bytes = encode_npy(shape, dtype, data);
  // Like every output: replaced atomically, a device or FIFO written through,
  // a symlink's target written (models/core/atomic_file.hpp).
  AtomicFile out(path, label);
  out.write(bytes);
  out.commit();
}

}  // namespace ringsim
