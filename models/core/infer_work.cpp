#include "models/core/infer_work.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/calls.hpp"
#include "models/core/checked.hpp"
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
    throw InputError(fmt::format("{}: at most 2^40 tokens, got {}", context_flag, w.context()));
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

std::uint64_t infer_step_cached_entries(const InferWork& w, std::int64_t rank, std::int64_t step) {
  const auto q = w.mode == InferMode::Decode ? w.fresh : w.fresh / w.ranks;
  (void)rank;
  (void)step;
  // Every cached token precedes every fresh one: all visible, mask or not.
  return mul_checked(mul_checked(static_cast<std::uint64_t>(q),
                                 static_cast<std::uint64_t>(w.cached / w.ranks), kWhat),
                     static_cast<std::uint64_t>(w.heads), kWhat);
}

std::uint64_t infer_step_entries(const InferWork& w, std::int64_t rank, std::int64_t step) {
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
