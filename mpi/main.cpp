// ringsim-mpi: ring attention across MPI ranks on the CPU kernels (one K/V
// block per rank), the per-step timeline in the simulator's trace format, a
// check against full attention, and a ping-pong mode that measures the link
// for the simulator. docs/mpi.md.
#include <optional>

#include "mpi/driver.hpp"
#include "mpi/inputs.hpp"
#include "mpi/ring.hpp"

namespace ringsim::mpi {
namespace {

template <typename T>
int run_ring(const World& w, RingOptions& o) {
  auto in = load_inputs<T>(w, o, o.check);
  const auto& shard = in.shard;
  Workspace<T> ws(shard, o.pass != Pass::Fwd);
  RingContext ctx{w, &o, 0, nullptr};
  std::optional<FwdOut<T>> fwd;
  std::optional<BwdOut<T>> bwd;
  auto once = [&](RankRun* rec) {
    ctx.rec = nullptr;
    if (o.pass == Pass::Bwd) {
      RS_MPI(MPI_Barrier(w.comm));
      fwd = ring_forward(ctx, shard, ws);  // untimed: backward needs O and LSE
    }
    // Every rank's clock starts as the barrier releases it.
    RS_MPI(MPI_Barrier(w.comm));
    const double cpu0 = thread_cpu_time();
    ctx.t0 = now();
    ctx.rec = rec;
    if (o.pass != Pass::Bwd) fwd = ring_forward(ctx, shard, ws);
    if (o.pass != Pass::Fwd) bwd = ring_backward(ctx, shard, *fwd, ws);
    if (rec) rec->cpu_s = thread_cpu_time() - cpu0;
  };
  for (int i = 0; i < o.warmup; ++i) once(nullptr);
  std::vector<RankRun> runs(static_cast<std::size_t>(o.repeat));
  for (auto& r : runs) once(&r);
  return finish_run(w, o, cpu_program(), runs, *fwd, bwd ? &*bwd : nullptr, in.full);
}

int run(const World& w, RingOptions& o) {
  return o.dtype == "fp32" ? run_ring<float>(w, o) : run_ring<double>(w, o);
}

}  // namespace
}  // namespace ringsim::mpi

int main(int argc, char** argv) {
  return ringsim::mpi::mpi_main(argc, argv, ringsim::mpi::cpu_program(), ringsim::mpi::run);
}
