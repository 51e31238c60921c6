#include "models/core/infer_work.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/calls.hpp"
#include "models/core/checked.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/work.hpp"

namespace ringsim {

namespace {

constexpr const char* kWhat = "--context: score entries of one inference step";

// The training workload whose shards are the fresh tokens' (prefill): its
// shard_pairs and step_calls are exactly the fresh-against-fresh part.
Workload fresh_workload(const InferWork& w) {
  Workload t;
  t.devices = w.ranks;
  t.block = w.fresh / w.ranks;
  t.layout = w.layout;
  t.causal = w.causal;
  t.shape.heads = w.heads;
  t.shape.kv_heads = w.kv_heads;
  t.shape.head_dim = w.head_dim;
  return t;
}

std::int64_t mod(std::int64_t a, std::int64_t n) {
  return (a % n + n) % n;
}

// Rank i's keys: its cached tokens, then its fresh ones; ascending, since
// every cached position precedes every fresh one.
std::vector<std::int64_t> kv_tokens(const InferWork& w, std::int64_t rank) {
  auto t = infer_cached_tokens(w, rank);
  const auto fresh = infer_fresh_kv_tokens(w, rank);
  t.insert(t.end(), fresh.begin(), fresh.end());
  return t;
}

// The queries rank i works on at step s (decode: every one, replicated).
std::vector<std::int64_t> step_queries(const InferWork& w, std::int64_t rank, std::int64_t step) {
  return infer_query_tokens(w, w.mode == InferMode::Decode ? 0 : infer_query_source(w, rank, step));
}

// Packed documents: the pairs the document mask keeps between the step's
// queries and keys, heads included.
std::uint64_t document_entries(const InferWork& w, const std::vector<std::int64_t>& q,
                               const std::vector<std::int64_t>& k) {
  return mul_checked(masked_pairs(q, k, document_starts(w.documents)),
                     static_cast<std::uint64_t>(w.heads), kWhat);
}

// Packed documents: sum over the fresh positions p of the keys p sees, from
// its document's start a to itself (p - a + 1), one document at a time.
std::uint64_t document_total_pairs(const InferWork& w) {
  std::uint64_t sum = 0;
  std::int64_t a = 0;
  for (const auto L : w.documents) {
    const auto lo = std::max(a, w.cached), hi = a + L;  // fresh positions [lo, hi) of this one
    if (hi > lo) {
      // (lo - a + 1) + ... + (hi - a): n terms, first f, last n + f - 1.
      const auto n = static_cast<std::uint64_t>(hi - lo),
                 f = static_cast<std::uint64_t>(lo - a + 1);
      const auto first_plus_last = n + 2 * f - 1;
      const auto pairs = n % 2 == 0 ? mul_checked(n / 2, first_plus_last, kWhat)
                                    : mul_checked(n, first_plus_last / 2, kWhat);
      sum = add_checked(sum, pairs, kWhat);
    }
    a += L;
  }
  return sum;
}

// Decode: decode keys j (0-based among the fresh tokens) live on rank j mod N.
std::int64_t decode_keys_on(const InferWork& w, std::int64_t rank) {
  return w.fresh > rank ? (w.fresh - rank + w.ranks - 1) / w.ranks : 0;
}

}  // namespace

const std::vector<std::string>& infer_mode_names() {
  static const std::vector<std::string> n{"prefill", "decode"};
  return n;
}
const std::vector<std::string>& infer_variant_names() {
  static const std::vector<std::string> n{"pass-kv", "pass-q"};
  return n;
}
std::string to_string(InferMode m) {
  return infer_mode_names()[static_cast<std::size_t>(m)];
}
std::string to_string(InferVariant v) {
  return infer_variant_names()[static_cast<std::size_t>(v)];
}
InferMode parse_infer_mode(const std::string& flag, const std::string& s) {
  return parse_choice(flag, s, infer_mode_names()) == "prefill" ? InferMode::Prefill
                                                                : InferMode::Decode;
}
InferVariant parse_infer_variant(const std::string& flag, const std::string& s) {
  return parse_choice(flag, s, infer_variant_names()) == "pass-kv" ? InferVariant::PassKv
                                                                   : InferVariant::PassQ;
}

void check_infer(const InferWork& w, const std::string& context_flag,
                 const std::string& cached_flag) {
  if (w.layout != Layout::Ring && w.layout != Layout::Striped && w.layout != Layout::Zigzag)
    throw InputError(fmt::format(
        "--layout: inference shards the KV cache over a ring: ring, striped or zigzag, got {}",
        to_string(w.layout)));
  if (w.ranks < 1) throw InputError(fmt::format("--cp: must be at least 1, got {}", w.ranks));
  if (w.heads < 1 || w.kv_heads < 1 || w.head_dim < 1)
    throw InputError("--heads/--kv-heads/--head-dim: must be at least 1");
  if (w.heads % w.kv_heads != 0)
    throw InputError(
        fmt::format("--kv-heads: must divide the query heads ({}), got {}", w.heads, w.kv_heads));
  if (w.cached < 0)
    throw InputError(fmt::format("{}: must be at least 0, got {}", cached_flag, w.cached));
  if (w.fresh < 1)
    throw InputError(fmt::format("{}: the new tokens ({} - {}) must be at least 1, got {}",
                                 context_flag, context_flag, cached_flag, w.fresh));
  if (w.context() > kMaxTokens)
    throw InputError(fmt::format(
        "{}: the context and the tokens after it must total at most 2^40 tokens, got {} ({} "
        "before this pass + {} new)",
        context_flag, w.context(), w.cached, w.fresh));
  const std::int64_t unit = w.layout == Layout::Zigzag ? 2 * w.ranks : w.ranks;
  const std::string why = w.layout == Layout::Zigzag
                              ? fmt::format("2 x {} ranks (zigzag: two chunks per rank)", w.ranks)
                              : fmt::format("{} ranks", w.ranks);
  if (w.cached % unit != 0)
    throw InputError(fmt::format("{}: the {} cached tokens must divide evenly over {}", cached_flag,
                                 w.cached, why));
  if (w.mode == InferMode::Prefill && w.fresh % unit != 0)
    throw InputError(fmt::format("{}: the {} new tokens ({} minus {}) must divide evenly over {}",
                                 context_flag, w.fresh, context_flag, cached_flag, why));
  check_infer_documents(w);
}

void check_infer_documents(const InferWork& w) {
  if (w.documents.empty()) return;
  if (!w.causal) throw InputError(kDocumentsNotCausal);
  if (static_cast<std::int64_t>(w.documents.size()) > kMaxDocuments)
    throw InputError(fmt::format("--documents: at most {} documents", kMaxDocuments));
  std::int64_t sum = 0;
  for (const auto L : w.documents) {
    if (L < 1) throw InputError(fmt::format("--documents: lengths must be at least 1, got {}", L));
    sum += L;
  }
  if (sum != w.context())
    throw InputError(fmt::format(
        "--documents: the lengths sum to {}, not the context's {} tokens (cached, then new)", sum,
        w.context()));
}

std::vector<std::int64_t> infer_cached_tokens(const InferWork& w, std::int64_t rank) {
  if (w.cached == 0) return {};
  return device_tokens(w.layout, w.ranks, w.cached / w.ranks, rank);
}

std::vector<std::int64_t> infer_query_tokens(const InferWork& w, std::int64_t rank) {
  std::vector<std::int64_t> t;
  if (w.mode == InferMode::Decode) {
    for (std::int64_t j = 0; j < w.fresh; ++j) t.push_back(w.cached + j);
    return t;
  }
  t = device_tokens(w.layout, w.ranks, w.fresh / w.ranks, rank);
  for (auto& p : t) p += w.cached;
  return t;
}

std::vector<std::int64_t> infer_fresh_kv_tokens(const InferWork& w, std::int64_t rank) {
  if (w.mode == InferMode::Prefill) return infer_query_tokens(w, rank);
  std::vector<std::int64_t> t;
  for (std::int64_t j = rank; j < w.fresh; j += w.ranks) t.push_back(w.cached + j);
  return t;
}

std::int64_t infer_kv_count(const InferWork& w, std::int64_t rank) {
  const auto cached = w.cached == 0 ? 0 : w.cached / w.ranks;
  const auto fresh = w.mode == InferMode::Prefill ? w.fresh / w.ranks : decode_keys_on(w, rank);
  return cached + fresh;
}

std::int64_t infer_steps(const InferWork& w) {
  return w.mode == InferMode::Prefill ? w.ranks : 1;
}

std::int64_t infer_query_source(const InferWork& w, std::int64_t rank, std::int64_t step) {
  if (w.mode == InferMode::Decode) return -1;
  return w.variant == InferVariant::PassQ ? mod(rank - step, w.ranks) : rank;
}

std::int64_t infer_kv_source(const InferWork& w, std::int64_t rank, std::int64_t step) {
  if (w.mode == InferMode::Decode) return rank;
  return w.variant == InferVariant::PassKv ? mod(rank - step, w.ranks) : rank;
}

namespace {

// Packed documents (and chunked attention): each rank's query and K/V token
// lists, built once per workload and thread rather than for every one of
// the N^2 rank-steps that ask (each list is context / N tokens long). Kept up
// to kMaxTokens tokens of context (16 B each, lists of both kinds: infer's
// size guard, kMaxChunkedContext, stops there); a longer context (verify's
// emulator) builds them per call.
struct DocumentTokens {
  static constexpr std::int64_t kMaxTokens = (std::int64_t{1} << 25) + 1;  // + a decode token
  std::int64_t ranks = -1, cached = -1, fresh = -1;
  Layout layout = Layout::Ring;
  InferMode mode = InferMode::Prefill;
  std::vector<std::int64_t> documents;
  // By source rank: its queries and its K/V, and whether each is built.
  std::vector<std::vector<std::int64_t>> queries, kv;
  std::vector<bool> have_q, have_kv;

