#pragma once
// NumPy .npy files (format versions 1.0, 2.0, 3.0): little-endian float16,
// float32 and float64 arrays in C order, the way `numpy.save` writes them.
// Every malformed file becomes one InputError line that names the file
// ("--q q.npy: ..."); the parser never trusts a length it has not checked, so
// it can be fuzzed on arbitrary bytes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::kernels {

enum class NpyDType { F16, F32, F64 };

const char* npy_descr(NpyDType t);  // "<f2", "<f4", "<f8"
int npy_item_bytes(NpyDType t);

struct NpyArray {
  std::vector<std::int64_t> shape;
  NpyDType dtype = NpyDType::F32;
  std::vector<double> data;  // every supported dtype converts to double exactly

  std::int64_t size() const;
};

// Largest array the reader accepts (elements), so a header cannot ask for
// more memory than any attention input here needs.
inline constexpr std::int64_t kNpyMaxElements = std::int64_t{1} << 31;

// `label` prefixes every error, e.g. "--q q.npy". `rank` < 0 accepts any rank.
// Rejects empty arrays, NaN and Inf values.
NpyArray parse_npy(std::string_view bytes, const std::string& label, int rank = -1);
NpyArray read_npy(const std::string& path, const std::string& label, int rank = -1);
// The same, refusing from the header alone an array that needs more than
// `budget_bytes` as float64 (what the reader holds); the message names
// `budget_flag`, the flag that raises the budget.
NpyArray read_npy(const std::string& path, const std::string& label, int rank,
                  std::uint64_t budget_bytes, const std::string& budget_flag);

// Serialises with a version 1.0 header (2.0 if the header would not fit),
// padded so the data starts on a 64-byte boundary as numpy does. Values are
// rounded to `dtype` (float16: round to nearest even).
std::string encode_npy(const std::vector<std::int64_t>& shape, NpyDType dtype,
                       const std::vector<double>& data);
void write_npy(const std::string& path, const std::string& label,
               const std::vector<std::int64_t>& shape, NpyDType dtype,
               const std::vector<double>& data);

// IEEE 754 binary16 <-> binary64, by hand (no half-float library); the
// narrowing rounds to nearest, ties to even, overflowing to infinity.
double half_to_double(std::uint16_t h);
std::uint16_t double_to_half(double d);

}  // namespace ringsim::kernels
