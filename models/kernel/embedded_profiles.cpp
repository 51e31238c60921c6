// The profiles that ship inside ringsim (a kernel entry's "profile" names one).
#include <string>

namespace ringsim::embedded {
extern const char* const profile_cpu_amd_epyc_avx512_2026_12_01;

const char* profile_text(const std::string& name) {
  if (name == "cpu-amd-epyc-avx512-2026-12-01") return profile_cpu_amd_epyc_avx512_2026_12_01;
  return nullptr;
}
}  // namespace ringsim::embedded
