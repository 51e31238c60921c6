#include "models/core/builtin_data.hpp"

#include <string>

namespace ringsim {

namespace embedded {
extern const char* const catalog_json;
extern const char* const kernels_json;
extern const char* const models_json;
extern const char* const document_lengths_json;
extern const char* const profile_cpu_amd_epyc_avx512_2026_12_01;
}  // namespace embedded

std::vector<std::string_view> builtin_data() {
  return {embedded::catalog_json, embedded::kernels_json, embedded::models_json,
          embedded::profile_cpu_amd_epyc_avx512_2026_12_01, embedded::document_lengths_json};
}

}  // namespace ringsim
