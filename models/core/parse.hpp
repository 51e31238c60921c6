#pragma once
// Strict parsing of command-line numbers and names. Every function names the
// flag and the allowed range in its error, so the CLI can print one line.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim {

// Integer with an optional binary suffix K (2^10), M (2^20), G (2^30), T
// (2^40): "131072", "128K", "1M", "15T". Rejects signs, fractions, exponents and junk.
std::int64_t parse_count(const std::string& flag, const std::string& text, std::int64_t min,
                         std::int64_t max);

// A count in decimal SI, as token totals of training runs and money are quoted:
// "15T" = 15e12, "1.5T", "300B" or "300G" = 3e11, "2M" = 2e6, "500K" = 5e5,
// or plain digits; the value must be a whole number in [min, max]. Not the
// binary K/M/G/T of parse_count: a training run of "1T tokens" is 1e12, not 2^40.
std::int64_t parse_decimal_count(const std::string& flag, const std::string& text, std::int64_t min,
                                 std::int64_t max);

// A finite decimal number spelled with '.' whatever the process's locale
// (strtod reads "0.5" as 0 under de_DE, which an embedding Python may set):
// digits, one '.', an exponent, a leading sign. False for anything else,
// hex floats, inf and nan included, or a value beyond double's range.
bool read_decimal(std::string_view text, double& value);

// Finite real number in [min, max]; accepts 1e15, 0.5, 2.5e-6.
double parse_real(const std::string& flag, const std::string& text, double min, double max);

// A rate in bytes/s within [min, max]: a plain number (50e9), or a number with
// a decimal unit, bytes (50GB/s, 50GBps, 2.4TB/s) or bits (400Gbps, 400Gb/s,
// 400Gbit/s: divided by 8, as NICs are quoted). Anything else is refused with
// the conversion spelled out.
double parse_rate(const std::string& flag, const std::string& text, double min, double max);

// One of `choices`, else an error listing them.
std::string parse_choice(const std::string& flag, const std::string& text,
                         const std::vector<std::string>& choices);

// The enum value named `text`, the values in the order of `names` (an enum
// and its name list side by side); parse_choice's one line otherwise.
template <typename Enum>
Enum parse_named(const std::string& flag, const std::string& text,
                 const std::vector<std::string>& names) {
  const auto v = parse_choice(flag, text, names);
  return static_cast<Enum>(std::find(names.begin(), names.end(), v) - names.begin());
}

std::string join(const std::vector<std::string>& items, const std::string& sep);

// An empty value (`--flops ''`, `--trace=`) is bad input, never "not given":
// throws InputError naming the flag. args excludes the program name.
void refuse_empty_values(const std::vector<std::string>& args);

// Units, in and out: K, M, G are binary (2^10, 2^20, 2^30), as parse_count reads
// them, and memory is in binary bytes (KiB, MiB, GiB). Bandwidth stays in
// decimal GB/s (1e9 B/s), as link and HBM datasheets quote it.
//
// Token counts: "512", "128K" (131072), "1M" (1048576), "1.5M", "6.5K" (6663):
// a whole multiple of the unit prints without decimals, any other count with one.
std::string human_tokens(double tokens);
// Decimal K/M/G/T with one decimal, as papers print token counts (Ring
// Attention Table 2: 24.5K = 24500, 149.5K): "1.0K", "24.5K", "1.2M"; plain
// below 1000.
std::string decimal_tokens(double tokens);
// "12.30 GiB", "512.00 MiB", "100 B": the unit chosen by size.
std::string human_bytes(double bytes);
// "12.3 GiB" always in GiB, for tables whose rows compare memory.
std::string human_gib(double bytes);
// Bytes to GiB as a number, for table cells that print the unit in a header.
constexpr double to_gib(double bytes) {
  return bytes / (1024.0 * 1024.0 * 1024.0);
}
// "1.23 ms", "45.6 us", "2.01 s"
std::string human_seconds(double s);
// A count with its thousands grouped, as large counts read: "4,294,770,688".
std::string grouped_count(std::uint64_t n);

}  // namespace ringsim
