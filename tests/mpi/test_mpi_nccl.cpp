// ringsim-mpi-nccl (CUDA kernels + NCCL, one rank per GPU) is exact for every
// layout, forward and backward, against the float64 reference on bf16-rounded
// inputs. Needs GPUs: prints SKIPPED with the reason where the program was not
// built (no CUDA or NCCL) or no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/mpi/mpirun.hpp"

namespace ringsim::mpi::test {
namespace {

#ifdef RINGSIM_MPI_NCCL_BIN
// GPUs on this host (nvidia-smi -L prints one line per GPU); one rank per GPU,
// at most 4.
int gpu_count() {
  const auto r = proc::run({"nvidia-smi", "-L"}, 30);
  if (!r.ok()) return 0;
  int n = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("GPU ", 0) == 0) ++n;
  return n;
}

class NcclExact : public ::testing::TestWithParam<const char*> {};

TEST_P(NcclExact, ForwardAndBackwardMatchFullAttention) {
  const int ranks = std::min(4, gpu_count());
  if (ranks == 0) GTEST_SKIP() << "no GPU visible (nvidia-smi -L lists none)";
  const std::string args = std::string(RINGSIM_MPI_NCCL_BIN) + " --layout " + GetParam() +
                           " --pass fwdbwd --block 128 --heads 4 --kv-heads 2 --head-dim 64 "
                           "--check --json";
  const auto r = run_mpi_program(ranks, args);
  if (r.code == 2 && r.err.find("no usable CUDA device") != std::string::npos)
    GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const auto s = nlohmann::json::parse(r.out);
  EXPECT_TRUE(s["check"]["matches"].get<bool>()) << s["check"].dump();
  EXPECT_EQ(s["check"]["errors"].size(), 5u);
}

INSTANTIATE_TEST_SUITE_P(Layouts, NcclExact, ::testing::Values("ring", "zigzag", "striped"),
                         [](const auto& info) { return std::string(info.param); });
#else
TEST(NcclExact, Skipped) {
  GTEST_SKIP() << "ringsim-mpi-nccl was not built (needs CUDA and NCCL: see the CMake status "
                  "line 'MPI + NCCL ring')";
}
#endif

}  // namespace
}  // namespace ringsim::mpi::test
