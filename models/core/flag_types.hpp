#pragma once
// The type each flag shows in --help (CLI11's ->type_name), one name per kind
// of value so that every subcommand says the same thing about the same flag.
// Without one, CLI11 prints TEXT for every flag that is read as a string,
// which here is most numbers (they are parsed by models/core/parse.hpp to
// allow the binary K/M/G suffixes). tests/cli/test_help.cpp fails on TEXT.
namespace ringsim::flag_type {

// Counts with binary suffixes: K = 2^10, M = 2^20, G = 2^30 (parse_count).
inline constexpr const char* kTokens = "TOKENS (K/M binary)";
// Token totals of a training run: decimal SI, as they are quoted (15T = 15e12;
// parse_decimal_count).
inline constexpr const char* kDecimalTokens = "TOKENS (K/M/B/T decimal)";
inline constexpr const char* kInt = "INT";
inline constexpr const char* kIntOrAuto = "INT|auto";
inline constexpr const char* kFloat = "FLOAT";
// Memory sizes: bytes with binary suffixes (95G = 95 GiB).
inline constexpr const char* kBytes = "BYTES (K/M/G binary)";
inline constexpr const char* kBytesPerS = "BYTES/S";
inline constexpr const char* kFlops = "FLOP/S";
inline constexpr const char* kSeconds = "SECONDS";
inline constexpr const char* kWatts = "WATTS";
inline constexpr const char* kFraction = "FRACTION";
inline constexpr const char* kName = "NAME";
inline constexpr const char* kOnOff = "on|off";
inline constexpr const char* kFile = "FILE";
inline constexpr const char* kHex = "HEX";
inline constexpr const char* kDir = "DIR";
inline constexpr const char* kPrefix = "PREFIX";
inline constexpr const char* kList = "LIST";
// --documents: lengths 8K,2K,512, a file, or fixed:L / uniform:A..B / lognormal:MEAN,SIGMA.
inline constexpr const char* kDocuments = "LENGTHS|FILE|DIST";
inline constexpr const char* kDims = "DIMS";
inline constexpr const char* kDeviceFactor = "DEVICE:FACTOR";
inline constexpr const char* kLinkFactor = "LINK:FACTOR";
// --set: a catalog (or framework) field and its new value.
inline constexpr const char* kKeyValue = "KEY=VALUE";
inline constexpr const char* kArg = "ARG";
// Money: plain decimal numbers in the user's currency.
inline constexpr const char* kPrice = "PRICE (currency)";
// Shown after `--causal,--no-causal` (models/core/help_format.hpp drops
// CLI11's `{false}`, which is what --no-causal stores, not the default).
inline constexpr const char* kCausalDefault = "(default: --causal)";

}  // namespace ringsim::flag_type
