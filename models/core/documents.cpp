#include "models/core/documents.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numbers>
#include <sstream>

#include "models/core/atomic_file.hpp"
#include "models/core/calls.hpp"
#include "models/core/checked.hpp"
#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/npy.hpp"
#include "models/core/parse.hpp"
#include "models/core/tokens.hpp"
#include "models/core/work.hpp"

namespace ringsim {

namespace {

constexpr const char* kForms =
    "a list of lengths (8K,2K,512), a file with one length per line, cu_seqlens as a .npy file, "
    "fixed:L, uniform:A..B, lognormal:MEAN,SIGMA or dataset:NAME";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::int64_t parse_length(const std::string& flag, const std::string& text) {
  return parse_count(flag, text, 1, kMaxTokens);
}

// A list parses when every item is a length; nullopt-like empty result otherwise.
bool try_list(const std::string& text, std::vector<std::int64_t>& out) {
  for (const auto& item : split(text, ',')) {
    try {
      out.push_back(parse_length("", item));
    } catch (const InputError&) {
      out.clear();
      return false;
    }
  }
  return !out.empty();
}

std::vector<std::int64_t> read_lengths(const std::string& flag, const std::string& path) {
  const auto text = read_input_file(flag, path, std::uintmax_t{64} << 20);
  std::vector<std::int64_t> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = line.substr(0, line.find('#'));
    const auto b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    out.push_back(
        parse_length(fmt::format("{} {} line {}", flag, path, n), line.substr(b, e - b + 1)));
    if (static_cast<std::int64_t>(out.size()) > kMaxDocuments)
      throw InputError(fmt::format("{} {}: more than {} lengths", flag, path, kMaxDocuments));
  }
  if (out.empty()) throw InputError(fmt::format("{} {}: no lengths in the file", flag, path));
  return out;
}

// cu_seqlens as flash_attn_varlen_func and ring-flash-attention take them: a
// 1-d int32 or int64 array [0, l1, l1+l2, ...]; the lengths are its differences.
std::vector<std::int64_t> read_cu_seqlens(const std::string& flag, const std::string& path) {
  const auto label = flag + " " + path;
  const auto c = read_npy_ints(path, label, 1, kMaxDocuments + 1,
                               fmt::format("cu_seqlens of at most {} documents", kMaxDocuments))
                     .data;
  if (c[0] != 0)
    throw InputError(fmt::format("{}: cu_seqlens must start at 0, got {}", label, c[0]));
  if (c.size() < 2)
    throw InputError(fmt::format(
        "{}: cu_seqlens [0] holds no documents; give each document's end after the 0", label));
  std::vector<std::int64_t> out;
  out.reserve(c.size() - 1);
  for (std::size_t i = 1; i < c.size(); ++i) {
    // c[i - 1] >= 0 here, so the difference cannot overflow.
    if (c[i] <= c[i - 1])
      throw InputError(
          fmt::format("{}: cu_seqlens must increase strictly, but [{}] = {} follows [{}] = {}",
                      label, i, c[i], i - 1, c[i - 1]));
    const auto L = c[i] - c[i - 1];
    if (L > kMaxTokens)
      throw InputError(
          fmt::format("{}: document {} has {} tokens, more than {}", label, i - 1, L, kMaxTokens));
    out.push_back(L);
  }
  return out;
}

DocumentSpec parse_distribution(const std::string& flag, const std::string& text) {
  DocumentSpec s;
  s.text = text;
  const auto colon = text.find(':');
  const auto kind = text.substr(0, colon), args = text.substr(colon + 1);
  const auto bad = [&](const char* form) {
    return InputError(fmt::format("{}: '{}' is not {}", flag, text, form));
  };
  if (kind == "fixed") {
    s.kind = DocumentSpec::Kind::Fixed;
    s.lo = s.hi = parse_length(flag + " fixed:L", args);
  } else if (kind == "uniform") {
    s.kind = DocumentSpec::Kind::Uniform;
    const auto dots = args.find("..");
    if (dots == std::string::npos) throw bad("uniform:A..B (for example uniform:512..8K)");
    s.lo = parse_length(flag + " uniform:A..B", args.substr(0, dots));
    s.hi = parse_length(flag + " uniform:A..B", args.substr(dots + 2));
    if (s.lo > s.hi)
      throw InputError(fmt::format("{}: uniform:A..B needs A <= B, got '{}'", flag, text));
  } else if (kind == "lognormal") {
    s.kind = DocumentSpec::Kind::Lognormal;
    const auto parts = split(args, ',');
    if (parts.size() != 2) throw bad("lognormal:MEAN,SIGMA (for example lognormal:2K,1.0)");
    s.mean = static_cast<double>(parse_length(flag + " lognormal:MEAN", parts[0]));
    s.sigma = parse_real(flag + " lognormal:SIGMA", parts[1], 0, 4);
  } else if (kind == "dataset") {
    s.kind = DocumentSpec::Kind::Dataset;
    s.histogram = &find_length_histogram(flag, args);
  } else {
    throw InputError(fmt::format("{}: unknown distribution '{}' in '{}'; expected {}", flag, kind,
                                 text, kForms));
  }
  return s;
}

// splitmix64 (Steele, Lea and Flood 2014): a small generator whose stream is
// fixed by its definition, unlike the standard library's distributions.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {                                                           // Box-Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
};

