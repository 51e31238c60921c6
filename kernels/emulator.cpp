#include "kernels/emulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "kernels/merge.hpp"
#include "models/core/cancel.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/work.hpp"

namespace ringsim::kernels {

namespace {

// A K/V block travelling round the ring, with the positions of its tokens (the
// causal mask needs them) and, backward, the gradients it has gathered so far.
template <typename T>
struct KvBlock {
  HeadTensor<T> k, v, dk, dv;
  std::vector<std::int64_t> pos;
  std::int64_t owner = 0;  // ring position (device, or group for hybrid) it belongs to
};

// Ring/striped/zigzag, ulysses and hybrid are one scheme: groups of U
// consecutive devices exchange heads for tokens with an all-to-all, then the
// R = N/U groups form a ring. U = 1 is a plain ring, R = 1 pure Ulysses.
struct Geometry {
  std::int64_t n = 1, c = 1, u = 1, r = 1;
  int heads = 1, kv_heads = 1, dim = 1;
  bool has_ring = true;                                 // models' kv_source is -1 for ulysses
  std::vector<std::vector<std::int64_t>> group_tokens;  // [group] -> its U*c tokens

  std::int64_t device(std::int64_t g, std::int64_t t) const { return g * u + t; }
  // Tokens device (g, t) holds before the all-to-all: slice t of its group's.
  std::vector<std::int64_t> seq_tokens(std::int64_t g, std::int64_t t) const {
    const auto& gt = group_tokens[static_cast<std::size_t>(g)];
    return {gt.begin() + t * c, gt.begin() + (t + 1) * c};
  }
};

Geometry geometry(const Workload& w) {
  Geometry geo;
  geo.n = w.devices;
  geo.c = w.block;
  geo.heads = w.shape.heads;
  geo.kv_heads = w.shape.kv_heads;
  geo.dim = w.shape.head_dim;
  geo.u = w.ulysses();
  geo.r = geo.n / geo.u;
  geo.has_ring = w.layout != Layout::Ulysses;
  // The layout's token map, packed documents placed as w.pack says.
  for (std::int64_t g = 0; g < geo.r; ++g) geo.group_tokens.push_back(workload_tokens(w, g));
  return geo;
}

// All-to-all inside one group, sequence-sharded -> head-sharded: member t
// receives, from every member t', the rows t' holds of the heads t owns.
// src[t'] is [H][c][d]; the result [t] is [H/U][U*c][d]. Adds the elements each
// member sends to `sent`.
template <typename T>
std::vector<HeadTensor<T>> seq_to_heads(const std::vector<HeadTensor<T>>& src,
                                        std::uint64_t* sent) {
  const auto u = static_cast<int>(src.size());
  const int hl = src[0].heads / u, d = src[0].dim;
  const auto c = src[0].tokens;
  std::vector<HeadTensor<T>> dst;
  for (int t = 0; t < u; ++t) {
    HeadTensor<T> x(hl, c * u, d);
    for (int s = 0; s < u; ++s) {
      for (int h = 0; h < hl; ++h)
        std::copy_n(src[static_cast<std::size_t>(s)].head(t * hl + h), c * d, x.row(h, s * c));
      if (s != t) sent[s] += static_cast<std::uint64_t>(hl * c * d);
    }
    dst.push_back(std::move(x));
  }
  return dst;
}

// The inverse all-to-all: head-sharded [H/U][U*c][d] -> sequence-sharded [H][c][d].
template <typename T>
std::vector<HeadTensor<T>> heads_to_seq(const std::vector<HeadTensor<T>>& src,
                                        std::uint64_t* sent) {
  const auto u = static_cast<int>(src.size());
  const int hl = src[0].heads, d = src[0].dim;
  const auto c = src[0].tokens / u;
  std::vector<HeadTensor<T>> dst;
  for (int t = 0; t < u; ++t) {
    HeadTensor<T> x(hl * u, c, d);
    for (int s = 0; s < u; ++s) {
      for (int h = 0; h < hl; ++h)
        std::copy_n(src[static_cast<std::size_t>(s)].row(h, t * c), c * d, x.head(s * hl + h));
      if (s != t) sent[s] += static_cast<std::uint64_t>(hl * c * d);
    }
    dst.push_back(std::move(x));
  }
  return dst;
}

// One ring step's send: block i moves to the next ring position; device (g, t)
// passes to (g + 1, t).
template <typename T>
std::vector<KvBlock<T>> rotate(std::vector<KvBlock<T>>& held, const Geometry& geo) {
  std::vector<KvBlock<T>> next(held.size());
  for (std::int64_t g = 0; g < geo.r; ++g)
    for (std::int64_t t = 0; t < geo.u; ++t)
      next[static_cast<std::size_t>(geo.device((g + 1) % geo.r, t))] =
          std::move(held[static_cast<std::size_t>(geo.device(g, t))]);
  return next;
}

PassWork empty_pass(std::int64_t devices, std::int64_t steps) {
  PassWork p;
  p.steps.assign(static_cast<std::size_t>(devices),
                 std::vector<StepWork>(static_cast<std::size_t>(steps)));
  p.collective_sent.assign(static_cast<std::size_t>(devices), 0);
  p.home_sent.assign(static_cast<std::size_t>(devices), 0);
  return p;
}

template <typename T>
EmulatorResult emulate_ring(const Workload& w, const AttnInputs& in, bool backward,
                            const BlockOpts& opts) {
  const auto geo = geometry(w);
  const auto n = geo.n, u = geo.u, r = geo.r;
  const int hl = geo.heads / static_cast<int>(u), kvl = geo.kv_heads / static_cast<int>(u);
  EmulatorResult res;
  res.fwd = empty_pass(n, r);

  // Sequence shards, then the all-to-all inside each group (a no-op for U = 1).
  std::vector<HeadTensor<T>> qh, oh, dqh;
  std::vector<std::vector<T>> lseh;
  std::vector<KvBlock<T>> held(static_cast<std::size_t>(n));
  std::vector<std::vector<std::int64_t>> seq(static_cast<std::size_t>(n));
  for (std::int64_t g = 0; g < r; ++g) {
    std::vector<HeadTensor<T>> qs, ks, vs;
    for (std::int64_t t = 0; t < u; ++t) {
      const auto toks = geo.seq_tokens(g, t);
      qs.push_back(gather_rows<T>(in.q, geo.heads, geo.dim, toks, 0, geo.heads));
      ks.push_back(gather_rows<T>(in.k, geo.kv_heads, geo.dim, toks, 0, geo.kv_heads));
      vs.push_back(gather_rows<T>(in.v, geo.kv_heads, geo.dim, toks, 0, geo.kv_heads));
      seq[static_cast<std::size_t>(geo.device(g, t))] = toks;
    }
    std::uint64_t* sent = &res.fwd.collective_sent[static_cast<std::size_t>(geo.device(g, 0))];
    auto qg = u > 1 ? seq_to_heads(qs, sent) : std::move(qs);
    auto kg = u > 1 ? seq_to_heads(ks, sent) : std::move(ks);
    auto vg = u > 1 ? seq_to_heads(vs, sent) : std::move(vs);
    for (std::int64_t t = 0; t < u; ++t) {
      auto& b = held[static_cast<std::size_t>(geo.device(g, t))];
      b.k = std::move(kg[static_cast<std::size_t>(t)]);
      b.v = std::move(vg[static_cast<std::size_t>(t)]);
      b.pos = geo.group_tokens[static_cast<std::size_t>(g)];
      b.owner = g;
      qh.push_back(std::move(qg[static_cast<std::size_t>(t)]));
    }
  }
  oh.resize(static_cast<std::size_t>(n));
  lseh.resize(static_cast<std::size_t>(n));

  BlockOpts ko = opts;
  ko.causal = w.causal;
  ko.doc_starts = document_starts(w.documents);
  std::vector<FwdResult<T>> acc(static_cast<std::size_t>(n));
  FwdResult<T> part;  // one step's partial result, reused by every device and step
  for (std::int64_t s = 0; s < r; ++s) {
    for (std::int64_t i = 0; i < n; ++i) {
      throw_if_cancelled();  // per device and step: a step of all devices took seconds
      const auto ii = static_cast<std::size_t>(i);
      const auto& qpos = geo.group_tokens[static_cast<std::size_t>(i / u)];
      auto& out = s == 0 ? acc[ii] : part;
      blockwise_forward_into(qh[ii], held[ii].k, held[ii].v, qpos, held[ii].pos, ko, out);
      // A step whose keys are all masked (causal, contiguous layout; keys all
      // in other documents) yields LSE -inf everywhere, whose merge weight is
      // exactly 0: skipping it gives the same bits and saves a pass over the
      // output. The kernel itself skipped every tile of it.
      if (s > 0 && out.entries > 0) merge_partial(acc[ii].o, acc[ii].lse, part.o, part.lse);
      auto& rec = res.fwd.steps[ii][static_cast<std::size_t>(s)];
      rec.kv_source = geo.has_ring ? held[ii].owner : -1;
      rec.entries = out.entries;
      rec.q_rows = qh[ii].tokens;
      rec.k_cols = held[ii].k.tokens;
      if (s + 1 < r) rec.sent = held[ii].k.size() + held[ii].v.size();
    }
    if (s + 1 < r) held = rotate(held, geo);
  }
  for (std::int64_t i = 0; i < n; ++i) {
    oh[static_cast<std::size_t>(i)] = std::move(acc[static_cast<std::size_t>(i)].o);
    lseh[static_cast<std::size_t>(i)] = std::move(acc[static_cast<std::size_t>(i)].lse);
  }

  // Output all-to-all back to sequence shards (the LSE stays where backward needs it).
  res.o.assign(in.q.size(), 0.0);
  res.lse.assign(in.q.size() / static_cast<std::size_t>(geo.dim), 0.0);
  for (std::int64_t g = 0; g < r; ++g) {
    std::vector<HeadTensor<T>> og(oh.begin() + g * u, oh.begin() + (g + 1) * u);
    auto os = u > 1 ? heads_to_seq(og, &res.fwd.collective_sent[static_cast<std::size_t>(g * u)])
                    : std::move(og);
    for (std::int64_t t = 0; t < u; ++t) {
      const auto i = static_cast<std::size_t>(geo.device(g, t));
      scatter_rows(os[static_cast<std::size_t>(t)], geo.heads, seq[i], 0, res.o);
      scatter_scalars(lseh[i], hl, geo.group_tokens[static_cast<std::size_t>(g)], geo.heads,
                      static_cast<int>(t) * hl, res.lse);
    }
  }
  for (const auto& dev : res.fwd.steps)
    for (const auto& st : dev) {
      res.max_q_rows = std::max(res.max_q_rows, st.q_rows);
      res.max_k_cols = std::max(res.max_k_cols, st.k_cols);
    }
  if (!backward) return res;

  // Backward: dO takes the same all-to-all as Q; O and LSE are still
  // head-sharded from the forward pass.
  res.bwd = empty_pass(n, r);
  std::vector<HeadTensor<T>> doh;
  std::vector<std::vector<T>> delta(static_cast<std::size_t>(n));
  for (std::int64_t g = 0; g < r; ++g) {
    std::vector<HeadTensor<T>> ds;
    for (std::int64_t t = 0; t < u; ++t)
      ds.push_back(gather_rows<T>(in.d_o, geo.heads, geo.dim,
                                  seq[static_cast<std::size_t>(geo.device(g, t))], 0, geo.heads));
    auto dg = u > 1 ? seq_to_heads(ds, &res.bwd.collective_sent[static_cast<std::size_t>(g * u)])
                    : std::move(ds);
    for (auto& x : dg) doh.push_back(std::move(x));
  }
  // Fresh K/V blocks at home, with zeroed gradient accumulators.
  held = rotate(held, geo);  // after r-1 forward rotations, one more brings each block home
  for (std::int64_t i = 0; i < n; ++i) {
    const auto ii = static_cast<std::size_t>(i);
    if (held[ii].owner != i / u) throw std::logic_error("emulator: K/V block not home");
    held[ii].dk = HeadTensor<T>(kvl, held[ii].k.tokens, geo.dim);
    held[ii].dv = HeadTensor<T>(kvl, held[ii].v.tokens, geo.dim);
    delta[ii] = softmax_delta(oh[ii], doh[ii]);
    dqh.emplace_back(hl, qh[ii].tokens, geo.dim);
  }
  for (std::int64_t s = 0; s < r; ++s) {
    for (std::int64_t i = 0; i < n; ++i) {
      throw_if_cancelled();
      const auto ii = static_cast<std::size_t>(i);
      auto& b = held[ii];
      const auto& qpos = geo.group_tokens[static_cast<std::size_t>(i / u)];
      auto& rec = res.bwd.steps[ii][static_cast<std::size_t>(s)];
      rec.entries = blockwise_backward_accumulate(qh[ii], b.k, b.v, doh[ii], lseh[ii], delta[ii],
                                                  qpos, b.pos, ko, dqh[ii], b.dk, b.dv);
      rec.kv_source = geo.has_ring ? b.owner : -1;
      rec.q_rows = qh[ii].tokens;
      rec.k_cols = b.k.tokens;
      if (s + 1 < r) rec.sent = b.k.size() + b.v.size() + b.dk.size() + b.dv.size();
    }
    if (s + 1 < r) held = rotate(held, geo);
  }
  if (r > 1) {
    // The hop home: only dK and dV travel; K and V are still at home.
    for (std::int64_t i = 0; i < n; ++i)
      res.bwd.home_sent[static_cast<std::size_t>(i)] =
          held[static_cast<std::size_t>(i)].dk.size() + held[static_cast<std::size_t>(i)].dv.size();
    held = rotate(held, geo);
  }

  res.dq.assign(in.q.size(), 0.0);
  res.dk.assign(in.k.size(), 0.0);
  res.dv.assign(in.v.size(), 0.0);
  for (std::int64_t g = 0; g < r; ++g) {
    std::vector<HeadTensor<T>> dqg(dqh.begin() + g * u, dqh.begin() + (g + 1) * u), dkg, dvg;
    for (std::int64_t t = 0; t < u; ++t) {
      auto& b = held[static_cast<std::size_t>(geo.device(g, t))];
      if (b.owner != g) throw std::logic_error("emulator: dK/dV not home");
      dkg.push_back(std::move(b.dk));
      dvg.push_back(std::move(b.dv));
    }
    std::uint64_t* sent = &res.bwd.collective_sent[static_cast<std::size_t>(g * u)];
    auto dqs = u > 1 ? heads_to_seq(dqg, sent) : std::move(dqg);
    auto dks = u > 1 ? heads_to_seq(dkg, sent) : std::move(dkg);
    auto dvs = u > 1 ? heads_to_seq(dvg, sent) : std::move(dvg);
    for (std::int64_t t = 0; t < u; ++t) {
      const auto& toks = seq[static_cast<std::size_t>(geo.device(g, t))];
      scatter_rows(dqs[static_cast<std::size_t>(t)], geo.heads, toks, 0, res.dq);
      scatter_rows(dks[static_cast<std::size_t>(t)], geo.kv_heads, toks, 0, res.dk);
      scatter_rows(dvs[static_cast<std::size_t>(t)], geo.kv_heads, toks, 0, res.dv);
    }
  }
  return res;
}

// All-gather CP: queries stay sharded (zigzag chunks), K/V are gathered into
// token order on every device, one local attention; backward reduce-scatters
// the partial dK/dV back to their owners.
template <typename T>
EmulatorResult emulate_allgather(const Workload& w, const AttnInputs& in, bool backward,
                                 const BlockOpts& opts) {
  const auto n = w.devices, c = w.block, S = n * c;
  const int H = w.shape.heads, Hk = w.shape.kv_heads, d = w.shape.head_dim;
  EmulatorResult res;
  res.fwd = empty_pass(n, 1);
  BlockOpts ko = opts;
  ko.causal = w.causal;
  ko.doc_starts = document_starts(w.documents);

  std::vector<std::vector<std::int64_t>> toks;
  std::vector<HeadTensor<T>> qs, ks, vs;
  for (std::int64_t i = 0; i < n; ++i) {
    toks.push_back(workload_tokens(w, i));
    qs.push_back(gather_rows<T>(in.q, H, d, toks.back(), 0, H));
    ks.push_back(gather_rows<T>(in.k, Hk, d, toks.back(), 0, Hk));
    vs.push_back(gather_rows<T>(in.v, Hk, d, toks.back(), 0, Hk));
  }
  // Every device ends with the same gathered K/V, so one copy stands for all;
  // each device sends its block to the N-1 others (a ring all-gather forwards
  // N-1 blocks per device).
  HeadTensor<T> kall(Hk, S, d), vall(Hk, S, d);
  for (std::int64_t j = 0; j < n; ++j) {
    const auto jj = static_cast<std::size_t>(j);
    for (int h = 0; h < Hk; ++h)
      for (std::int64_t t = 0; t < c; ++t) {
        std::copy_n(ks[jj].row(h, t), d, kall.row(h, toks[jj][static_cast<std::size_t>(t)]));
        std::copy_n(vs[jj].row(h, t), d, vall.row(h, toks[jj][static_cast<std::size_t>(t)]));
      }
    res.fwd.collective_sent[jj] =
        static_cast<std::uint64_t>(n - 1) * (ks[jj].size() + vs[jj].size());
  }
  const auto all_pos = iota_positions(S);
  res.o.assign(in.q.size(), 0.0);
  res.lse.assign(in.q.size() / static_cast<std::size_t>(d), 0.0);
  std::vector<FwdResult<T>> fw;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto ii = static_cast<std::size_t>(i);
    fw.push_back(blockwise_forward(qs[ii], kall, vall, toks[ii], all_pos, ko));
    auto& rec = res.fwd.steps[ii][0];
    rec.entries = fw.back().entries;
    rec.q_rows = c;
    rec.k_cols = S;
    scatter_rows(fw.back().o, H, toks[ii], 0, res.o);
    scatter_scalars(fw.back().lse, H, toks[ii], H, 0, res.lse);
  }
  res.max_q_rows = c;
  res.max_k_cols = S;
  if (!backward) return res;

