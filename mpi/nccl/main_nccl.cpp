// ringsim-mpi-nccl: the ring of ringsim-mpi on GPUs, one rank per GPU, with the
// CUDA kernels and NCCL send/recv (mpi/nccl/nccl_ring.hpp). Same flags, trace,
// check and summary as ringsim-mpi; --dtype is bf16 or fp16. docs/mpi.md.
#include <optional>

#include "kernels/cuda/bits.hpp"
#include "mpi/driver.hpp"
#include "mpi/inputs.hpp"
#include "mpi/nccl/nccl_ring.hpp"

namespace ringsim::mpi::nccl {
namespace {

const Program& nccl_program() {
  static const Program p{"ringsim-mpi-nccl",
                         "ringsim-mpi-nccl: ring attention across GPUs (one MPI rank per GPU), "
                         "CUDA kernels and NCCL send/recv, with the per-step timeline\n(run under "
                         "mpirun/srun; see docs/mpi.md)",
                         {"bf16", "fp16"}};
  return p;
}

// The GPUs compute on 16-bit inputs; the reference must see the same values.
void round_to_storage(std::vector<double>& x, bool bf16) {
  namespace kc = kernels::cuda;
  for (auto& v : x)
    v = kc::storage_to_float(kc::float_to_storage(static_cast<float>(v), bf16), bf16);
}

int run(const World& w, RingOptions& o) {
  auto in = load_inputs<float>(w, o, o.check);
  const bool bf16 = o.dtype == "bf16";
  for (auto* x : {&in.full.q, &in.full.k, &in.full.v, &in.full.d_o}) round_to_storage(*x, bf16);
  GpuRing ring(w, o, in.shard);
  for (int i = 0; i < o.warmup; ++i) ring.run(nullptr);
  std::vector<RankRun> runs(static_cast<std::size_t>(o.repeat));
  for (auto& r : runs) ring.run(&r);
  const auto fwd = ring.forward_result();
  std::optional<BwdOut<float>> bwd;
  if (o.pass != Pass::Fwd) bwd = ring.backward_result();
  return finish_run(w, o, nccl_program(), runs, fwd, bwd ? &*bwd : nullptr, in.full);
}

}  // namespace
}  // namespace ringsim::mpi::nccl

int main(int argc, char** argv) {
  return ringsim::mpi::mpi_main(argc, argv, ringsim::mpi::nccl::nccl_program(),
                                ringsim::mpi::nccl::run);
}