std::int64_t draw(const DocumentSpec& s, Rng& rng, std::size_t index) {
  switch (s.kind) {
    case DocumentSpec::Kind::Fixed:
      return s.lo;
    case DocumentSpec::Kind::Uniform:
      return s.lo + static_cast<std::int64_t>(rng.uniform() * static_cast<double>(s.hi - s.lo + 1));
    case DocumentSpec::Kind::Lognormal: {
      // mu chosen so that the mean length is s.mean: E[e^X] = e^(mu + sigma^2/2).
      const double mu = std::log(s.mean) - s.sigma * s.sigma / 2;
      const double x = std::exp(mu + s.sigma * rng.normal());
      return static_cast<std::int64_t>(std::clamp(std::round(x), 1.0, double(kMaxTokens)));
    }
    case DocumentSpec::Kind::Dataset: {
      const double u_bin = rng.uniform();  // two statements: the draws' order is fixed
      const double u_len = rng.uniform();
      return histogram_length(*s.histogram, u_bin, u_len);
    }
    default:
      return s.lengths[index % s.lengths.size()];
  }
}

// Ring, zigzag: each document cut into `chunks` (n or 2n) contiguous pieces;
// striped: each document's first n x floor(L/n) tokens striped from rank 0.
// Remainders go one token each to the ranks in turn (`cursor`, carried over
// documents), so every rank ends with the same count.
std::vector<std::vector<std::int64_t>> split_documents(Layout layout,
                                                       const std::vector<std::int64_t>& lengths,
                                                       std::int64_t n) {
  const bool zigzag = layout != Layout::Ring && layout != Layout::Striped;
  const std::int64_t chunks = zigzag ? 2 * n : n;
  std::vector<std::vector<std::int64_t>> ranks(static_cast<std::size_t>(n));
  std::vector<int> extra(static_cast<std::size_t>(n));
  std::int64_t start = 0, cursor = 0;
  for (const auto L : lengths) {
    const auto q = L / chunks, r = L % chunks;
    std::fill(extra.begin(), extra.end(), 0);
    for (std::int64_t e = 0; e < r; ++e) ++extra[static_cast<std::size_t>((cursor + e) % n)];
    auto p = start;
    if (layout == Layout::Striped) {
      for (std::int64_t a = 0; a < q * n; ++a)
        ranks[static_cast<std::size_t>(a % n)].push_back(p++);
      for (std::int64_t e = 0; e < r; ++e)
        ranks[static_cast<std::size_t>((cursor + e) % n)].push_back(p++);
    } else {
      for (std::int64_t k = 0; k < chunks; ++k) {
        const bool front = k < n;
        const auto owner = front ? k : chunks - 1 - k;
        const int got = extra[static_cast<std::size_t>(owner)];
        // A rank with two remainder tokens (zigzag) puts one in each of its chunks.
        const auto size = q + (zigzag ? (front ? got >= 1 : got >= 2) : got);
        for (std::int64_t a = 0; a < size; ++a)
          ranks[static_cast<std::size_t>(owner)].push_back(p++);
      }
    }
    cursor = (cursor + r) % n;
    start += L;
  }
  // Chunks and stripes are dealt document by document, so each rank's tokens
  // come out in position order; the check keeps that a fact, not an assumption.
  for (auto& t : ranks)
    if (!std::is_sorted(t.begin(), t.end())) std::sort(t.begin(), t.end());
  return ranks;
}

}  // namespace

