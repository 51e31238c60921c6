// ringsim_cuda_profile --out FILE [--quick]: the CUDA profile without the CLI
// (scripts/gpu-check.sh uses it). Exit 2 on bad flags, 1 when no GPU is usable.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/profile_cuda.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"

int main(int argc, char** argv) {
  using namespace ringsim::kernels::cuda;
  CudaProfileOptions opt;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      opt.quick = true;
    } else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
      out = argv[++i];
    } else if (!std::strcmp(argv[i], "--heads") && i + 1 < argc) {
      opt.heads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "ringsim_cuda_profile: error: usage: --out FILE [--quick] [--heads N]\n");
      return 2;
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "ringsim_cuda_profile: error: --out FILE is required\n");
    return 2;
  }
  try {
    const std::string json =
        cuda_profile_json(opt, [](const std::string& line, double) { std::cerr << line << "\n"; });
    // Like every ringsim output (models/core/atomic_file.hpp).
    ringsim::AtomicFile f(out, "--out");
    f.write(json);
    f.write("\n");
    f.commit();
  } catch (const ringsim::InputError& e) {
    std::fprintf(stderr, "ringsim_cuda_profile: error: %s\n", e.what());
    return 2;
  } catch (const CudaError& e) {
    std::fprintf(stderr, "ringsim_cuda_profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
