#include "models/core/calls.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "models/core/checked.hpp"
#include "models/core/documents.hpp"
#include "models/core/work.hpp"

namespace ringsim {

namespace {

using i128 = __int128;
// The same words as the step's pair counts (models/core/work.cpp): a call is
// a step's work as the kernel sees it.
constexpr const char* kWhat = "--devices/--block: score entries of one step";

std::uint64_t to_u64(i128 v) {
  if (v < 0 || v > static_cast<i128>(UINT64_MAX))
    throw InputError(std::string(kWhat) + ": size overflows 64 bits");
  return static_cast<std::uint64_t>(v);
}

// Sum over i in [0, n) of floor((a*i + b) / m), a, b >= 0, m > 0, in
// O(log m) (the Euclid-like reduction; tile rows reach 2^34 per call).
i128 floor_sum(i128 n, i128 m, i128 a, i128 b) {
  i128 s = 0;
  while (true) {
    if (a >= m) {
      s += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      s += n * (b / m);
      b %= m;
    }
    const i128 y = a * n + b;
    if (y < m) break;
    n = y / m;
    b = y % m;
    std::swap(m, a);
  }
  return s;
}

i128 ceil_div(i128 a, i128 b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

// Per head: visible pairs of rows [r0, r1) of a causal call.
i128 causal_rows(i128 r0, i128 r1, i128 k, i128 shift) {
  const i128 a = shift + 1;  // row r sees min(k, max(0, r + a)) keys
  i128 s = 0;
  const i128 lin0 = std::max(r0, 1 - a), lin1 = std::min(r1, k - a);
  if (lin1 > lin0) s += (lin1 - lin0) * a + (lin0 + lin1 - 1) * (lin1 - lin0) / 2;
  const i128 sat0 = std::max(r0, k - a);
  if (r1 > sat0) s += (r1 - sat0) * k;
  return s;
}

// Per head: pairs executed by the query tiles t in [t0, t1) of height tq
// (all whole tiles) of a causal call: each tile runs key tiles up to the one
// holding its last row's last visible key.
i128 causal_tiles(i128 t0, i128 t1, i128 tq, i128 tk, i128 k, i128 shift) {
  if (t1 <= t0) return 0;
  // x(t) = (t+1)*tq + shift = keys the tile's last row sees (before clamping).
  // x <= 0: nothing; x >= kk: all k columns, where kk is the smallest x whose
  // rounded-up key tiles reach k; otherwise tk * ceil(x / tk).
  const i128 kk = (ceil_div(k, tk) - 1) * tk + 1;
  auto t_at = [&](i128 x) { return ceil_div(x - shift, tq) - 1; };  // first t with x(t) >= x
  const i128 a = std::clamp(t_at(1), t0, t1), b = std::clamp(t_at(kk), t0, t1);
  i128 s = (t1 - b) * k * tq;
  if (b > a) {
    // sum of ceil(x/tk) = floor((x + tk - 1) / tk) over t in [a, b).
    const i128 b0 = (a + 1) * tq + shift + tk - 1;
    s += tk * tq * floor_sum(b - a, tk, tq, b0);
  }
  return s;
}

}  // namespace

std::uint64_t call_pairs(const KernelCall& c) {
  if (c.q <= 0 || c.k <= 0 || c.heads == 0) return 0;
  const i128 per =
      c.mask == CallMask::Full ? static_cast<i128>(c.q) * c.k : causal_rows(0, c.q, c.k, c.shift);
  return to_u64(per * static_cast<i128>(c.heads));
}

std::uint64_t call_tile_pairs(const KernelCall& c, std::int64_t tile_q, std::int64_t tile_k) {
  if (c.mask == CallMask::Full || tile_q <= 0 || tile_k <= 0) return call_pairs(c);
  if (c.q <= 0 || c.k <= 0 || c.heads == 0) return 0;
  const i128 tq = tile_q, tk = tile_k, q = c.q, k = c.k, shift = c.shift;
  const i128 whole = q / tq;
  i128 per = causal_tiles(0, whole, tq, tk, k, shift);
  if (const i128 rest = q - whole * tq; rest > 0) {
    // The last, short tile: its last row is q - 1.
    const i128 x = std::clamp<i128>(q + shift, 0, k);
    per += rest * std::min(k, ceil_div(x, tk) * tk);
  }
  return to_u64(per * static_cast<i128>(c.heads));
}

CallParts split_call(const KernelCall& c) {
  CallParts p;
  if (c.mask == CallMask::Full) {
    p.full = c;
    return p;
  }
  // Bottom-right (shift = k - q > 0): the first k - q columns are visible to
  // every row, the last q form the causal square. Other shifts (0, the strict
  // -1) are the square itself.
  if (c.shift > 0 && c.shift + c.q <= c.k) {
    p.full = {c.q, c.shift, CallMask::Full, 0, c.heads};
    p.causal = {c.q, c.q, CallMask::Causal, 0, c.heads};  // keys past it stay masked
  } else {
    p.causal = c;
  }
  return p;
}

std::uint64_t device_query_rows(const Workload& w) {
  // Every layout holds c tokens of all heads per device (Ulysses: S tokens of
  // H/N heads; hybrid: U*c tokens of H/U heads), the same count.
  return mul_checked(static_cast<std::uint64_t>(w.block), static_cast<std::uint64_t>(w.shape.heads),
                     "query rows");
}

namespace {

// Packed documents: the varlen kernel's calls of every (device, step) of the
// last workload asked about, per thread (the sweep engine runs points in
// parallel). The closed forms ask for each device-step several times (every
// pass, every representative, the implementation's step and reduce), so the
// document starts and each ring position's tokens are built once, and the
// calls of each device-step too while a ring has at most kMaxSlots of them.
struct DocumentCallsCache {
  static constexpr std::int64_t kMaxSlots = std::int64_t{1} << 22;
  // Tokens kept for every ring position up to this many in all (8 bytes each).
  static constexpr std::int64_t kMaxCachedTokens = std::int64_t{1} << 25;
  Layout layout = Layout::Ring;
  Pack pack = Pack::Sequence;
  std::int64_t devices = -1, block = -1, ulysses = -1, steps = -1;
  int heads = -1;
  std::vector<std::int64_t> documents;
  std::vector<std::vector<KernelCall>> calls;  // [device * steps + step]
  std::vector<bool> done;
  std::vector<std::int64_t> starts;
  // The tokens of each ring position a step pairs (step_sources), built once.
  std::map<std::int64_t, std::vector<std::int64_t>> tokens;
  const Workload* pinned = nullptr;  // DocumentCallsScope: this object's documents hold still