bool names_documents_file(const std::string& text) {
  std::error_code ec;
  return !text.empty() && std::filesystem::is_regular_file(text, ec);
}

DocumentSpec parse_documents(const std::string& flag, const std::string& text) {
  // A file first, whatever its name holds; only then is the text a form.
  const bool file = names_documents_file(text);
  if (!file && text.find(':') != std::string::npos) return parse_distribution(flag, text);
  DocumentSpec s;
  s.text = text;
  s.kind = DocumentSpec::Kind::Lengths;
  if (!file && try_list(text, s.lengths)) return s;
  if (!file) throw InputError(fmt::format("{}: '{}' is not {}", flag, text, kForms));
  s.lengths = text.ends_with(".npy") ? read_cu_seqlens(flag, text) : read_lengths(flag, text);
  register_input(flag, text);  // no output of the command may replace it
  return s;
}

std::vector<std::int64_t> pack_documents(const std::string& flag, const DocumentSpec& spec,
                                         std::int64_t seq, std::uint64_t seed) {
  Rng rng{seed};
  std::vector<std::int64_t> out;
  std::int64_t sum = 0;
  while (sum < seq) {
    if (static_cast<std::int64_t>(out.size()) == kMaxDocuments)
      throw InputError(fmt::format(
          "{}: '{}' packs more than {} documents into the sequence of {} tokens; use longer ones",
          flag, spec.text, kMaxDocuments, seq));
    const auto L = std::min(draw(spec, rng, out.size()), seq - sum);
    out.push_back(L);
    sum += L;
  }
  return out;
}

std::vector<std::int64_t> document_starts(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> s;
  s.reserve(lengths.size());
  std::int64_t p = 0;
  for (const auto L : lengths) {
    s.push_back(p);
    p += L;
  }
  return s;
}

std::int64_t document_of(const std::vector<std::int64_t>& starts, std::int64_t pos) {
  if (starts.empty()) return 0;
  return std::upper_bound(starts.begin(), starts.end(), pos) - starts.begin() - 1;
}

std::vector<std::int64_t> packed_tokens(Layout layout, Pack pack,
                                        const std::vector<std::int64_t>& lengths, std::int64_t n,
                                        std::int64_t c, std::int64_t i) {
  if (pack == Pack::Sequence || lengths.empty()) return device_tokens(layout, n, c, i);
  // The engines ask for every (device, step), so the split is kept for the
  // last packing asked about (per thread: the sweep engine runs points in parallel).
  struct Cache {
    Layout layout;
    std::int64_t n = -1;
    std::vector<std::int64_t> lengths;
    std::vector<std::vector<std::int64_t>> ranks;
  };
  thread_local Cache cache;
  if (cache.n != n || cache.layout != layout || cache.lengths != lengths) {
    cache.ranks = split_documents(layout, lengths, n);
    cache.layout = layout;
    cache.n = n;
    cache.lengths = lengths;
  }
  return cache.ranks[static_cast<std::size_t>(i)];
}

