#include "models/core/parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "models/core/errors.hpp"
#include "models/core/suggest.hpp"

namespace ringsim {

std::int64_t parse_count(const std::string& flag, const std::string& text, std::int64_t min,
                         std::int64_t max) {
  auto fail = [&] {
    return InputError(
        fmt::format("{}: expected an integer in [{}, {}] (binary suffix K/M/G/T allowed), got '{}'",
                    flag, min, max, text));
  };
  if (text.empty() || text.size() > 24) throw fail();
  std::string digits = text;
  std::int64_t mult = 1;
  char last = digits.back();
  if (last == 'K' || last == 'k') mult = 1LL << 10;
  if (last == 'M' || last == 'm') mult = 1LL << 20;
  if (last == 'G' || last == 'g') mult = 1LL << 30;
  if (last == 'T' || last == 't') mult = 1LL << 40;
  if (mult != 1) digits.pop_back();
  if (digits.empty()) throw fail();
  for (char c : digits)
    if (c < '0' || c > '9') throw fail();
  errno = 0;
  unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
  if (errno == ERANGE) throw fail();
  unsigned long long r = 0;
  if (__builtin_mul_overflow(v, static_cast<unsigned long long>(mult), &r)) throw fail();
  if (r > static_cast<unsigned long long>(max) || static_cast<long long>(r) < min) throw fail();
  return static_cast<std::int64_t>(r);
}

namespace {
// The multiplier of a decimal SI suffix, 1 for none.
std::int64_t decimal_suffix(char c) {
  switch (c) {
    case 'K':
    case 'k':
      return 1'000;
    case 'M':
    case 'm':
      return 1'000'000;
    case 'G':
    case 'g':
    case 'B':
    case 'b':
      return 1'000'000'000;
    case 'T':
    case 't':
      return 1'000'000'000'000;
    default:
      return 1;
  }
}
}  // namespace

std::int64_t parse_decimal_count(const std::string& flag, const std::string& text, std::int64_t min,
                                 std::int64_t max) {
  auto fail = [&] {
    return InputError(fmt::format(
        "{}: expected a whole number in [{}, {}] with an optional decimal suffix K = 1e3, M = "
        "1e6, G or B = 1e9, T = 1e12 (15T = 15e12), got '{}'",
        flag, min, max, text));
  };
  if (text.empty() || text.size() > 24) throw fail();
  std::string digits = text;
  const std::int64_t m = decimal_suffix(digits.back());
  if (m != 1) digits.pop_back();
  // Digits with at most one point, nothing else (no sign, no exponent).
  const auto point = digits.find('.');
  const std::string whole = digits.substr(0, point),
                    frac = point == std::string::npos ? "" : digits.substr(point + 1);
  const auto is_digits = [](const std::string& t) {
    return std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if ((whole.empty() && frac.empty()) || !is_digits(whole) || !is_digits(frac) ||
      whole.size() > 18 || frac.size() > 12)
    throw fail();
  std::int64_t scale = 1;
  for (std::size_t i = 0; i < frac.size(); ++i) scale *= 10;
  const std::int64_t w = whole.empty() ? 0 : std::stoll(whole),
                     f = frac.empty() ? 0 : std::stoll(frac);
  std::int64_t r = 0;
  if (__builtin_mul_overflow(w, m, &r)) throw fail();
  // Exact in integers, so 1.5T is 1500000000000; the fraction must give whole
  // tokens (1.5 or 1.0005K do not).
  const auto fm = static_cast<__int128>(f) * m;
  if (fm % scale != 0) throw fail();
  if (__builtin_add_overflow(r, static_cast<std::int64_t>(fm / scale), &r)) throw fail();
  if (r < min || r > max) throw fail();
  return r;
}

bool read_decimal(std::string_view text, double& value) {
  if (text.empty() || text.size() > 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
      return false;
  // from_chars takes no leading '+'; a sign after it ("+-1") stays refused.
  if (text.front() == '+') {
    text.remove_prefix(1);
    if (text.empty() || text.front() == '-' || text.front() == '+') return false;
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return false;
  value = v;
  return true;
}

double parse_real(const std::string& flag, const std::string& text, double min, double max) {
  double v = 0;
  if (!read_decimal(text, v) || v < min || v > max)
    throw InputError(
        fmt::format("{}: expected a number in [{:g}, {:g}], got '{}'", flag, min, max, text));
  return v;
}

namespace {

// The multiplier to bytes/s of a rate unit, 0 when it is not one.
double rate_unit(const std::string& u) {
  static const std::pair<const char*, double> prefixes[] = {{"", 1},    {"K", 1e3}, {"k", 1e3},
                                                            {"M", 1e6}, {"G", 1e9}, {"T", 1e12}};
  for (const auto& [p, m] : prefixes) {
    const std::string pre = p;
    for (const char* bytes : {"B/s", "Bps"})
      if (u == pre + bytes) return m;
    for (const char* bits : {"bps", "b/s", "bit/s"})
      if (u == pre + bits) return m / 8;
  }
  return 0;
}

}  // namespace

double parse_rate(const std::string& flag, const std::string& text, double min, double max) {
  const auto at = text.find_first_not_of("0123456789.eE+-");
  if (at == std::string::npos || at == 0) return parse_real(flag, text, min, max);
  // "1e9" keeps its e; a unit starts at the first letter that is not an exponent.
  const std::string number = text.substr(0, at), unit = text.substr(at);
  const double scale = rate_unit(unit);
  if (scale == 0)
    throw InputError(fmt::format(
        "{}: expected bytes/s, a number (50e9) or with a unit (50GB/s; bits: 400Gbps = 5e+10 "
        "bytes/s), got '{}'",
        flag, text));
  const double v = parse_real(flag, number, 0, 1e300) * scale;
  if (v < min || v > max)
    throw InputError(
        fmt::format("{}: expected a rate in [{:g}, {:g}] bytes/s, got '{}' = {:g} bytes/s", flag,
                    min, max, text, v));
  return v;
}

std::string parse_choice(const std::string& flag, const std::string& text,
                         const std::vector<std::string>& choices) {
  for (const auto& c : choices)
    if (c == text) return c;
  throw InputError(fmt::format("{}: unknown value '{}';{} choose one of: {}", flag, text,
                               did_you_mean(text, choices), join(choices, ", ")));
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string human_tokens(double t) {
  // Binary, as parse_count reads them: 128K is 131072, so a count typed as
  // 128K prints back as 128K.
  constexpr double kUnits[] = {1024.0 * 1024.0 * 1024.0, 1024.0 * 1024.0, 1024.0};
  constexpr const char* kNames[] = {"G", "M", "K"};
  for (int i = 0; i < 3; ++i) {
    if (t < kUnits[i]) continue;
    const double v = t / kUnits[i];
    if (v == std::floor(v)) return fmt::format("{:.0f}{}", v, kNames[i]);
    return fmt::format("{:.1f}{}", v, kNames[i]);
  }
  return fmt::format("{:.0f}", t);
}

std::string decimal_tokens(double t) {
  constexpr double kUnits[] = {1e12, 1e9, 1e6, 1e3};
  constexpr const char* kNames[] = {"T", "G", "M", "K"};
  for (int i = 0; i < 4; ++i)
    if (t >= kUnits[i]) return fmt::format("{:.1f}{}", t / kUnits[i], kNames[i]);
  return fmt::format("{:.0f}", t);
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024.0 && u < 5) {
    b /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.2f} {}", b, units[u]);
}

std::string human_gib(double bytes) {
  return fmt::format("{:.1f} GiB", to_gib(bytes));
}

std::string human_seconds(double s) {
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.3f} us", s * 1e6);
  return fmt::format("{:.1f} ns", s * 1e9);
}

void refuse_empty_values(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    const auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos && eq + 1 == a.size())
      throw InputError(
          fmt::format("{}: empty value; give a value or leave the flag out", a.substr(0, eq)));
    if (!a.empty()) continue;
    if (i > 0 && args[i - 1].rfind("-", 0) == 0)
      throw InputError(
          fmt::format("{}: empty value; give a value or leave the flag out", args[i - 1]));
    throw InputError("an empty argument; every value must be non-empty");
  }
}

std::string grouped_count(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace ringsim
