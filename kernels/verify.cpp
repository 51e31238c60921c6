#include "kernels/verify.hpp"

#include <fmt/format.h>

#include "kernels/reference.hpp"
#include "models/core/documents.hpp"
#include "models/core/work.hpp"

namespace ringsim::kernels {

bool VerifyReport::passed() const {
  if (!work_mismatch.empty()) return false;
  for (const auto& e : errors)
    if (!e.ok) return false;
  return true;
}

std::string check_work_counts(const Workload& w, const EmulatorResult& r) {
  const auto steps = num_steps(w);
  const bool ring = w.layout != Layout::Ulysses && w.layout != Layout::Allgather;
  auto check_pass = [&](const PassWork& p, bool backward) -> std::string {
    const char* name = backward ? "backward" : "forward";
    if (static_cast<std::int64_t>(p.steps.size()) != w.devices)
      return fmt::format("{}: {} devices recorded, expected {}", name, p.steps.size(), w.devices);
    for (std::int64_t d = 0; d < w.devices; ++d) {
      const auto& dev = p.steps[static_cast<std::size_t>(d)];
      if (static_cast<std::int64_t>(dev.size()) != steps)
        return fmt::format("{}: device {} ran {} steps, the model has {}", name, d, dev.size(),
                           steps);
      for (std::int64_t s = 0; s < steps; ++s) {
        const auto& st = dev[static_cast<std::size_t>(s)];
        const auto want_src = kv_source(w, d, s);
        if (st.kv_source != want_src)
          return fmt::format("{}: device {} step {} used block {}, the model says {}", name, d, s,
                             st.kv_source, want_src);
        const auto want = step_entries(w, d, s);
        if (st.entries != want)
          return fmt::format("{}: device {} step {} computed {} score entries, the model says {}",
                             name, d, s, st.entries, want);
        const auto want_sent = s + 1 < steps ? ring_elements_per_step(w, backward) : 0;
        if (st.sent != want_sent)
          return fmt::format("{}: device {} step {} sent {} elements, the model says {}", name, d,
                             s, st.sent, want_sent);
      }
      if (backward) {
        const auto want_home = ring && steps > 1 ? 2 * kv_block_elements(w) : 0;
        if (p.home_sent[static_cast<std::size_t>(d)] != want_home)
          return fmt::format("backward: device {} sent {} dK/dV elements home, expected {}", d,
                             p.home_sent[static_cast<std::size_t>(d)], want_home);
      }
    }
    return "";
  };
  auto m = check_pass(r.fwd, false);
  if (m.empty() && !r.bwd.steps.empty()) m = check_pass(r.bwd, true);
  return m;
}

VerifyReport verify_run(const Workload& w, const AttnInputs& in, bool fp64, bool backward,
                        const BlockOpts& kernel, double tolerance_factor) {
  VerifyReport rep;
  rep.result =
      fp64 ? emulate<double>(w, in, backward, kernel) : emulate<float>(w, in, backward, kernel);
  rep.tolerance = tolerance_model(in, w.shape.kv_heads, w.shape.head_dim, fp64);
  const double tau = rep.tolerance.tau() * tolerance_factor;
  AttnShape s;
  s.seq_q = s.seq_k = w.devices * w.block;
  s.heads = w.shape.heads;
  s.kv_heads = w.shape.kv_heads;
  s.head_dim = w.shape.head_dim;
  s.causal = w.causal;
  s.doc_starts = document_starts(w.documents);
  const double floor = rep.tolerance.floor(tolerance_factor);
  const auto ref = reference_forward(s, in.q, in.k, in.v);
  rep.errors.push_back(compare("O", rep.result.o, ref.o, tau * max_abs_value(in.v), floor));
  rep.errors.push_back(compare("LSE", rep.result.lse, ref.lse, tau, floor));
  if (backward) {
    const auto g = reference_backward(s, in.q, in.k, in.v, in.d_o);
    rep.errors.push_back(compare("dQ", rep.result.dq, g.dq, tau * max_abs_value(g.dq), floor));
    rep.errors.push_back(compare("dK", rep.result.dk, g.dk, tau * max_abs_value(g.dk), floor));
    rep.errors.push_back(compare("dV", rep.result.dv, g.dv, tau * max_abs_value(g.dv), floor));
  }
  rep.work_mismatch = check_work_counts(w, rep.result);
  return rep;
}

}  // namespace ringsim::kernels