std::vector<std::int64_t> workload_tokens(const Workload& w, std::int64_t pos) {
  switch (w.layout) {
    case Layout::Ulysses:
      return device_tokens(Layout::Ring, 1, w.seq_len(), 0);
    case Layout::Hybrid:
      return packed_tokens(Layout::Zigzag, w.pack, w.documents, w.ring_degree(),
                           w.block * w.ulysses(), pos);
    default:
      return packed_tokens(w.layout, w.pack, w.documents, w.devices, w.block, pos);
  }
}

StepSources step_sources(const Workload& w, std::int64_t device, std::int64_t step) {
  const auto H = static_cast<std::uint64_t>(w.shape.heads);
  switch (w.layout) {
    case Layout::Ulysses:  // ring position 0 holds every token
      return {0, 0, H / static_cast<std::uint64_t>(w.devices)};
    case Layout::Allgather:
      return {device, kEveryToken, H};
    case Layout::Hybrid: {
      const auto u = w.ulysses(), r = w.ring_degree();
      const auto g = device / u;
      return {g, ring_kv_source(r, g, step), H / static_cast<std::uint64_t>(u)};
    }
    default:
      return {device, ring_kv_source(w.devices, device, step), H};
  }
}

std::vector<std::int64_t> source_tokens(const Workload& w, std::int64_t source) {
  return source == kEveryToken ? device_tokens(Layout::Ring, 1, w.seq_len(), 0)
                               : workload_tokens(w, source);
}

StepTokens step_tokens(const Workload& w, std::int64_t device, std::int64_t step) {
  const auto src = step_sources(w, device, step);
  return {source_tokens(w, src.q), source_tokens(w, src.k), src.heads};
}

namespace {

// The first index at or after `from` whose key is above x (keys_above) or at
// least x (keys_from), given that every key before `from` is not: a doubling
// search, so a pointer that moves a little costs little.
template <typename Below>
std::size_t gallop(const std::vector<std::int64_t>& k, std::size_t from, Below below) {
  if (from >= k.size() || !below(k[from])) return from;
  std::size_t step = 1;
  while (from + step < k.size() && below(k[from + step])) {
    from += step;
    step *= 2;
  }
  // below(k[from]); the answer lies in (from, min(from + step, size)].
  const auto end = std::min(from + step, k.size());
  return static_cast<std::size_t>(
      std::partition_point(k.begin() + static_cast<std::ptrdiff_t>(from) + 1,
                           k.begin() + static_cast<std::ptrdiff_t>(end), below) -
      k.begin());
}
std::size_t keys_above(const std::vector<std::int64_t>& k, std::size_t from, std::int64_t x) {
  return gallop(k, from, [x](std::int64_t v) { return v <= x; });
}
std::size_t keys_from(const std::vector<std::int64_t>& k, std::size_t from, std::int64_t x) {
  return gallop(k, from, [x](std::int64_t v) { return v < x; });
}

// The document holding position p, given that d (or an earlier one) holds a
// position at or before p: a doubling search from d, so a query list that
// jumps (zigzag's chunks, striped's stride) costs a logarithm, not the
// documents in between.
std::size_t next_document(const std::vector<std::int64_t>& starts, std::size_t d, std::int64_t p) {
  if (starts.empty()) return 0;
  return gallop(starts, d + 1, [p](std::int64_t v) { return v <= p; }) - 1;
}

// For each query, the range [lo, hi) of k (ascending) it sees: its
// document's keys up to itself. Both ends only move right.
template <typename Fn>
void visible_ranges(const std::vector<std::int64_t>& q, const std::vector<std::int64_t>& k,
                    const std::vector<std::int64_t>& starts, Fn&& fn) {
  std::size_t lo = 0, hi = 0, d = 0;
  for (std::size_t r = 0; r < q.size(); ++r) {
    const auto p = q[r];
    d = next_document(starts, d, p);
    const auto first = starts.empty() ? std::int64_t{0} : starts[d];
    hi = keys_above(k, hi, p);
    lo = keys_from(k, lo, first);
    fn(r, lo, std::max(lo, hi));
  }
}

}  // namespace