  // This thread's lists for `w`'s sharding, emptied when it changes; null
  // past kMaxTokens.
  static DocumentTokens* of(const InferWork& w) {
    thread_local DocumentTokens c;
    if (w.context() > kMaxTokens) return nullptr;
    if (!c.matches(w)) c.reset(w);
    return &c;
  }
  bool matches(const InferWork& w) const {
    return ranks == w.ranks && cached == w.cached && fresh == w.fresh && layout == w.layout &&
           mode == w.mode && documents == w.documents;
  }
  void reset(const InferWork& w) {
    ranks = w.ranks;
    cached = w.cached;
    fresh = w.fresh;
    layout = w.layout;
    mode = w.mode;
    documents = w.documents;
    const auto n = static_cast<std::size_t>(w.ranks);
    queries.assign(n, {});
    kv.assign(n, {});
    have_q.assign(n, false);
    have_kv.assign(n, false);
  }
};

// `lists[source]`, built by `build` the first time it is asked for.
template <typename Build>
const std::vector<std::int64_t>& kept(std::vector<std::vector<std::int64_t>>& lists,
                                      std::vector<bool>& have, std::int64_t source, Build build) {
  const auto i = static_cast<std::size_t>(source);
  if (!have[i]) {
    lists[i] = build();
    have[i] = true;
  }
  return lists[i];
}

// The queries rank i works on at step s, and the K/V of rank `source`;
// `scratch` holds them when they are not kept.
const std::vector<std::int64_t>& doc_queries(const InferWork& w, std::int64_t rank,
                                             std::int64_t step,
                                             std::vector<std::int64_t>& scratch) {
  auto* c = DocumentTokens::of(w);
  if (!c) return scratch = step_queries(w, rank, step);
  const auto src = w.mode == InferMode::Decode ? 0 : infer_query_source(w, rank, step);
  return kept(c->queries, c->have_q, src, [&] { return step_queries(w, rank, step); });
}

const std::vector<std::int64_t>& doc_kv(const InferWork& w, std::int64_t source,
                                        std::vector<std::int64_t>& scratch) {
  auto* c = DocumentTokens::of(w);
  if (!c) return scratch = kv_tokens(w, source);
  return kept(c->kv, c->have_kv, source, [&] { return kv_tokens(w, source); });
}

}  // namespace

std::uint64_t infer_step_cached_entries(const InferWork& w, std::int64_t rank, std::int64_t step) {
  if (!w.documents.empty()) {
    std::vector<std::int64_t> q;
    return document_entries(w, doc_queries(w, rank, step, q),
                            infer_cached_tokens(w, infer_kv_source(w, rank, step)));
  }
  const auto q = w.mode == InferMode::Decode ? w.fresh : w.fresh / w.ranks;
  (void)rank;
  (void)step;
  // Every cached token precedes every fresh one: all visible, mask or not.
  return mul_checked(mul_checked(static_cast<std::uint64_t>(q),
                                 static_cast<std::uint64_t>(w.cached / w.ranks), kWhat),
                     static_cast<std::uint64_t>(w.heads), kWhat);
}

std::uint64_t infer_step_entries(const InferWork& w, std::int64_t rank, std::int64_t step) {
  if (!w.documents.empty()) {
    std::vector<std::int64_t> q, k;
    return document_entries(w, doc_queries(w, rank, step, q),
                            doc_kv(w, infer_kv_source(w, rank, step), k));
  }
  const auto cached = infer_step_cached_entries(w, rank, step);
  const auto H = static_cast<std::uint64_t>(w.heads);
  std::uint64_t fresh = 0;
  if (w.mode == InferMode::Prefill) {
    const auto qi = infer_query_source(w, rank, step), kj = infer_kv_source(w, rank, step);
    fresh = shard_pairs(w.layout, w.ranks, w.fresh / w.ranks, w.causal, qi, kj);
  } else {
    // Query a sees decode key j (on rank j mod N) iff j <= a (or always).
    const auto keys = static_cast<std::uint64_t>(decode_keys_on(w, rank));
    if (!w.causal) {
      fresh = mul_checked(static_cast<std::uint64_t>(w.fresh), keys, kWhat);
    } else {
      for (std::int64_t j = rank; j < w.fresh; j += w.ranks)
        fresh = add_checked(fresh, static_cast<std::uint64_t>(w.fresh - j), kWhat);
    }
  }
  return add_checked(cached, mul_checked(fresh, H, kWhat), kWhat);
}

std::uint64_t infer_total_entries(const InferWork& w) {
  const auto H = static_cast<std::uint64_t>(w.heads);
  if (!w.documents.empty()) return mul_checked(document_total_pairs(w), H, kWhat);
  const auto f = static_cast<std::uint64_t>(w.fresh), c = static_cast<std::uint64_t>(w.cached);
  // Each fresh query sees the cache and the fresh tokens up to itself.
  const auto fresh_pairs = w.causal
                               ? mul_checked(f % 2 ? f : f / 2, f % 2 ? (f + 1) / 2 : f + 1, kWhat)
                               : mul_checked(f, f, kWhat);
  return mul_checked(add_checked(mul_checked(f, c, kWhat), fresh_pairs, kWhat), H, kWhat);
}

std::uint64_t infer_ring_elements(const InferWork& w) {
  if (w.mode == InferMode::Decode || w.ranks < 2) return 0;
  const auto d = static_cast<std::uint64_t>(w.head_dim);
  const auto per_rank = static_cast<std::uint64_t>((w.cached + w.fresh) / w.ranks);
  if (w.variant == InferVariant::PassKv)
    return mul_checked(2 * per_rank, static_cast<std::uint64_t>(w.kv_heads) * d, kWhat);
  return mul_checked(static_cast<std::uint64_t>(w.fresh / w.ranks),
                     static_cast<std::uint64_t>(w.heads) * d, kWhat);
}

std::uint64_t infer_return_elements(const InferWork& w, std::int64_t rank) {
  if (w.ranks < 2) return 0;
  const auto row = static_cast<std::uint64_t>(w.heads) * static_cast<std::uint64_t>(w.head_dim + 1);
  if (w.mode == InferMode::Decode)
    return rank == 0 ? 0 : mul_checked(static_cast<std::uint64_t>(w.fresh), row, kWhat);
  if (w.variant == InferVariant::PassKv) return 0;
  return mul_checked(
      static_cast<std::uint64_t>(w.ranks - 1) * static_cast<std::uint64_t>(w.fresh / w.ranks), row,
      kWhat);
}

std::vector<KernelCall> infer_step_calls(const InferWork& w, std::int64_t rank, std::int64_t step) {
  const auto H = static_cast<std::uint64_t>(w.heads);
  if (!w.documents.empty()) {  // the varlen kernel's calls, one or more per document
    std::vector<std::int64_t> q, k;
    return document_calls(doc_queries(w, rank, step, q),
                          doc_kv(w, infer_kv_source(w, rank, step), k),
                          document_starts(w.documents), H);
  }
  std::vector<KernelCall> calls;
  if (w.mode == InferMode::Decode) {
    // Decode queries against the cache shard and this rank's decode keys:
    // one call, bottom-right aligned when causal (the last keys are the newest).
    const auto k = w.cached / w.ranks + decode_keys_on(w, rank);
    if (k > 0) calls.push_back({w.fresh, k, CallMask::Full, 0, H});
    return calls;
  }
  const auto q = w.fresh / w.ranks;
  if (w.cached > 0) calls.push_back({q, w.cached / w.ranks, CallMask::Full, 0, H});
  // Pass-q rank i at step s runs the queries of rank q = (i - s) against its
  // own K/V: training device q's step s, whose K/V source is (q - s) = ...
  // Pass-kv: training device i's step s directly.
  const auto t = fresh_workload(w);
  const auto qd = infer_query_source(w, rank, step);
  // In the training ring, device qd at step s' sees kv (qd - s'); pick s' so
  // that it is this step's K/V source.
  const auto s2 = mod(qd - infer_kv_source(w, rank, step), w.ranks);
  for (const auto& c : step_calls(t, qd, s2)) calls.push_back(c);
  return calls;
}

}  // namespace ringsim
