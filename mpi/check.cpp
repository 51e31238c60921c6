#include "mpi/check.hpp"

#include <fmt/format.h>

#include <cmath>

#include "kernels/reference.hpp"
#include "models/core/work.hpp"

namespace ringsim::mpi {

namespace {

// Rank 0 receives every rank's copy of a local tensor (all ranks' are the same
// size) and returns them in rank order.
template <typename T>
std::vector<std::vector<T>> gather_local(const World& w, const std::vector<T>& mine) {
  std::vector<T> all(w.rank == 0 ? mine.size() * static_cast<std::size_t>(w.size) : 0);
  RS_MPI(MPI_Gather(mine.data(), static_cast<int>(mine.size()), mpi_type<T>(), all.data(),
                    static_cast<int>(mine.size()), mpi_type<T>(), 0, w.comm));
  std::vector<std::vector<T>> out;
  if (w.rank == 0)
    for (int r = 0; r < w.size; ++r)
      out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(r * mine.size()),
                       all.begin() + static_cast<std::ptrdiff_t>((r + 1) * mine.size()));
  return out;
}

// Gathers a head-major [heads][c][dim] tensor into token-major [S, heads, dim].
template <typename T>
std::vector<double> gather_rows_global(const World& w, const RingOptions& o,
                                       const kernels::HeadTensor<T>& mine) {
  auto parts = gather_local(w, mine.data);
  std::vector<double> x;
  if (w.rank != 0) return x;
  x.assign(static_cast<std::size_t>(o.block * w.size) * mine.heads * mine.dim, 0.0);
  for (int r = 0; r < w.size; ++r) {
    kernels::HeadTensor<T> t(mine.heads, mine.tokens, mine.dim);
    t.data = std::move(parts[static_cast<std::size_t>(r)]);
    kernels::scatter_rows(t, mine.heads, device_tokens(o.layout, w.size, o.block, r), 0, x);
  }
  return x;
}

template <typename T>
std::vector<double> gather_lse_global(const World& w, const RingOptions& o,
                                      const std::vector<T>& mine) {
  auto parts = gather_local(w, mine);
  std::vector<double> x;
  if (w.rank != 0) return x;
  x.assign(static_cast<std::size_t>(o.block * w.size) * o.heads, 0.0);
  for (int r = 0; r < w.size; ++r)
    kernels::scatter_scalars(parts[static_cast<std::size_t>(r)], o.heads,
                             device_tokens(o.layout, w.size, o.block, r), o.heads, 0, x);
  return x;
}

}  // namespace

nlohmann::json CheckResult::to_json() const {
  return {{"matches", matches}, {"tolerance_tau", tau}, {"errors", kernels::to_json(errors)}};
}

std::string CheckResult::line() const {
  std::string errs;
  for (const auto& e : errors)
    errs += fmt::format("{}{} {:.3g} (tol {:.3g}{})", errs.empty() ? "" : ", ", e.tensor, e.max_abs,
                        e.tolerance,
                        !e.reason.empty() ? ": not judged, " + e.reason
                        : !e.note.empty() ? ", absolute floor"
                                          : "");
  return fmt::format("Matches full attention: {} (max abs error: {})", matches ? "True" : "False",
                     errs);
}

template <typename T>
CheckResult check_against_reference(const World& w, const RingOptions& o, const FwdOut<T>& fwd,
                                    const BwdOut<T>* bwd, const FullInputs& full) {
  const auto o_all = gather_rows_global(w, o, fwd.o);
  const auto lse_all = gather_lse_global(w, o, fwd.lse);
  std::vector<double> dq, dk, dv;
  if (bwd) {
    dq = gather_rows_global(w, o, bwd->dq);
    dk = gather_rows_global(w, o, bwd->dk);
    dv = gather_rows_global(w, o, bwd->dv);
  }
  CheckResult res;
  if (w.rank != 0) return res;
  kernels::AttnInputs in{full.q, full.k, full.v, full.d_o};
  auto model = kernels::tolerance_model(in, o.kv_heads, o.head_dim, o.dtype == "fp64");
  // 16-bit inputs (the CUDA ring): the kernels round P to the input type before
  // P V (FlashAttention-2), so the unit roundoff is the input type's.
  if (o.dtype == "bf16") model.unit_roundoff = std::ldexp(1.0, -8);
  if (o.dtype == "fp16") model.unit_roundoff = std::ldexp(1.0, -11);
  // ... and results are stored in it: its smallest subnormal bounds what they resolve.
  if (o.dtype == "bf16") model.smallest = std::ldexp(1.0, -133);
  if (o.dtype == "fp16") model.smallest = std::ldexp(1.0, -24);
  res.tau = model.tau() * o.tolerance_factor;
  const double floor = model.floor(o.tolerance_factor);
  kernels::AttnShape shape;
  shape.seq_q = shape.seq_k = o.block * w.size;
  shape.heads = o.heads;
  shape.kv_heads = o.kv_heads;
  shape.head_dim = o.head_dim;
  shape.causal = o.causal;
  auto record = [&](const char* name, const std::vector<double>& x, const std::vector<double>& ref,
                    double tol) {
    res.errors.push_back(kernels::compare(name, x, ref, tol, floor));
    res.matches = res.matches && res.errors.back().ok;
  };
  const auto ref = kernels::reference_forward(shape, full.q, full.k, full.v);
  record("O", o_all, ref.o, res.tau * kernels::max_abs_value(full.v));
  record("LSE", lse_all, ref.lse, res.tau);
  if (bwd) {
    const auto g = kernels::reference_backward(shape, full.q, full.k, full.v, full.d_o);
    record("dQ", dq, g.dq, res.tau * kernels::max_abs_value(g.dq));
    record("dK", dk, g.dk, res.tau * kernels::max_abs_value(g.dk));
    record("dV", dv, g.dv, res.tau * kernels::max_abs_value(g.dv));
  }
  return res;
}

template CheckResult check_against_reference(const World&, const RingOptions&, const FwdOut<float>&,
                                             const BwdOut<float>*, const FullInputs&);
template CheckResult check_against_reference(const World&, const RingOptions&,
                                             const FwdOut<double>&, const BwdOut<double>*,
                                             const FullInputs&);

}  // namespace ringsim::mpi