std::uint64_t masked_pairs(const std::vector<std::int64_t>& q, const std::vector<std::int64_t>& k,
                           const std::vector<std::int64_t>& starts) {
  std::uint64_t sum = 0;
  visible_ranges(q, k, starts,
                 [&](std::size_t, std::size_t lo, std::size_t hi) { sum += hi - lo; });
  return sum;
}

namespace {

// The varlen kernel's runs of rows (document_calls), built one row at a time
// from the keys [lo, lo + vis) each row sees: a run grows while its rows start
// at the same key and each sees the same count as the last (a full call) or
// one more (a causal call, bottom-right shifted); anything else ends it.
class CallRuns {
 public:
  explicit CallRuns(std::uint64_t heads) : heads_(heads) {}

  void row(std::size_t lo, std::int64_t vis) {
    if (vis == 0) return flush();
    if (rows_ > 0 && lo == run_lo_) {
      const bool one_more = vis == last_vis_ + 1, same = vis == last_vis_;
      if (rows_ == 1 && (one_more || same)) causal_ = one_more;
      if (causal_ ? one_more : same) {
        ++rows_;
        last_vis_ = vis;
        return;
      }
    }
    flush();
    rows_ = 1;
    first_vis_ = last_vis_ = vis;
    run_lo_ = lo;
    causal_ = false;
  }

  // `m` rows that all start at key lo, the first seeing vis keys and each
  // next one `delta` (0 or 1) more: the same as m calls of row(). Once the
  // run is growing by that delta from lo, every further row only grows it.
  void rows(std::size_t lo, std::int64_t vis, std::int64_t delta, std::int64_t m) {
    std::int64_t i = 0;
    for (; i < m; ++i, vis += delta) {
      const bool growing = rows_ >= 2 && run_lo_ == lo && causal_ == (delta == 1) &&
                           last_vis_ + delta == vis && vis > 0;
      const bool idle = rows_ == 0 && vis == 0 && delta == 0;
      if (growing || idle) break;
      row(lo, vis);
    }
    if (i == m || rows_ == 0) return;  // done, or idle: rows that see nothing add nothing
    rows_ += m - i;
    last_vis_ = vis + delta * (m - i - 1);
  }

  // Rows that see nothing, however many: they end the run in progress.
  void gap() { flush(); }

  std::vector<KernelCall> finish() {
    flush();
    return std::move(calls_);
  }

 private:
  void flush() {
    if (rows_ > 0)
      calls_.push_back(causal_
                           ? KernelCall{rows_, last_vis_, CallMask::Causal, first_vis_ - 1, heads_}
                           : KernelCall{rows_, last_vis_, CallMask::Full, 0, heads_});
    rows_ = 0;
  }

  std::uint64_t heads_;
  std::vector<KernelCall> calls_;
  std::int64_t rows_ = 0, first_vis_ = 0, last_vis_ = 0;
  std::size_t run_lo_ = 0;
  bool causal_ = false;
};

// Where each run of evenly spaced keys ends: same_end(i) is the last index e
// with k[i..e] evenly spaced by k[i+1] - k[i]. Built on first use, O(|k|).
class KeyRuns {
 public:
  explicit KeyRuns(const std::vector<std::int64_t>& k) : k_(k) {}

  // Whether keys [h1, h2) are spaced exactly `stride` apart.
  bool spaced(std::size_t h1, std::size_t h2, std::int64_t stride) {
    if (h2 - h1 < 2) return true;
    if (k_[h1 + 1] - k_[h1] != stride) return false;
    if (same_end_.empty()) build();
    return same_end_[h1] >= h2 - 1;
  }

 private:
  void build() {
    const auto n = k_.size();
    same_end_.assign(n, n - 1);
    for (std::size_t i = n - 2; i-- > 0;)
      same_end_[i] = k_[i + 2] - k_[i + 1] == k_[i + 1] - k_[i] ? same_end_[i + 1] : i + 1;
  }
  const std::vector<std::int64_t>& k_;
  std::vector<std::size_t> same_end_;
};

// A stretch of query rows inside one document whose positions are evenly
// spaced (`stride` apart: 1 for a contiguous chunk, N for striped), whose
// keys start at index lo.
struct Stretch {
  const std::vector<std::int64_t>& q;
  const std::vector<std::int64_t>& k;
  KeyRuns& key_runs;
  std::size_t lo;
  std::int64_t stride;

