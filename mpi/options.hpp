#pragma once
// What one ringsim-mpi run does: the problem (shape, layout, mask, pass), where
// its inputs come from (a seed or .npy files), and what it reports. Parsed the
// same on every rank from the same argv, so a bad flag fails on all ranks alike
// and no rank is left waiting in a collective.
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim::mpi {

inline constexpr std::int64_t kMaxCheckTokens = 8192;

struct RingOptions {
  // Problem. With --q/--k/--v the sizes come from the files (block = tokens / ranks).
  std::int64_t block = 256;  // tokens per rank
  int heads = 8, kv_heads = 2, head_dim = 64;
  Layout layout = Layout::Ring;
  bool causal = true;
  Pass pass = Pass::Fwd;
  std::string dtype = "fp32";  // what the kernels compute and the ring carries
  std::uint64_t seed = 1;
  std::string q_path, k_path, v_path, do_path;
  // Most bytes each input file may take as float64, judged from its header.
  std::int64_t max_input_bytes = std::int64_t{1} << 30;
  std::int64_t tile = 256;  // the kernel's q and k chunk
  int threads = 1;          // threads per rank's kernel calls (one rank per core group)

  // Reporting.
  bool check = false;
  double tolerance_factor = 1;  // scales the check's tolerances (tests shrink it to see a failure)
  bool json = false;
  std::string trace;
  int repeat = 1;  // timed runs; the summary reports their median
  int warmup = 0;  // untimed runs first (page faults, caches)

  // --pingpong: measure the link between ranks 0 and 1 instead of running a ring.
  bool pingpong = false;
  std::int64_t pp_min_bytes = 8, pp_max_bytes = std::int64_t{16} << 20;
  int pp_iters = 50;

  bool from_files() const { return !q_path.empty(); }
  bool operator==(const RingOptions&) const = default;
};

// Result of parsing argv: run, or exit now with `exit_code` after printing
// `message` on rank 0 (help text with code 0, one error line with code 2).
struct ParsedArgs {
  RingOptions opts;
  bool exit_now = false;
  int exit_code = 0;
  std::string message;
};

// The program whose flags these are: ringsim-mpi (CPU kernels, fp32|fp64) or
// ringsim-mpi-nccl (CUDA kernels, bf16|fp16). The first dtype is the default.
struct Program {
  std::string name, about;
  std::vector<std::string> dtypes;
};
const Program& cpu_program();

ParsedArgs parse_args(int argc, const char* const* argv, const Program& prog = cpu_program());

// The flags that reproduce `o` (those at their default are left out), so a
// launcher builds a ringsim-mpi command line from typed options:
// parse_args(program + to_args(o)).opts == o.
std::vector<std::string> to_args(const RingOptions& o);

// Checks what only the communicator size can tell (ranks vs layout, sizes).
// Throws InputError naming the flag.
void validate(const RingOptions& o, int ranks);

// Bytes of one K/V element, and of one dK/dV element (fp32 for 16-bit inputs:
// gradients accumulate in fp32 and travel so).
int element_bytes(const std::string& dtype);
int grad_bytes(const std::string& dtype);

}  // namespace ringsim::mpi
