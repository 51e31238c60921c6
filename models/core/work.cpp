#include "models/core/work.hpp"

#include "models/core/calls.hpp"
#include "models/core/checked.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"

namespace ringsim {

namespace {

constexpr const char* kEntriesWhat = "--devices/--block: score entries of one step";

// Pairs between two equal chunks of h tokens at chunk positions qx (queries)
// and ky (keys) in a sequence cut into chunks of h.
// Checked: blocks reach 2^40 tokens, whose square overflows 64 bits.
std::uint64_t chunk_pairs(std::int64_t qx, std::int64_t ky, std::int64_t h, bool causal) {
  const auto hh = static_cast<std::uint64_t>(h);
  if (!causal || qx > ky) return mul_checked(hh, hh, kEntriesWhat);
  if (qx == ky)
    return mul_checked(hh % 2 ? hh : hh / 2, hh % 2 ? (hh + 1) / 2 : hh + 1, kEntriesWhat);
  return 0;
}

}  // namespace

std::uint64_t shard_pairs(Layout layout, std::int64_t n, std::int64_t c, bool causal,
                          std::int64_t i, std::int64_t j) {
  const auto cc = static_cast<std::uint64_t>(c);
  switch (layout) {
    case Layout::Striped:
      // Query i+N*a sees key j+N*b iff b < a, or b == a and j <= i.
      if (!causal) return mul_checked(cc, cc, kEntriesWhat);
      return add_checked(
          mul_checked(cc % 2 ? cc : cc / 2, cc % 2 ? (cc - 1) / 2 : cc - 1, kEntriesWhat),
          j <= i ? cc : 0, kEntriesWhat);
    case Layout::Zigzag:
    case Layout::Allgather:
    case Layout::Hybrid: {
      const auto h = c / 2;
      const std::int64_t qs[2] = {i, 2 * n - 1 - i}, ks[2] = {j, 2 * n - 1 - j};
      std::uint64_t s = 0;
      for (auto q : qs)
        for (auto k : ks) s = add_checked(s, chunk_pairs(q, k, h, causal), kEntriesWhat);
      return s;
    }
    default:
      return chunk_pairs(i, j, c, causal);
  }
}

namespace {

// The part of shard_pairs that lies in chunks cut by the diagonal.
std::uint64_t shard_diagonal_pairs(Layout layout, std::int64_t n, std::int64_t c, bool causal,
                                   std::int64_t i, std::int64_t j) {
  if (!causal) return 0;
  switch (layout) {
    case Layout::Striped:
      return shard_pairs(layout, n, c, causal, i, j);
    case Layout::Zigzag:
    case Layout::Allgather:
    case Layout::Hybrid: {
      const auto h = c / 2;
      const std::int64_t qs[2] = {i, 2 * n - 1 - i}, ks[2] = {j, 2 * n - 1 - j};
      std::uint64_t s = 0;
      for (auto q : qs)
        for (auto k : ks)
          if (q == k) s = add_checked(s, chunk_pairs(q, k, h, causal), kEntriesWhat);
      return s;
    }
    default:
      return i == j ? chunk_pairs(i, j, c, causal) : 0;
  }
}

}  // namespace

std::int64_t num_steps(const Workload& w) {
  switch (w.layout) {
    case Layout::Ulysses:
    case Layout::Allgather:
      return 1;
    case Layout::Hybrid:
      return w.ring_degree();
    default:
      return w.devices;
  }
}

std::int64_t kv_source(const Workload& w, std::int64_t device, std::int64_t step) {
  switch (w.layout) {
    case Layout::Ulysses:
    case Layout::Allgather:
      return -1;
    case Layout::Hybrid:
      return ring_kv_source(w.ring_degree(), device / w.ulysses(), step);
    default:
      return ring_kv_source(w.devices, device, step);
  }
}

namespace {

// Packed documents: the pairs the document mask keeps between the query
// tokens and the key tokens this step pairs (models/core/documents.hpp).
std::uint64_t document_step_entries(const Workload& w, std::int64_t device, std::int64_t step) {
  const auto t = step_tokens(w, device, step);
  return mul_checked(masked_pairs(t.q, t.k, document_starts(w.documents)), t.heads, kEntriesWhat);
}

}  // namespace

std::uint64_t step_entries(const Workload& w, std::int64_t device, std::int64_t step) {
  if (!w.documents.empty()) return document_step_entries(w, device, step);
  const auto n = w.devices, c = w.block;
  const auto heads = static_cast<std::uint64_t>(w.shape.heads);
  const auto S = static_cast<std::uint64_t>(w.seq_len());
  switch (w.layout) {
    case Layout::Ulysses: {
      // Every token of heads/N heads: the full (masked) square.
      const auto pairs =
          w.causal ? mul_checked(S % 2 ? S : S / 2, S % 2 ? (S + 1) / 2 : S + 1, kEntriesWhat)
                   : mul_checked(S, S, kEntriesWhat);
      return mul_checked(pairs, heads / static_cast<std::uint64_t>(n), kEntriesWhat);
    }
    case Layout::Allgather: {
      // Own queries (zigzag chunks) against every key.
      std::uint64_t pairs = 0;
      for (std::int64_t j = 0; j < n; ++j)
        pairs = add_checked(pairs, shard_pairs(Layout::Zigzag, n, c, w.causal, device, j),
                            kEntriesWhat);
      return mul_checked(pairs, heads, kEntriesWhat);
    }
    case Layout::Hybrid: {
      const auto u = w.ulysses(), r = w.ring_degree();
      const auto g = device / u;
      const auto pairs =
          shard_pairs(Layout::Zigzag, r, c * u, w.causal, g, kv_source(w, device, step));
      return mul_checked(pairs, heads / static_cast<std::uint64_t>(u), kEntriesWhat);
    }
    default:
      return mul_checked(shard_pairs(w.layout, n, c, w.causal, device, kv_source(w, device, step)),
                         heads, kEntriesWhat);
  }
}

std::uint64_t step_diagonal_entries(const Workload& w, std::int64_t device, std::int64_t step) {
  if (!w.causal) return 0;
  if (!w.documents.empty()) {  // the causal calls of the varlen kernel (models/core/calls.hpp)
    std::uint64_t s = 0;
    for (const auto& c : step_calls(w, device, step))
      if (c.mask == CallMask::Causal) s = add_checked(s, call_pairs(c), kEntriesWhat);
    return s;
  }
  const auto n = w.devices, c = w.block;
  const auto heads = static_cast<std::uint64_t>(w.shape.heads);
  switch (w.layout) {
    case Layout::Ulysses:
      return step_entries(w, device, step);  // one masked square
    case Layout::Allgather: {
      std::uint64_t pairs = 0;
      for (std::int64_t j = 0; j < n; ++j)
        pairs = add_checked(pairs, shard_diagonal_pairs(Layout::Zigzag, n, c, true, device, j),
                            kEntriesWhat);
      return mul_checked(pairs, heads, kEntriesWhat);
    }
    case Layout::Hybrid: {
      const auto u = w.ulysses(), r = w.ring_degree();
      const auto pairs = shard_diagonal_pairs(Layout::Zigzag, r, c * u, true, device / u,
                                              kv_source(w, device, step));
      return mul_checked(pairs, heads / static_cast<std::uint64_t>(u), kEntriesWhat);
    }
    default:
      return mul_checked(
          shard_diagonal_pairs(w.layout, n, c, true, device, kv_source(w, device, step)), heads,
          kEntriesWhat);
  }
}

std::uint64_t total_entries(const Workload& w) {
  std::uint64_t t = 0;
  for (std::int64_t d = 0; d < w.devices; ++d)
    for (std::int64_t s = 0; s < num_steps(w); ++s)
      t = add_checked(t, step_entries(w, d, s), "work");
  return t;
}

std::uint64_t kv_block_elements(const Workload& w) {
  return mul_checked(static_cast<std::uint64_t>(w.block),
                     static_cast<std::uint64_t>(w.shape.kv_heads) * w.shape.head_dim, "kv block");
}

std::uint64_t ring_elements_per_step(const Workload& w, bool backward) {
  if (w.layout == Layout::Ulysses || w.layout == Layout::Allgather) return 0;
  return mul_checked(kv_block_elements(w), backward ? 4 : 2, "ring elements per step");
}

}  // namespace ringsim