  const std::vector<std::int64_t>& tokens_of(const Workload& w, std::int64_t source,
                                             std::vector<std::int64_t>& scratch) {
    if (w.seq_len() > kMaxCachedTokens) return scratch = source_tokens(w, source);
    auto it = tokens.find(source);
    if (it == tokens.end()) it = tokens.emplace(source, source_tokens(w, source)).first;
    return it->second;
  }

  // Compares the documents, O(documents), unless w is the pinned workload.
  bool matches(const Workload& w) const {
    if (pinned == &w) return true;
    return layout == w.layout && pack == w.pack && devices == w.devices && block == w.block &&
           ulysses == w.ulysses() && heads == w.shape.heads && documents == w.documents;
  }
  void reset(const Workload& w) {
    layout = w.layout;
    pack = w.pack;
    devices = w.devices;
    block = w.block;
    ulysses = w.ulysses();
    heads = w.shape.heads;
    documents = w.documents;
    steps = num_steps(w);
    const bool slots_fit = devices <= kMaxSlots && devices * steps <= kMaxSlots;
    const auto slots = slots_fit ? static_cast<std::size_t>(devices * steps) : 0;
    calls.assign(slots, {});
    done.assign(slots, false);
    starts = document_starts(w.documents);
    tokens.clear();
    pinned = nullptr;
  }
  std::vector<KernelCall> compute(const Workload& w, std::int64_t device, std::int64_t step) {
    const auto src = step_sources(w, device, step);
    std::vector<std::int64_t> q, k;
    auto calls = document_calls(tokens_of(w, src.q, q), tokens_of(w, src.k, k), starts, src.heads);
    work += 1 + calls.size();  // a step's searches, and each call found before merging
    return merge_shapes(std::move(calls));
  }
  std::uint64_t work = 0;  // document_work_done()
};

DocumentCallsCache& document_calls_cache() {
  thread_local DocumentCallsCache cache;
  return cache;
}

}  // namespace

std::uint64_t document_work_done() {
  return document_calls_cache().work;
}

void add_document_work(std::uint64_t units) {
  document_calls_cache().work += units;
}

namespace {

std::vector<KernelCall> packed_step_calls(const Workload& w, std::int64_t device,
                                          std::int64_t step) {
  auto& cache = document_calls_cache();
  if (!cache.matches(w)) cache.reset(w);
  if (device < 0 || device >= cache.devices || step < 0 || step >= cache.steps)
    return cache.compute(w, device, step);  // out of range: the layout's own refusal
  const auto i = static_cast<std::size_t>(device * cache.steps + step);
  if (i >= cache.done.size()) return cache.compute(w, device, step);
  if (!cache.done[i]) {
    cache.calls[i] = cache.compute(w, device, step);
    cache.done[i] = true;
  }
  return cache.calls[i];
}

}  // namespace

std::vector<KernelCall> merge_shapes(std::vector<KernelCall> calls) {
  const auto shape = [](const KernelCall& c) { return std::tie(c.q, c.k, c.mask, c.shift); };
  std::sort(calls.begin(), calls.end(),
            [&](const KernelCall& a, const KernelCall& b) { return shape(a) < shape(b); });
  std::vector<KernelCall> merged;
  for (const auto& c : calls) {
    if (!merged.empty() && shape(merged.back()) == shape(c))
      merged.back().heads = add_checked(merged.back().heads, c.heads, kWhat);
    else
      merged.push_back(c);
  }
  return merged;
}

DocumentCallsScope::DocumentCallsScope(const Workload& w) {
  if (w.documents.empty()) return;
  auto& cache = document_calls_cache();
  if (cache.pinned) return;  // an outer scope holds the pin
  if (!cache.matches(w)) cache.reset(w);
  cache.pinned = &w;
  owner_ = true;
}

DocumentCallsScope::~DocumentCallsScope() {
  if (owner_) document_calls_cache().pinned = nullptr;
}

std::vector<KernelCall> step_calls(const Workload& w, std::int64_t device, std::int64_t step) {
  // Packed documents: the varlen kernel's calls, one or more per document.
  if (!w.documents.empty()) return packed_step_calls(w, device, step);
  const auto n = w.devices, c = w.block;
  const auto H = static_cast<std::uint64_t>(w.shape.heads);
  const auto Full = CallMask::Full, Causal = CallMask::Causal;
  std::vector<KernelCall> calls;
  switch (w.layout) {
    case Layout::Ulysses: {
      const auto S = w.seq_len();
      calls.push_back({S, S, w.causal ? Causal : Full, 0, H / static_cast<std::uint64_t>(n)});
      break;
    }
    case Layout::Allgather: {
      if (!w.causal) {
        calls.push_back({c, w.seq_len(), Full, 0, H});
        break;
      }
      // One call per query chunk against every key up to its end.
      const auto h = c / 2;
      for (const auto chunk : {device, 2 * n - 1 - device}) {
        const auto keys = (chunk + 1) * h;
        calls.push_back({h, keys, Causal, keys - h, H});
      }
      break;
    }
    default: {
      // Ring-type layouts, and hybrid as zigzag on the ring of its groups.
      const bool hybrid = w.layout == Layout::Hybrid;
      const auto u = hybrid ? w.ulysses() : 1;
      const auto layout = hybrid ? Layout::Zigzag : w.layout;
      const auto cc = c * u;
      const auto heads = H / static_cast<std::uint64_t>(u);
      const auto i = device / u, j = kv_source(w, device, step);
      if (!w.causal) {
        calls.push_back({cc, cc, Full, 0, heads});
        break;
      }
      switch (layout) {
        case Layout::Striped:
          calls.push_back({cc, cc, Causal, j <= i ? 0 : -1, heads});
          break;
        case Layout::Zigzag:
          if (j == i)
            calls.push_back({cc, cc, Causal, 0, heads});
          else if (j < i)
            calls.push_back({cc, cc / 2, Full, 0, heads});
          else
            calls.push_back({cc / 2, cc, Full, 0, heads});
          break;
        default:
          if (j == i)
            calls.push_back({cc, cc, Causal, 0, heads});
          else if (j < i)
            calls.push_back({cc, cc, Full, 0, heads});
      }
    }
  }
  // A call that sees nothing is not made (striped's strict call of one token).
  std::erase_if(calls, [](const KernelCall& k) { return call_pairs(k) == 0; });
  return calls;
}

}  // namespace ringsim