  // Rows [a, b), hi_a and hi_last the first key after q[a] and after q[b-1].
  // The keys a row sees grow by one a row exactly when the n - 1 keys between
  // q[a] and q[b-1] lie one in each gap between rows: for stride 1 any n - 1
  // of them do; otherwise they must be spaced by the stride too (the first
  // lies after q[a], the last at or before q[b-1]). Flat when none lie there.
  // Else halve the rows: few pieces, each handed to `runs` in bulk.
  void rows(std::size_t a, std::size_t b, std::size_t hi_a, std::size_t hi_last,
            CallRuns& runs) const {
    const auto n = static_cast<std::int64_t>(b - a);
    const auto grew = static_cast<std::int64_t>(hi_last - hi_a);
    const bool flat = grew == 0 || n == 1;
    const bool one_more = grew == n - 1 && (stride == 1 || key_runs.spaced(hi_a, hi_last, stride));
    if (flat || one_more) {
      runs.rows(lo, static_cast<std::int64_t>(std::max(lo, hi_a) - lo), flat ? 0 : 1, n);
      return;
    }
    const auto mid = a + (b - a) / 2;
    const auto in = [&](std::int64_t x) {  // the first key above x, within [hi_a, hi_last]
      return static_cast<std::size_t>(
          std::upper_bound(k.begin() + static_cast<std::ptrdiff_t>(hi_a),
                           k.begin() + static_cast<std::ptrdiff_t>(hi_last), x) -
          k.begin());
    };
    rows(a, mid, hi_a, in(q[mid - 1]), runs);
    rows(mid, b, in(q[mid]), hi_last, runs);
  }
};

// The end of the stretch that starts at row a (position p) and stays before
// doc_end, and its stride: contiguous positions by doubling steps, then
// halving, while q[b-1] - p == b-1-a (positions ascend strictly, so every one
// in between is there); other strides one row at a time.
std::pair<std::size_t, std::int64_t> stretch_end(const std::vector<std::int64_t>& q, std::size_t a,
                                                 std::int64_t doc_end) {
  const auto p = q[a];
  if (a + 1 < q.size() && q[a + 1] < doc_end && q[a + 1] - p > 1) {
    const auto stride = q[a + 1] - p;
    auto b = a + 2;
    while (b < q.size() && q[b] - q[b - 1] == stride && q[b] < doc_end) ++b;
    return {b, stride};
  }
  const auto fits = [&](std::size_t b) {
    return b <= q.size() && q[b - 1] - p == static_cast<std::int64_t>(b - 1 - a) &&
           q[b - 1] < doc_end;
  };
  std::size_t b = a + 1, step = 1;
  while (fits(b + step)) {
    b += step;
    step *= 2;
  }
  for (; step > 0; step /= 2)
    if (fits(b + step)) b += step;
  return {b, 1};
}

}  // namespace

std::vector<KernelCall> document_calls_by_row(const std::vector<std::int64_t>& q,
                                              const std::vector<std::int64_t>& k,
                                              const std::vector<std::int64_t>& starts,
                                              std::uint64_t heads) {
  CallRuns runs(heads);
  visible_ranges(q, k, starts, [&](std::size_t, std::size_t lo, std::size_t hi) {
    runs.row(lo, static_cast<std::int64_t>(hi - lo));
  });
  return runs.finish();
}

