#include "kernels/inference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>

#include "kernels/inputs.hpp"
#include "kernels/merge.hpp"
#include "kernels/reference.hpp"
#include "models/core/cancel.hpp"
#include "models/core/documents.hpp"

namespace ringsim::kernels {

namespace {

// A shard of queries or of K/V, with its tokens' absolute positions (the
// causal mask needs them) and the rank it belongs to.
template <typename T>
struct KvShard {
  HeadTensor<T> k, v;
  std::vector<std::int64_t> pos;
  std::int64_t owner = 0;
};

template <typename T>
struct QueryShard {
  HeadTensor<T> q;
  std::vector<std::int64_t> pos;
  std::int64_t owner = 0;
};

std::size_t at(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

// Rank i's K/V: its cached tokens, then its new ones. Every cached position
// precedes every new one, so the concatenation is ascending, as the kernels'
// tile skipping requires.
template <typename T>
KvShard<T> kv_shard(const InferWork& w, const InferInputs& in, std::int64_t rank) {
  KvShard<T> s;
  s.pos = infer_cached_tokens(w, rank);
  const auto fresh = infer_fresh_kv_tokens(w, rank);
  s.pos.insert(s.pos.end(), fresh.begin(), fresh.end());
  s.k = gather_rows<T>(in.k, w.kv_heads, w.head_dim, s.pos, 0, w.kv_heads);
  s.v = gather_rows<T>(in.v, w.kv_heads, w.head_dim, s.pos, 0, w.kv_heads);
  s.owner = rank;
  return s;
}

// Rows of q (indexed from the first new token) for absolute positions.
std::vector<std::int64_t> query_rows(const InferWork& w, std::vector<std::int64_t> pos) {
  for (auto& p : pos) p -= w.cached;
  return pos;
}

template <typename T>
QueryShard<T> query_shard(const InferWork& w, const InferInputs& in, std::int64_t rank) {
  QueryShard<T> s;
  s.pos = infer_query_tokens(w, rank);
  s.q = gather_rows<T>(in.q, w.heads, w.head_dim, query_rows(w, s.pos), 0, w.heads);
  s.owner = rank;
  return s;
}

// The merge's identity: O = 0, LSE = -inf (merge_row copies the other side).
template <typename T>
FwdResult<T> empty_partial(int heads, std::int64_t tokens, int dim) {
  FwdResult<T> r;
  r.o = HeadTensor<T>(heads, tokens, dim);
  r.lse.assign(static_cast<std::size_t>(heads) * static_cast<std::size_t>(tokens),
               -std::numeric_limits<T>::infinity());
  return r;
}

bool dropped(const InferFault& f, std::int64_t rank, std::int64_t step) {
  return f.drop_rank == rank && f.drop_step == step;
}

template <typename T>
void merge_into(FwdResult<T>& acc, const FwdResult<T>& part) {
  // A partial whose keys are all masked (later positions, other documents)
  // has LSE -inf everywhere, merge weight exactly 0: skipping it gives the
  // same bits and saves a pass over the output.
  if (part.entries > 0) merge_partial(acc.o, acc.lse, part.o, part.lse);
}

template <typename T>
void write_output(const InferWork& w, const FwdResult<T>& acc, const std::vector<std::int64_t>& pos,
                  InferResult& res) {
  const auto rows = query_rows(w, pos);
  scatter_rows(acc.o, w.heads, rows, 0, res.o);
  scatter_scalars(acc.lse, w.heads, rows, w.heads, 0, res.lse);
}

template <typename T>
InferStep record(const QueryShard<T>& q, const KvShard<T>& kv, const FwdResult<T>& part,
                 bool replicated_queries) {
  InferStep st;
  st.q_source = replicated_queries ? -1 : q.owner;
  st.kv_source = kv.owner;
  st.entries = part.entries;
  st.q_rows = q.q.tokens;
  st.k_cols = kv.k.tokens;
  return st;
}

template <typename T>
void prefill_pass_kv(const InferWork& w, const InferInputs& in, const BlockOpts& ko,
                     const InferFault& fault, InferResult& res) {
  const auto n = w.ranks;
  std::vector<QueryShard<T>> qs;
  std::vector<KvShard<T>> held;
  std::vector<FwdResult<T>> acc;
  for (std::int64_t i = 0; i < n; ++i) {
    qs.push_back(query_shard<T>(w, in, i));
    held.push_back(kv_shard<T>(w, in, i));
    acc.push_back(empty_partial<T>(w.heads, qs.back().q.tokens, w.head_dim));
  }
  FwdResult<T> part;  // one step's partial, reused by every rank and step
  for (std::int64_t s = 0; s < n; ++s) {
    throw_if_cancelled();
    for (std::int64_t i = 0; i < n; ++i) {
      const auto& q = qs[at(i)];
      const auto& kv = held[at(i)];
      blockwise_forward_into(q.q, kv.k, kv.v, q.pos, kv.pos, ko, part);
      if (!dropped(fault, i, s)) merge_into(acc[at(i)], part);
      auto& st = res.steps[at(i)][at(s)] = record(q, kv, part, false);
      if (s + 1 < n) st.sent = kv.k.size() + kv.v.size();
    }
    if (s + 1 < n) {  // every shard moves on to the next rank
      std::vector<KvShard<T>> next(held.size());
      for (std::int64_t i = 0; i < n; ++i) next[at((i + 1) % n)] = std::move(held[at(i)]);
      held = std::move(next);
    }
  }
  for (std::int64_t i = 0; i < n; ++i) write_output(w, acc[at(i)], qs[at(i)].pos, res);
}

template <typename T>
void prefill_pass_q(const InferWork& w, const InferInputs& in, const BlockOpts& ko,
                    const InferFault& fault, InferResult& res) {
  const auto n = w.ranks;
  std::vector<KvShard<T>> kv;
  std::vector<QueryShard<T>> held;
  std::vector<FwdResult<T>> acc;  // [owner]
  std::vector<std::vector<std::int64_t>> own_pos;
  for (std::int64_t i = 0; i < n; ++i) {
    kv.push_back(kv_shard<T>(w, in, i));
    held.push_back(query_shard<T>(w, in, i));
    acc.push_back(empty_partial<T>(w.heads, held.back().q.tokens, w.head_dim));
    own_pos.push_back(held.back().pos);
  }
  // The computing rank keeps each foreign partial until the all-to-all after
  // the ring, and the owner merges its N partials in step order. Merging each
  // one into the owner's result as soon as it is computed is that same order,
  // so the same bits, without holding N x N partials.
  FwdResult<T> part;
  for (std::int64_t s = 0; s < n; ++s) {
    throw_if_cancelled();
    for (std::int64_t i = 0; i < n; ++i) {
      const auto& q = held[at(i)];
      blockwise_forward_into(q.q, kv[at(i)].k, kv[at(i)].v, q.pos, kv[at(i)].pos, ko, part);
      if (!dropped(fault, i, s)) merge_into(acc[at(q.owner)], part);
      auto& st = res.steps[at(i)][at(s)] = record(q, kv[at(i)], part, false);
      if (s + 1 < n) st.sent = q.q.size();
      // The return all-to-all: this partial's O and LSE go back to the owner.
      if (q.owner != i) res.return_sent[at(i)] += part.o.size() + part.lse.size();
    }
    if (s + 1 < n) {  // every query shard moves on to the next rank
      std::vector<QueryShard<T>> next(held.size());
      for (std::int64_t i = 0; i < n; ++i) next[at((i + 1) % n)] = std::move(held[at(i)]);
      held = std::move(next);
    }
  }
  for (std::int64_t j = 0; j < n; ++j) write_output(w, acc[at(j)], own_pos[at(j)], res);
}

template <typename T>
void decode(const InferWork& w, const InferInputs& in, const BlockOpts& ko, const InferFault& fault,
            InferResult& res) {
  // Every rank holds the same queries; one copy stands for all of them.
  const auto q = query_shard<T>(w, in, 0);
  auto acc = empty_partial<T>(w.heads, q.q.tokens, w.head_dim);
  FwdResult<T> part;
  // Rank 0 merges in rank order, its own partial first.
  for (std::int64_t i = 0; i < w.ranks; ++i) {
    const auto kv = kv_shard<T>(w, in, i);
    blockwise_forward_into(q.q, kv.k, kv.v, q.pos, kv.pos, ko, part);
    res.steps[at(i)][0] = record(q, kv, part, true);
    if (i > 0) res.return_sent[at(i)] = part.o.size() + part.lse.size();
    if (!dropped(fault, i, 0)) merge_into(acc, part);
  }
  write_output(w, acc, q.pos, res);
}

}  // namespace

template <typename T>
InferResult emulate_infer(const InferWork& w, const InferInputs& in, const BlockOpts& kernel,
                          const InferFault& fault) {
  check_infer(w);
  const auto d = static_cast<std::size_t>(w.head_dim);
  if (in.q.size() != static_cast<std::size_t>(w.fresh) * static_cast<std::size_t>(w.heads) * d ||
      in.k.size() !=
          static_cast<std::size_t>(w.context()) * static_cast<std::size_t>(w.kv_heads) * d ||
      in.v.size() != in.k.size())
    throw std::invalid_argument("emulate_infer: input sizes do not match the work");
  InferResult res;
  res.steps.assign(at(w.ranks), std::vector<InferStep>(at(infer_steps(w))));
  res.return_sent.assign(at(w.ranks), 0);
  res.o.assign(in.q.size(), 0.0);
  res.lse.assign(in.q.size() / d, 0.0);
  BlockOpts ko = kernel;
  ko.causal = w.causal;
  // Packed documents over the absolute positions: the kernels skip every tile
  // whose keys lie in other documents, and merge_into skips a partial with no
  // visible pair, as the training ring does (kernels/emulator.cpp).
  ko.doc_starts = document_starts(w.documents);
  if (w.mode == InferMode::Decode)
    decode<T>(w, in, ko, fault, res);
  else if (w.variant == InferVariant::PassKv)
    prefill_pass_kv<T>(w, in, ko, fault, res);
  else
    prefill_pass_q<T>(w, in, ko, fault, res);
  for (const auto& rank : res.steps)
    for (const auto& st : rank) {
      res.max_q_rows = std::max(res.max_q_rows, st.q_rows);
      res.max_k_cols = std::max(res.max_k_cols, st.k_cols);
    }
  return res;
}

template InferResult emulate_infer<float>(const InferWork&, const InferInputs&, const BlockOpts&,
                                          const InferFault&);
template InferResult emulate_infer<double>(const InferWork&, const InferInputs&, const BlockOpts&,
                                           const InferFault&);

std::string check_infer_work(const InferWork& w, const InferResult& r) {
  const auto steps = infer_steps(w);
  if (static_cast<std::int64_t>(r.steps.size()) != w.ranks ||
      static_cast<std::int64_t>(r.return_sent.size()) != w.ranks)
    return fmt::format("{} ranks recorded, expected {}", r.steps.size(), w.ranks);
  for (std::int64_t i = 0; i < w.ranks; ++i) {
    const auto& rank = r.steps[at(i)];
    if (static_cast<std::int64_t>(rank.size()) != steps)
      return fmt::format("rank {} ran {} steps, the model has {}", i, rank.size(), steps);
    for (std::int64_t s = 0; s < steps; ++s) {
      const auto& st = rank[at(s)];
      const auto want_q = infer_query_source(w, i, s), want_kv = infer_kv_source(w, i, s);
      if (st.q_source != want_q)
        return fmt::format("rank {} step {} used the queries of {}, the model says {}", i, s,
                           st.q_source, want_q);
      if (st.kv_source != want_kv)
        return fmt::format("rank {} step {} used the K/V of {}, the model says {}", i, s,
                           st.kv_source, want_kv);
      const auto want = infer_step_entries(w, i, s);
      if (st.entries != want)
        return fmt::format("rank {} step {} computed {} score entries, the model says {}", i, s,
                           st.entries, want);
      const auto want_sent = s + 1 < steps ? infer_ring_elements(w) : 0;
      if (st.sent != want_sent)
        return fmt::format("rank {} step {} sent {} ring elements, the model says {}", i, s,
                           st.sent, want_sent);
    }
    const auto want_ret = infer_return_elements(w, i);
    if (r.return_sent[at(i)] != want_ret)
      return fmt::format("rank {} returned {} partial-result elements, the model says {}", i,
                         r.return_sent[at(i)], want_ret);
  }
  return "";
}

bool InferVerifyReport::passed() const {
  if (!work_mismatch.empty()) return false;
  for (const auto& e : errors)
    if (!e.ok) return false;
  return true;
}

InferVerifyReport judge_infer(const InferWork& w, const InferInputs& in, InferResult result,
                              bool fp64, double tolerance_factor) {
  InferVerifyReport rep;
  rep.result = std::move(result);
  // The tolerance model reads Smax from q and k and the key count from k.
  AttnInputs qk;
  qk.q = in.q;
  qk.k = in.k;
  rep.tolerance = tolerance_model(qk, w.kv_heads, w.head_dim, fp64);
  const double tau = rep.tolerance.tau() * tolerance_factor;
  const double floor = rep.tolerance.floor(tolerance_factor);
  AttnShape s;
  s.seq_q = w.fresh;
  s.seq_k = w.context();
  s.heads = w.heads;
  s.kv_heads = w.kv_heads;
  s.head_dim = w.head_dim;
  s.causal = w.causal;
  s.doc_starts = document_starts(w.documents);
  std::vector<std::int64_t> q_pos;
  for (std::int64_t j = 0; j < w.fresh; ++j) q_pos.push_back(w.cached + j);
  const auto ref = reference_forward(s, in.q, in.k, in.v, q_pos, iota_positions(w.context()));
  rep.errors.push_back(compare("O", rep.result.o, ref.o, tau * max_abs_value(in.v), floor));
  rep.errors.push_back(compare("LSE", rep.result.lse, ref.lse, tau, floor));
  rep.work_mismatch = check_infer_work(w, rep.result);
  return rep;
}

InferVerifyReport verify_infer(const InferWork& w, const InferInputs& in, bool fp64,
                               const BlockOpts& kernel, double tolerance_factor) {
  auto r = fp64 ? emulate_infer<double>(w, in, kernel) : emulate_infer<float>(w, in, kernel);
  return judge_infer(w, in, std::move(r), fp64, tolerance_factor);
}

InferInputs random_infer_inputs(const InferWork& w, std::uint64_t seed, NpyDType storage) {
  std::mt19937_64 rng(seed);
  const auto d = static_cast<std::size_t>(w.head_dim);
  const auto f = static_cast<std::size_t>(w.fresh), c = static_cast<std::size_t>(w.context());
  InferInputs in;
  in.q = normal_values(f * static_cast<std::size_t>(w.heads) * d, rng, storage);
  in.k = normal_values(c * static_cast<std::size_t>(w.kv_heads) * d, rng, storage);
  in.v = normal_values(c * static_cast<std::size_t>(w.kv_heads) * d, rng, storage);
  return in;
}

}  // namespace ringsim::kernels
