// The profiles that ship inside ringsim (a kernel entry's "profile" names one).
#include <string>

namespace ringsim::embedded {
extern const char* const profile_cpu_amd_epyc_2026_11_29;

const char* profile_text(const std::string& name) {
  if (name == "cpu-amd-epyc-2026-11-29") return profile_cpu_amd_epyc_2026_11_29;
  return nullptr;
}
}  // namespace ringsim::embedded