std::vector<KernelCall> document_calls(const std::vector<std::int64_t>& q,
                                       const std::vector<std::int64_t>& k,
                                       const std::vector<std::int64_t>& starts,
                                       std::uint64_t heads) {
  // The rows in stretches of evenly spaced positions inside one document:
  // there a row sees the keys from one index (its document's first) up to
  // itself, and a stretch splits into few pieces where that count is flat or
  // grows by one a row (Stretch::rows).
  CallRuns runs(heads);
  KeyRuns key_runs(k);
  std::size_t d = 0, lo = 0, hi = 0;  // document; first key of it, first key after the row
  for (std::size_t a = 0; a < q.size();) {
    const auto p = q[a];
    d = next_document(starts, d, p);
    const auto doc_end = d + 1 < starts.size() ? starts[d + 1] : INT64_MAX;
    const auto first = starts.empty() ? std::int64_t{0} : starts[d];
    lo = keys_from(k, lo, first);
    // Rows before the next key of their document or a later one see nothing:
    // skip them in one search, so a step whose blocks share no document costs
    // a few searches, not its documents (a ring's steps mostly share none).
    if (lo == k.size()) break;
    if (k[lo] > p) {
      runs.gap();
      a = keys_from(q, a, k[lo]);
      continue;
    }
    const auto [b, stride] = stretch_end(q, a, doc_end);
    hi = keys_above(k, hi, p);
    const auto hi_last = keys_above(k, hi, q[b - 1]);
    Stretch{q, k, key_runs, lo, stride}.rows(a, b, hi, hi_last, runs);
    hi = hi_last;
    a = b;
  }
  return runs.finish();
}

std::uint64_t step_tile_entries(const Workload& w, std::int64_t device, std::int64_t step,
                                std::int64_t tile_q, std::int64_t tile_k) {
  const auto t = step_tokens(w, device, step);
  const auto starts = document_starts(w.documents);
  const auto nq = static_cast<std::int64_t>(t.q.size()), nk = static_cast<std::int64_t>(t.k.size());
  std::uint64_t pairs = 0;
  // Per query tile, the key tiles some row of it sees; rows' ranges move
  // right, so a tile is counted once by remembering the last one counted.
  std::int64_t tile_row = -1, last_col = -1;
  visible_ranges(t.q, t.k, starts, [&](std::size_t r, std::size_t lo, std::size_t hi) {
    const auto tr = static_cast<std::int64_t>(r) / tile_q;
    if (tr != tile_row) {
      tile_row = tr;
      last_col = -1;
    }
    if (hi == lo) return;
    const auto rows = std::min(tile_q, nq - tr * tile_q);
    for (auto tc = std::max(last_col + 1, static_cast<std::int64_t>(lo) / tile_k);
         tc <= static_cast<std::int64_t>(hi - 1) / tile_k; ++tc) {
      pairs += static_cast<std::uint64_t>(rows * std::min(tile_k, nk - tc * tile_k));
      last_col = tc;
    }
  });
  return mul_checked(pairs, t.heads, "--devices/--block: tile entries of one step");
}

std::string documents_imbalance(const Workload& w, std::int64_t step) {
  const auto starts = document_starts(w.documents);
  const auto devices = w.layout == Layout::Ulysses ? 1 : w.devices;
  std::int64_t busiest = 0;
  std::uint64_t most = 0, all = 0;
  for (std::int64_t d = 0; d < devices; ++d) {
    const auto t = step_tokens(w, d, step);
    const auto e = masked_pairs(t.q, t.k, starts);
    all += e;
    if (e > most) {
      most = e;
      busiest = d;
    }
  }
  if (most == 0) return "";
  // The busiest device's pairs by document (of its queries).
  const auto t = step_tokens(w, busiest, step);
  std::map<std::int64_t, std::uint64_t> by_doc;
  visible_ranges(t.q, t.k, starts, [&](std::size_t r, std::size_t lo, std::size_t hi) {
    if (hi > lo) by_doc[document_of(starts, t.q[r])] += hi - lo;
  });
  std::vector<std::pair<std::uint64_t, std::int64_t>> ranked;
  for (const auto& [doc, n] : by_doc) ranked.emplace_back(n, doc);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> names;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, ranked.size()); ++i)
    names.push_back(fmt::format("{} ({} tokens)", ranked[i].second,
                                w.documents[static_cast<std::size_t>(ranked[i].second)]));
  const double share = 100.0 * static_cast<double>(most) / static_cast<double>(all);
  return fmt::format(
      "packed documents: at step {} device {} computes {:.0f}% of all devices' pairs, from "
      "document{} {}{}; {}",
      step, busiest, share, ranked.size() == 1 ? "" : "s", join(names, ", "),
      ranked.size() > 3 ? fmt::format(" and {} more", ranked.size() - 3) : "",
      w.pack == Pack::Sequence ? "--pack document splits every document over all devices"
      : w.layout == Layout::Ring || w.layout == Layout::Striped
          ? "zigzag (--layout zigzag) balances each document's causal work"
          : "documents shorter than 2 x devices chunks leave the steps unequal whatever the split");
}

