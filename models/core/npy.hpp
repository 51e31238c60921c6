#pragma once
// NumPy .npy files (format versions 1.0, 2.0, 3.0): little-endian float16,
// float32 and float64 arrays (attention inputs and outputs, kernels/) and
// int32 and int64 arrays (cu_seqlens for --documents) in C order, the way
// `numpy.save` writes them. Every malformed file becomes one InputError line
// that names the file ("--q q.npy: ..."); the parser never trusts a length it
// has not checked, so it can be fuzzed on arbitrary bytes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim {

enum class NpyDType { F16, F32, F64, I32, I64 };

const char* npy_descr(NpyDType t);  // "<f2", "<f4", "<f8", "<i4", "<i8"
int npy_item_bytes(NpyDType t);
bool npy_is_integer(NpyDType t);

// A floating-point array: float16, float32 or float64.
struct NpyArray {
  std::vector<std::int64_t> shape;
  NpyDType dtype = NpyDType::F32;
  std::vector<double> data;  // every float dtype converts to double exactly

  std::int64_t size() const;
};

// An integer array: int32 or int64 (int64 does not fit a double exactly).
struct NpyIntArray {
  std::vector<std::int64_t> shape;
  NpyDType dtype = NpyDType::I64;
  std::vector<std::int64_t> data;

  std::int64_t size() const;
};

// Largest array the reader accepts (elements), so a header cannot ask for
// more memory than any attention input here needs.
inline constexpr std::int64_t kNpyMaxElements = std::int64_t{1} << 31;

// `label` prefixes every error, e.g. "--q q.npy". `rank` < 0 accepts any rank.
// Rejects empty arrays, NaN and Inf values, and integer dtypes.
NpyArray parse_npy(std::string_view bytes, const std::string& label, int rank = -1);
NpyArray read_npy(const std::string& path, const std::string& label, int rank = -1);
// The same, refusing from the header alone an array that needs more than
// `budget_bytes` as float64 (what the reader holds); the message names
// `budget_flag`, the flag that raises the budget.
NpyArray read_npy(const std::string& path, const std::string& label, int rank,
                  std::uint64_t budget_bytes, const std::string& budget_flag);

// Integer arrays: the same checks, refusing float dtypes; `max_elements`
// refuses a larger array from its header alone, the message ending with
// `(why)`, e.g. "(cu_seqlens of at most 1048576 documents)".
NpyIntArray parse_npy_ints(std::string_view bytes, const std::string& label, int rank = -1);
NpyIntArray read_npy_ints(const std::string& path, const std::string& label, int rank,
                          std::int64_t max_elements, const std::string& why);

// Serialises with a version 1.0 header (2.0 if the header would not fit),
// padded so the data starts on a 64-byte boundary as numpy does. Values are
// rounded to `dtype` (float16: round to nearest even).
std::string encode_npy(const std::vector<std::int64_t>& shape, NpyDType dtype,
                       const std::vector<double>& data);
void write_npy(const std::string& path, const std::string& label,
               const std::vector<std::int64_t>& shape, NpyDType dtype,
               const std::vector<double>& data);
// Integer arrays (`dtype` I32 or I64); a value outside int32 for I32 throws
// std::invalid_argument, as does a float dtype.
std::string encode_npy_ints(const std::vector<std::int64_t>& shape, NpyDType dtype,
                            const std::vector<std::int64_t>& data);

// IEEE 754 binary16 <-> binary64, by hand (no half-float library); the
// narrowing rounds to nearest, ties to even, overflowing to infinity.
double half_to_double(std::uint16_t h);
std::uint16_t double_to_half(double d);

}  // namespace ringsim