  res.bwd = empty_pass(n, 1);
  res.dq.assign(in.q.size(), 0.0);
  res.dk.assign(in.k.size(), 0.0);
  res.dv.assign(in.v.size(), 0.0);
  std::vector<HeadTensor<T>> dk_own, dv_own;
  for (std::int64_t i = 0; i < n; ++i) {
    dk_own.emplace_back(Hk, c, d);
    dv_own.emplace_back(Hk, c, d);
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const auto ii = static_cast<std::size_t>(i);
    const auto dO = gather_rows<T>(in.d_o, H, d, toks[ii], 0, H);
    auto g =
        blockwise_backward(qs[ii], kall, vall, fw[ii].o, fw[ii].lse, dO, toks[ii], all_pos, ko);
    res.bwd.steps[ii][0].entries = g.entries;
    res.bwd.steps[ii][0].q_rows = c;
    res.bwd.steps[ii][0].k_cols = S;
    scatter_rows(g.dq, H, toks[ii], 0, res.dq);
    // Reduce-scatter: device i's partial dK/dV for owner j's tokens go to j.
    for (std::int64_t j = 0; j < n; ++j) {
      const auto jj = static_cast<std::size_t>(j);
      for (int h = 0; h < Hk; ++h)
        for (std::int64_t t = 0; t < c; ++t) {
          const auto src = toks[jj][static_cast<std::size_t>(t)];
          for (int e = 0; e < d; ++e) {
            dk_own[jj].row(h, t)[e] += g.dk.row(h, src)[e];
            dv_own[jj].row(h, t)[e] += g.dv.row(h, src)[e];
          }
        }
      if (j != i) res.bwd.collective_sent[ii] += dk_own[jj].size() + dv_own[jj].size();
    }
  }
  for (std::int64_t j = 0; j < n; ++j) {
    scatter_rows(dk_own[static_cast<std::size_t>(j)], Hk, toks[static_cast<std::size_t>(j)], 0,
                 res.dk);
    scatter_rows(dv_own[static_cast<std::size_t>(j)], Hk, toks[static_cast<std::size_t>(j)], 0,
                 res.dv);
  }
  return res;
}

}  // namespace