void check_documents(const Workload& w) {
  if (w.documents.empty()) return;
  if (!w.causal) throw InputError(kDocumentsNotCausal);
  std::int64_t sum = 0;
  for (const auto L : w.documents) {
    if (L < 1) throw InputError(fmt::format("--documents: lengths must be at least 1, got {}", L));
    sum += L;
  }
  if (sum != w.seq_len())
    throw InputError(fmt::format("--documents: the lengths sum to {}, not the sequence's {} tokens",
                                 sum, w.seq_len()));
  if (static_cast<std::int64_t>(w.documents.size()) > kMaxDocuments)
    throw InputError(fmt::format("--documents: at most {} documents", kMaxDocuments));
}

namespace {

// Whether a step's calls walk the device's tokens one by one (rows spaced
// apart, or slivers of every document) rather than a few contiguous chunks.
bool walks_every_token(const Workload& w) {
  return w.layout == Layout::Striped || (w.pack == Pack::Document && w.layout != Layout::Ulysses);
}

}  // namespace

void check_documents_size(const Workload& w) {
  if (w.documents.empty()) return;
  const auto steps = num_steps(w);
  const auto device_steps = static_cast<long double>(w.devices) * static_cast<long double>(steps);
  if (device_steps > static_cast<long double>(kMaxDocumentDeviceSteps)) {
    const auto most = static_cast<std::int64_t>(
        std::sqrt(static_cast<double>(kMaxDocumentDeviceSteps) * w.devices / steps));
    throw InputError(fmt::format(
        "--devices: {} devices with packed documents are beyond the closed forms' size guard: "
        "they evaluate every device at every ring step ({:.0f} device-steps), at most {}; give "
        "--devices {} or fewer",
        w.devices, static_cast<double>(device_steps), kMaxDocumentDeviceSteps, most));
  }
  const auto token_steps = device_steps * static_cast<long double>(w.block);
  if (!walks_every_token(w)) {
    if (token_steps > static_cast<long double>(kMaxDocumentListSteps))
      throw InputError(fmt::format(
          "--devices/--block: {} devices of {} tokens with packed documents are beyond the closed "
          "forms' size guard: every ring step lists each device's tokens ({:.3g} token-steps), at "
          "most {:.3g}; give fewer devices or a smaller block",
          w.devices, w.block, static_cast<double>(token_steps),
          static_cast<double>(kMaxDocumentListSteps)));
    return;
  }
  if (token_steps > static_cast<long double>(kMaxDocumentTokenSteps))
    throw InputError(fmt::format(
        "--devices/--block: {} devices of {} tokens with packed documents under {} are beyond "
        "the closed forms' size guard: every ring step walks each device's tokens ({:.3g} "
        "token-steps), at most {:.3g}; give fewer devices or a smaller block, or --pack sequence "
        "with --layout ring or zigzag (contiguous chunks cost their documents, not their tokens)",
        w.devices, w.block,
        w.layout == Layout::Striped ? std::string("--layout striped")
                                    : std::string("--pack document"),
        static_cast<double>(token_steps), static_cast<double>(kMaxDocumentTokenSteps)));
}

}  // namespace ringsim
