#include "models/core/documents.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numbers>
#include <sstream>

#include "models/core/calls.hpp"
#include "models/core/checked.hpp"
#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/npy.hpp"
#include "models/core/parse.hpp"
#include "models/core/tokens.hpp"

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
  for (auto& t : ranks) std::sort(t.begin(), t.end());
  return ranks;
}

}  // namespace

DocumentSpec parse_documents(const std::string& flag, const std::string& text) {
  if (text.find(':') != std::string::npos) return parse_distribution(flag, text);
  DocumentSpec s;
  s.text = text;
  s.kind = DocumentSpec::Kind::Lengths;
  if (try_list(text, s.lengths)) return s;
  std::error_code ec;
  if (text.find(',') != std::string::npos || !std::filesystem::exists(text, ec))
    throw InputError(fmt::format("{}: '{}' is not {}", flag, text, kForms));
  s.lengths = text.ends_with(".npy") ? read_cu_seqlens(flag, text) : read_lengths(flag, text);
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

std::uint64_t masked_pairs(const std::vector<std::int64_t>& q, const std::vector<std::int64_t>& k,
                           const std::vector<std::int64_t>& starts) {
  // Queries and document starts ascend, so the first visible key (the
  // query's document start) and the last (the query) only move right.
  std::uint64_t sum = 0;
  std::size_t lo = 0, hi = 0, d = 0;
  for (const auto p : q) {
    while (d + 1 < starts.size() && starts[d + 1] <= p) ++d;
    const auto first = starts.empty() ? std::int64_t{0} : starts[d];
    while (hi < k.size() && k[hi] <= p) ++hi;
    while (lo < k.size() && k[lo] < first) ++lo;
    if (hi > lo) sum += hi - lo;
  }
  return sum;
}

StepTokens step_tokens(const Workload& w, std::int64_t device, std::int64_t step) {
  const auto H = static_cast<std::uint64_t>(w.shape.heads);
  switch (w.layout) {
    case Layout::Ulysses: {
      auto all = workload_tokens(w, 0);
      return {all, all, H / static_cast<std::uint64_t>(w.devices)};
    }
    case Layout::Allgather:
      return {workload_tokens(w, device), device_tokens(Layout::Ring, 1, w.seq_len(), 0), H};
    case Layout::Hybrid: {
      const auto u = w.ulysses(), r = w.ring_degree();
      const auto g = device / u;
      return {workload_tokens(w, g), workload_tokens(w, ring_kv_source(r, g, step)),
              H / static_cast<std::uint64_t>(u)};
    }
    default:
      return {workload_tokens(w, device),
              workload_tokens(w, ring_kv_source(w.devices, device, step)), H};
  }
}

namespace {

// For each query, the range [lo, hi) of k (ascending) it sees: its
// document's keys up to itself. Both ends only move right.
template <typename Fn>
void visible_ranges(const std::vector<std::int64_t>& q, const std::vector<std::int64_t>& k,
                    const std::vector<std::int64_t>& starts, Fn&& fn) {
  std::size_t lo = 0, hi = 0, d = 0;
  for (std::size_t r = 0; r < q.size(); ++r) {
    const auto p = q[r];
    while (d + 1 < starts.size() && starts[d + 1] <= p) ++d;
    const auto first = starts.empty() ? std::int64_t{0} : starts[d];
    while (hi < k.size() && k[hi] <= p) ++hi;
    while (lo < k.size() && k[lo] < first) ++lo;
    fn(r, lo, std::max(lo, hi));
  }
}

}  // namespace

std::vector<KernelCall> document_calls(const std::vector<std::int64_t>& q,
                                       const std::vector<std::int64_t>& k,
                                       const std::vector<std::int64_t>& starts,
                                       std::uint64_t heads) {
  std::vector<KernelCall> calls;
  // The run of rows being built: its rows, the keys its first and last rows
  // see, where its keys start (a new document starts a new call), and whether
  // each row sees one key more than the last (causal) or the same (full).
  std::int64_t rows = 0, first_vis = 0, last_vis = 0;
  std::size_t run_lo = 0;
  bool causal = false;
  const auto flush = [&] {
    if (rows > 0)
      calls.push_back(causal ? KernelCall{rows, last_vis, CallMask::Causal, first_vis - 1, heads}
                             : KernelCall{rows, last_vis, CallMask::Full, 0, heads});
    rows = 0;
  };
  visible_ranges(q, k, starts, [&](std::size_t, std::size_t lo, std::size_t hi) {
    const auto vis = static_cast<std::int64_t>(hi - lo);
    if (vis == 0) return flush();
    if (rows > 0 && lo == run_lo) {
      const bool one_more = vis == last_vis + 1, same = vis == last_vis;
      if (rows == 1 && (one_more || same)) causal = one_more;
      if (causal ? one_more : same) {
        ++rows;
        last_vis = vis;
        return;
      }
    }
    flush();
    rows = 1;
    first_vis = last_vis = vis;
    run_lo = lo;
    causal = false;
  });
  flush();
  return calls;
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
  if (!w.causal)
    throw InputError(
        "--documents: the document mask is causal within each document; drop --no-causal");
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

}  // namespace ringsim