void check_emulation(const Workload& w) {
  const auto& s = w.shape;
  if (w.devices < 1)
    throw InputError(fmt::format("--devices: must be at least 1, got {}", w.devices));
  if (w.block < 1) throw InputError(fmt::format("--block: must be at least 1, got {}", w.block));
  if (s.heads < 1 || s.kv_heads < 1 || s.head_dim < 1)
    throw InputError("--heads/--kv-heads/--head-dim: must be at least 1");
  if (s.heads % s.kv_heads != 0)
    throw InputError(
        fmt::format("--kv-heads: must divide --heads ({}), got {}", s.heads, s.kv_heads));
  if ((w.layout == Layout::Zigzag || w.layout == Layout::Allgather) && w.block % 2 != 0)
    throw InputError(fmt::format(
        "--block: {} splits each device's block into two chunks, so it must be even, got {}",
        to_string(w.layout), w.block));
  if (w.layout == Layout::Ulysses && s.kv_heads % w.devices != 0)
    throw InputError(fmt::format(
        "--devices: ulysses splits the {} KV heads across the devices, so the devices must divide "
        "them, got {}; use --layout hybrid for more devices",
        s.kv_heads, w.devices));
  if (w.layout == Layout::Hybrid) {
    const auto u = w.ulysses_degree;
    if (u < 1 || w.devices % u != 0 || s.kv_heads % u != 0)
      throw InputError(
          fmt::format("--ulysses-degree: must divide --devices ({}) and the KV heads ({}), got {}",
                      w.devices, s.kv_heads, u));
    if ((w.block * u) % 2 != 0)
      throw InputError(fmt::format(
          "--block: hybrid's zigzag ring splits each group block (block x ulysses degree = {}) in "
          "two, so it must be even",
          w.block * u));
  }
  check_documents(w);
}

template <typename T>
EmulatorResult emulate(const Workload& w, const AttnInputs& in, bool backward,
                       const BlockOpts& kernel) {
  check_emulation(w);
  const auto S = static_cast<std::size_t>(w.devices * w.block);
  const auto d = static_cast<std::size_t>(w.shape.head_dim);
  if (in.q.size() != S * static_cast<std::size_t>(w.shape.heads) * d ||
      in.k.size() != S * static_cast<std::size_t>(w.shape.kv_heads) * d ||
      in.v.size() != in.k.size() || (backward && in.d_o.size() != in.q.size()))
    throw std::invalid_argument("emulate: input sizes do not match the workload");
  if (w.layout == Layout::Allgather) return emulate_allgather<T>(w, in, backward, kernel);
  return emulate_ring<T>(w, in, backward, kernel);
}

template EmulatorResult emulate<float>(const Workload&, const AttnInputs&, bool, const BlockOpts&);
template EmulatorResult emulate<double>(const Workload&, const AttnInputs&, bool, const BlockOpts&);

}  // namespace ringsim::kernels
