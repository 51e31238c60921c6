#pragma once
// Strict parsing of command-line numbers and names. Every function names the
// flag and the allowed range in its error, so the CLI can print one line.
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim {

// Integer with an optional binary suffix K (2^10), M (2^20), G (2^30), T
// (2^40): "131072", "128K", "1M", "15T". Rejects signs, fractions, exponents and junk.
std::int64_t parse_count(const std::string& flag, const std::string& text, std::int64_t min,
                         std::int64_t max);

// Finite real number in [min, max]; accepts 1e15, 0.5, 2.5e-6.
double parse_real(const std::string& flag, const std::string& text, double min, double max);

// One of `choices`, else an error listing them.
std::string parse_choice(const std::string& flag, const std::string& text,
                         const std::vector<std::string>& choices);

std::string join(const std::vector<std::string>& items, const std::string& sep);

// An empty value (`--flops ''`, `--trace=`) is bad input, never "not given":
// throws InputError naming the flag. args excludes the program name.
void refuse_empty_values(const std::vector<std::string>& args);

// "1.0K", "25.0K", "1.2M": decimal K/M, the Ring Attention paper's style for token counts.
std::string human_tokens(double tokens);
// "12.3 GiB", "512 MiB"
std::string human_bytes(double bytes);
// "1.23 ms", "45.6 us", "2.01 s"
std::string human_seconds(double s);

}  // namespace ringsim
