#include "kernels/blockwise.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "models/core/documents.hpp"

namespace ringsim::kernels {

namespace {

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <typename T>
using CMap = Eigen::Map<const Mat<T>>;
template <typename T>
using MMap = Eigen::Map<Mat<T>>;
template <typename T>
using CVecMap = Eigen::Map<const Vec<T>>;

enum class Tile { Skip, Full, Masked };

// Smallest and largest position in each chunk, so a tile is classified in
// O(1), and whether the chunk's positions ascend (every layout's shards do:
// ring, striped, both zigzag halves), which lets the mask work on row suffixes.
// For query chunks also the least and greatest first visible key (the
// document start of the chunk's lowest and highest query).
struct ChunkBounds {
  std::vector<std::int64_t> lo, hi, first_lo, first_hi;
  std::vector<char> ascending;
};

// The first key position each query may see: its document's start (0
// without documents). Empty when there are no documents.
std::vector<std::int64_t> first_visible(const std::vector<std::int64_t>& pos,
                                        const std::vector<std::int64_t>& starts) {
  std::vector<std::int64_t> f;
  if (starts.empty()) return f;
  f.reserve(pos.size());
  for (const auto p : pos) f.push_back(starts[static_cast<std::size_t>(document_of(starts, p))]);
  return f;
}

ChunkBounds chunk_bounds(const std::vector<std::int64_t>& pos, std::int64_t chunk,
                         const std::vector<std::int64_t>& first = {}) {
  ChunkBounds b;
  const auto n = static_cast<std::int64_t>(pos.size());
  for (std::int64_t s = 0; s < n; s += chunk) {
    std::int64_t lo = pos[s], hi = pos[s];
    std::int64_t flo = first.empty() ? 0 : first[s], fhi = flo;
    bool asc = true;
    for (std::int64_t i = s; i < std::min(n, s + chunk); ++i) {
      lo = std::min(lo, pos[i]);
      hi = std::max(hi, pos[i]);
      if (!first.empty()) {
        flo = std::min(flo, first[i]);
        fhi = std::max(fhi, first[i]);
      }
      if (i > s && pos[i] < pos[i - 1]) asc = false;
    }
    b.lo.push_back(lo);
    b.hi.push_back(hi);
    b.first_lo.push_back(flo);
    b.first_hi.push_back(fhi);
    b.ascending.push_back(asc);
  }
  return b;
}

Tile classify(bool causal, const ChunkBounds& q, std::size_t qi, const ChunkBounds& k,
              std::size_t kj) {
  if (!causal) return Tile::Full;
  if (k.lo[kj] > q.hi[qi] || k.hi[kj] < q.first_lo[qi]) return Tile::Skip;
  if (k.hi[kj] <= q.lo[qi] && k.lo[kj] >= q.first_hi[qi]) return Tile::Full;
  return Tile::Masked;
}

// The causal (or document) mask of one tile: for each query row, which keys
// are visible. With ascending key positions the visible keys of a row are a
// range [begin, end) - a prefix without documents - found by binary search,
// and the masked ones set in vectorised fills; otherwise (arbitrary positions,
// tests only) element by element. `qf`: each row's first visible position
// (its document's start), or null without documents.
class TileMask {
 public:
  TileMask(const std::int64_t* qp, const std::int64_t* qf, const std::int64_t* kp,
           Eigen::Index rows, Eigen::Index cols, bool k_ascending)
      : qp_(qp), qf_(qf), kp_(kp), cols_(cols), ascending_(k_ascending) {
    if (!ascending_) return;
    begin_.assign(static_cast<std::size_t>(rows), 0);
    visible_.resize(static_cast<std::size_t>(rows));
    for (Eigen::Index r = 0; r < rows; ++r) {
      visible_[static_cast<std::size_t>(r)] = std::upper_bound(kp, kp + cols, qp[r]) - kp;
      if (qf_)
        begin_[static_cast<std::size_t>(r)] =
            std::min(visible_[static_cast<std::size_t>(r)],
                     static_cast<Eigen::Index>(std::lower_bound(kp, kp + cols, qf_[r]) - kp));
    }
  }

  // Sets the masked scores to -inf, so they cannot raise a row's maximum;
  // returns the pairs kept.
  template <typename T>
  std::uint64_t mask_scores(Mat<T>& s) const {
    return apply(s, -std::numeric_limits<T>::infinity());
  }

  // P = exp(S - shift) row by row, with masked entries exactly 0. Eigen's
  // vectorised exp clamps its argument (about -88 for float, -709 for double),
  // so exp(-inf) would come out as a subnormal ~1e-39 / ~1e-308 rather than 0:
  // slow on many CPUs, and a row with no visible key would average its masked
  // values. With ascending keys only the visible prefix is exponentiated.
  template <typename T, typename Shift>
  void exp_rows(Mat<T>& s, const Shift& shift) const {
    for (Eigen::Index r = 0; r < s.rows(); ++r) {
      if (ascending_) {
        const auto b = begin_[static_cast<std::size_t>(r)];
        const auto vis = visible_[static_cast<std::size_t>(r)];
        s.row(r).segment(b, vis - b).array() =
            (s.row(r).segment(b, vis - b).array() - shift(r)).exp();
        s.row(r).head(b).setZero();
        s.row(r).tail(cols_ - vis).setZero();
      } else {
        s.row(r).array() = (s.row(r).array() - shift(r)).exp();
      }
    }
    if (!ascending_) apply(s, T(0));
  }

 private:
  template <typename T>
  std::uint64_t apply(Mat<T>& s, T value) const {
    std::uint64_t kept = 0;
    for (Eigen::Index r = 0; r < s.rows(); ++r) {
      if (ascending_) {
        const auto b = begin_[static_cast<std::size_t>(r)];
        const auto vis = visible_[static_cast<std::size_t>(r)];
        s.row(r).head(b).setConstant(value);
        s.row(r).tail(cols_ - vis).setConstant(value);
        kept += static_cast<std::uint64_t>(vis - b);
        continue;
      }
      T* row = s.row(r).data();
      for (Eigen::Index c = 0; c < cols_; ++c) {
        if (kp_[c] > qp_[r] || (qf_ && kp_[c] < qf_[r]))
          row[c] = value;
        else
          ++kept;
      }
    }
    return kept;
  }

  const std::int64_t* qp_;
  const std::int64_t* qf_;
  const std::int64_t* kp_;
  Eigen::Index cols_;
  bool ascending_;
  std::vector<Eigen::Index> begin_, visible_;
};

void check_shapes(int qh, int kh, int vh, std::int64_t kt, std::int64_t vt, int qd, int kd,
                  int vd) {
  if (kh <= 0 || qh % kh != 0) throw std::invalid_argument("blockwise: kv heads must divide heads");
  if (kh != vh || kt != vt || qd != kd || kd != vd)
    throw std::invalid_argument("blockwise: q, k, v shapes do not match");
}

// first_visible for the documents opts carries; refuses them without a causal mask.
std::vector<std::int64_t> documents_first(const BlockOpts& opts,
                                          const std::vector<std::int64_t>& q_pos) {
  if (!opts.doc_starts.empty() && !opts.causal)
    throw std::invalid_argument("blockwise: the document mask needs causal");
  return first_visible(q_pos, opts.doc_starts);
}

std::vector<std::int64_t> or_iota(const std::vector<std::int64_t>& p, std::int64_t n) {
  if (p.empty()) return iota_positions(n);
  if (static_cast<std::int64_t>(p.size()) != n)
    throw std::invalid_argument("blockwise: positions do not match the sequence length");
  return p;
}

// Runs fn(item, thread) for every item in [0, n) on up to `threads` threads,
// the caller being thread 0. Dynamic: items are handed out one at a time from
// a shared counter, so uneven items (causal tiles) balance; use it when items
// write disjoint outputs. Static: thread t takes items t, t + threads, ...,
// so what each thread sums (the backward's private dQ) does not depend on
// timing and the result is bit-identical run to run. The first exception thrown
// by any thread is rethrown here after all have stopped. Threads are started
// per call: a call that is worth splitting (a profile point, a large block)
// runs for milliseconds, against tens of microseconds to start a thread.
enum class Schedule { Dynamic, Static };

// Threads parallel_items uses for n items: at least 1, at most one per item.
int thread_count(std::int64_t n, int threads) {
  return static_cast<int>(std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(n, 1)));
}

template <typename Fn>
void parallel_items(std::int64_t n, int threads, Schedule schedule, Fn&& fn) {
  const int t_count = thread_count(n, threads);
  if (t_count == 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&](int t) {
    try {
      if (schedule == Schedule::Static) {
        for (std::int64_t i = t; i < n && next < n; i += t_count) fn(i, t);
      } else {
        for (std::int64_t i = next++; i < n; i = next++) fn(i, t);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = n;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(t_count - 1));
  for (int t = 1; t < t_count; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

// Tile buffers, kept per thread across calls: a ring step is one short call,
// and fresh tile-sized allocations each time cost page faults comparable to
// the step's arithmetic at small blocks.
template <typename T>
struct FwdScratch {
  Mat<T> qs, s, acc;
  Vec<T> m, l, mnew, ms, alpha;
};

template <typename T>
void blockwise_forward_into(const HeadTensor<T>& q, const HeadTensor<T>& k, const HeadTensor<T>& v,
                            const std::vector<std::int64_t>& q_pos_in,
                            const std::vector<std::int64_t>& k_pos_in, const BlockOpts& opts,
                            FwdResult<T>& out) {
  check_shapes(q.heads, k.heads, v.heads, k.tokens, v.tokens, q.dim, k.dim, v.dim);
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  const std::int64_t sq = q.tokens, sk = k.tokens;
  const int d = q.dim, group = q.heads / k.heads;
  const auto qc = std::max<std::int64_t>(1, opts.q_chunk),
             kc = std::max<std::int64_t>(1, opts.k_chunk);
  const auto q_pos = or_iota(q_pos_in, sq), k_pos = or_iota(k_pos_in, sk);
  const auto q_first = documents_first(opts, q_pos);
  const auto qb = chunk_bounds(q_pos, qc, q_first), kb = chunk_bounds(k_pos, kc);
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(d)));

  // Every row of O and LSE is written below, so reused storage needs no clearing.
  out.o.heads = q.heads;
  out.o.tokens = sq;
  out.o.dim = d;
  out.o.data.resize(static_cast<std::size_t>(q.heads) * sq * d);
  out.lse.resize(static_cast<std::size_t>(q.heads) * sq);
  out.entries = 0;
  const std::int64_t q_chunks = (sq + qc - 1) / qc;
  std::atomic<std::uint64_t> entries{0};
  parallel_items(q.heads * q_chunks, opts.threads, Schedule::Dynamic, [&](std::int64_t item, int) {
    thread_local FwdScratch<T> w;
    std::uint64_t kept = 0;
    const int h = static_cast<int>(item / q_chunks);
    const std::int64_t ci = item % q_chunks, i0 = ci * qc;
    const int hk = h / group;
    const CMap<T> Q(q.head(h), sq, d), K(k.head(hk), sk, d), V(v.head(hk), sk, d);
    MMap<T> O(out.o.head(h), sq, d);
    const auto qn = std::min(qc, sq - i0);
    bool any_visible = false;
    for (std::size_t cj = 0; cj < kb.lo.size() && !any_visible; ++cj)
      any_visible = classify(opts.causal, qb, static_cast<std::size_t>(ci), kb, cj) != Tile::Skip;
    if (!any_visible) {  // every key of this chunk is masked (a causal ring step's early rows)
      O.middleRows(i0, qn).setZero();
      std::fill_n(&out.lse[static_cast<std::size_t>(h) * sq + i0], qn, kNegInf);
      return;
    }
    {
      w.qs = Q.middleRows(i0, qn) * scale;  // scale once per query row, not per score
      w.m.setConstant(qn, kNegInf);
      w.l.setZero(qn);
      w.acc.setZero(qn, d);
      for (std::int64_t j0 = 0, cj = 0; j0 < sk; j0 += kc, ++cj) {
        const auto tile = classify(opts.causal, qb, static_cast<std::size_t>(ci), kb,
                                   static_cast<std::size_t>(cj));
        if (tile == Tile::Skip) continue;
        const auto kn = std::min(kc, sk - j0);
        w.s.resize(qn, kn);
        w.s.noalias() = w.qs * K.middleRows(j0, kn).transpose();
        std::optional<TileMask> mask;
        if (tile == Tile::Masked) {
          mask.emplace(&q_pos[i0], q_first.empty() ? nullptr : &q_first[i0], &k_pos[j0], qn, kn,
                       kb.ascending[static_cast<std::size_t>(cj)]);
          kept += mask->mask_scores(w.s);
        } else {
          kept += static_cast<std::uint64_t>(qn * kn);
        }
        // Online softmax: rescale what has been accumulated by exp(m_old - m_new).
        w.mnew = w.m.cwiseMax(w.s.rowwise().maxCoeff());
        // A row masked so far has m = -inf; subtracting 0 keeps exp(-inf) = 0
        // instead of exp(-inf - -inf) = NaN.
        w.ms = (w.mnew.array() == kNegInf).select(Vec<T>::Zero(qn), w.mnew);
        // exp(-inf) is not exactly 0 in Eigen's vectorised exp (see TileMask).
        w.alpha = (w.m.array() == kNegInf).select(Vec<T>::Zero(qn), (w.m - w.ms).array().exp());
        // Row by row: a contiguous row minus a scalar vectorises (exp included);
        // Eigen's colwise broadcast over a row-major tile falls back to scalar expf.
        if (mask) {
          mask->exp_rows(w.s, w.ms);
        } else {
          for (Eigen::Index r = 0; r < qn; ++r)
            w.s.row(r).array() = (w.s.row(r).array() - w.ms(r)).exp();
        }
        for (Eigen::Index r = 0; r < qn; ++r) w.acc.row(r) *= w.alpha(r);
        w.l = w.alpha.cwiseProduct(w.l) + w.s.rowwise().sum();
        w.acc.noalias() += w.s * V.middleRows(j0, kn);
        w.m = w.mnew;
      }
      T* lse = &out.lse[static_cast<std::size_t>(h) * sq + i0];
      for (std::int64_t r = 0; r < qn; ++r) {
        if (w.l(r) > 0) {
          O.row(i0 + r) = w.acc.row(r) / w.l(r);
          lse[r] = w.m(r) + std::log(w.l(r));
        } else {  // every key masked
          O.row(i0 + r).setZero();
          lse[r] = kNegInf;
        }
      }
    }
    entries += kept;
  });
  out.entries = entries;
}

template <typename T>
FwdResult<T> blockwise_forward(const HeadTensor<T>& q, const HeadTensor<T>& k,
                               const HeadTensor<T>& v, const std::vector<std::int64_t>& q_pos,
                               const std::vector<std::int64_t>& k_pos, const BlockOpts& opts) {
  FwdResult<T> out;
  blockwise_forward_into(q, k, v, q_pos, k_pos, opts, out);
  return out;
}

template <typename T>
std::vector<T> softmax_delta(const HeadTensor<T>& o, const HeadTensor<T>& d_o) {
  if (o.heads != d_o.heads || o.tokens != d_o.tokens || o.dim != d_o.dim)
    throw std::invalid_argument("softmax_delta: O and dO shapes differ");
  std::vector<T> delta(static_cast<std::size_t>(o.heads) * o.tokens);
  for (int h = 0; h < o.heads; ++h) {
    const CMap<T> O(o.head(h), o.tokens, o.dim), dO(d_o.head(h), o.tokens, o.dim);
    Eigen::Map<Vec<T>>(&delta[static_cast<std::size_t>(h) * o.tokens], o.tokens) =
        (O.array() * dO.array()).rowwise().sum();
  }
  return delta;
}

template <typename T>
struct BwdScratch {
  Mat<T> p, dp, dkj, dvj;
};

template <typename T>
std::uint64_t blockwise_backward_accumulate(const HeadTensor<T>& q, const HeadTensor<T>& k,
                                            const HeadTensor<T>& v, const HeadTensor<T>& d_o,
                                            const std::vector<T>& lse, const std::vector<T>& delta,
                                            const std::vector<std::int64_t>& q_pos_in,
                                            const std::vector<std::int64_t>& k_pos_in,
                                            const BlockOpts& opts, HeadTensor<T>& dq,
                                            HeadTensor<T>& dk, HeadTensor<T>& dv) {
  check_shapes(q.heads, k.heads, v.heads, k.tokens, v.tokens, q.dim, k.dim, v.dim);
  const std::int64_t sq = q.tokens, sk = k.tokens;
  const int d = q.dim, group = q.heads / k.heads;
  if (d_o.size() != q.size() || dq.size() != q.size() || dk.size() != k.size() ||
      dv.size() != v.size() || lse.size() != static_cast<std::size_t>(q.heads) * sq ||
      delta.size() != lse.size())
    throw std::invalid_argument("blockwise backward: buffer sizes do not match q, k, v");
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  const auto qc = std::max<std::int64_t>(1, opts.q_chunk),
             kc = std::max<std::int64_t>(1, opts.k_chunk);
  const auto q_pos = or_iota(q_pos_in, sq), k_pos = or_iota(k_pos_in, sk);
  const auto q_first = documents_first(opts, q_pos);
  const auto qb = chunk_bounds(q_pos, qc, q_first), kb = chunk_bounds(k_pos, kc);
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(d)));

  // A query whose every key is masked has LSE -inf and all its scores -inf;
  // using 0 there makes P = exp(-inf - 0) = 0 rather than NaN.
  std::vector<T> lse_safe(lse);
  for (auto& x : lse_safe)
    if (x == kNegInf) x = 0;

  // The scaled queries, shared read-only by every thread. Like the tile
  // buffers, they live in the calling thread's storage across calls: a ring
  // step's fresh megabyte costs page faults comparable to its arithmetic on
  // a fast core (measured: a backward at block 1024 took twice as long).
  // (Worker threads reach them through these references: a thread_local named
  // inside the lambda would be the worker's own, empty, copy.)
  thread_local std::vector<T> q_scaled_storage;
  std::vector<T>& q_scaled = q_scaled_storage;
  q_scaled.resize(q.data.size());
  Eigen::Map<Vec<T>>(q_scaled.data(), static_cast<Eigen::Index>(q_scaled.size())) =
      CVecMap<T>(q.data.data(), static_cast<Eigen::Index>(q.data.size())) * scale;
  const auto q_head = [&](int h) {
    return CMap<T>(q_scaled.data() + static_cast<std::size_t>(h) * sq * d, sq, d);
  };
  // dQ gathers from every key chunk: with several threads each adds into its
  // own copy (thread 0 into dq itself) and the copies are summed at the end.
  const std::int64_t k_chunks = (sk + kc - 1) / kc;
  const int threads = thread_count(k.heads * k_chunks, opts.threads);
  thread_local std::vector<std::vector<T>> dq_private_storage;
  std::vector<std::vector<T>>& dq_private = dq_private_storage;
  dq_private.resize(static_cast<std::size_t>(threads - 1));
  for (auto& part : dq_private) part.assign(dq.data.size(), T(0));
  std::atomic<std::uint64_t> entries{0};
  parallel_items(k.heads * k_chunks, threads, Schedule::Static, [&](std::int64_t item, int t) {
    thread_local BwdScratch<T> w;
    auto& p = w.p;
    auto& dp = w.dp;
    auto& dkj = w.dkj;
    auto& dvj = w.dvj;
    std::uint64_t kept = 0;
    const int hk = static_cast<int>(item / k_chunks);
    const std::int64_t cj = item % k_chunks, j0 = cj * kc;
    T* dq_base = t == 0 ? dq.data.data() : dq_private[static_cast<std::size_t>(t - 1)].data();
    const CMap<T> K(k.head(hk), sk, d), V(v.head(hk), sk, d);
    MMap<T> dK(dk.head(hk), sk, d), dV(dv.head(hk), sk, d);
    // FlashAttention-2 order: key chunks outside, so dK/dV of a chunk build up
    // in a small tile and are written once.
    {
      const auto kn = std::min(kc, sk - j0);
      const auto Kj = K.middleRows(j0, kn);
      const auto Vj = V.middleRows(j0, kn);
      dkj.setZero(kn, d);
      dvj.setZero(kn, d);
      for (int g = 0; g < group; ++g) {
        const int h = hk * group + g;
        const CMap<T> Q(q.head(h), sq, d), dO(d_o.head(h), sq, d);
        const auto Qs = q_head(h);
        MMap<T> dQ(dq_base + static_cast<std::size_t>(h) * sq * d, sq, d);
        for (std::int64_t i0 = 0, ci = 0; i0 < sq; i0 += qc, ++ci) {
          const auto tile = classify(opts.causal, qb, static_cast<std::size_t>(ci), kb,
                                     static_cast<std::size_t>(cj));
          if (tile == Tile::Skip) continue;
          const auto qn = std::min(qc, sq - i0);
          const CVecMap<T> L(&lse_safe[static_cast<std::size_t>(h) * sq + i0], qn);
          const CVecMap<T> D(&delta[static_cast<std::size_t>(h) * sq + i0], qn);
          const auto dOi = dO.middleRows(i0, qn);
          p.resize(qn, kn);
          p.noalias() = Qs.middleRows(i0, qn) * Kj.transpose();
          std::optional<TileMask> mask;
          if (tile == Tile::Masked) {
            mask.emplace(&q_pos[i0], q_first.empty() ? nullptr : &q_first[i0], &k_pos[j0], qn, kn,
                         kb.ascending[static_cast<std::size_t>(cj)]);
            kept += mask->mask_scores(p);
          } else {
            kept += static_cast<std::uint64_t>(qn * kn);
          }
          if (mask) {  // P = exp(S - LSE), row by row to vectorise
            mask->exp_rows(p, L);
          } else {
            for (Eigen::Index r = 0; r < qn; ++r)
              p.row(r).array() = (p.row(r).array() - L(r)).exp();
          }
          dvj.noalias() += p.transpose() * dOi;  // dV += P^T dO
          dp.resize(qn, kn);
          dp.noalias() = dOi * Vj.transpose();  // dP = dO V^T
          // dS = P * (dP - D), with the softmax scale folded in once here.
          for (Eigen::Index r = 0; r < qn; ++r)
            dp.row(r).array() = p.row(r).array() * (dp.row(r).array() - D(r)) * scale;
          dQ.middleRows(i0, qn).noalias() += dp * Kj;              // dQ += dS K
          dkj.noalias() += dp.transpose() * Q.middleRows(i0, qn);  // dK += dS^T Q
        }
      }
      dK.middleRows(j0, kn) += dkj;
      dV.middleRows(j0, kn) += dvj;
    }
    entries += kept;
  });
  // Static schedule, summed in thread order: bit-identical run to run.
  for (const auto& part : dq_private)
    Eigen::Map<Vec<T>>(dq.data.data(), static_cast<Eigen::Index>(dq.data.size())) +=
        CVecMap<T>(part.data(), static_cast<Eigen::Index>(part.size()));
  return entries;
}

template <typename T>
Grads<T> blockwise_backward(const HeadTensor<T>& q, const HeadTensor<T>& k, const HeadTensor<T>& v,
                            const HeadTensor<T>& o, const std::vector<T>& lse,
                            const HeadTensor<T>& d_o, const std::vector<std::int64_t>& q_pos,
                            const std::vector<std::int64_t>& k_pos, const BlockOpts& opts) {
  Grads<T> g;
  g.dq = HeadTensor<T>(q.heads, q.tokens, q.dim);
  g.dk = HeadTensor<T>(k.heads, k.tokens, k.dim);
  g.dv = HeadTensor<T>(v.heads, v.tokens, v.dim);
  const auto delta = softmax_delta(o, d_o);
  g.entries =
      blockwise_backward_accumulate(q, k, v, d_o, lse, delta, q_pos, k_pos, opts, g.dq, g.dk, g.dv);
  return g;
}

#define RINGSIM_INSTANTIATE(T)                                                                    \
  template void blockwise_forward_into(const HeadTensor<T>&, const HeadTensor<T>&,                \
                                       const HeadTensor<T>&, const std::vector<std::int64_t>&,    \
                                       const std::vector<std::int64_t>&, const BlockOpts&,        \
                                       FwdResult<T>&);                                            \
  template FwdResult<T> blockwise_forward(const HeadTensor<T>&, const HeadTensor<T>&,             \
                                          const HeadTensor<T>&, const std::vector<std::int64_t>&, \
                                          const std::vector<std::int64_t>&, const BlockOpts&);    \
  template std::vector<T> softmax_delta(const HeadTensor<T>&, const HeadTensor<T>&);              \
  template std::uint64_t blockwise_backward_accumulate(                                           \
      const HeadTensor<T>&, const HeadTensor<T>&, const HeadTensor<T>&, const HeadTensor<T>&,     \
      const std::vector<T>&, const std::vector<T>&, const std::vector<std::int64_t>&,             \
      const std::vector<std::int64_t>&, const BlockOpts&, HeadTensor<T>&, HeadTensor<T>&,         \
      HeadTensor<T>&);                                                                            \
  template Grads<T> blockwise_backward(                                                           \
      const HeadTensor<T>&, const HeadTensor<T>&, const HeadTensor<T>&, const HeadTensor<T>&,     \
      const std::vector<T>&, const HeadTensor<T>&, const std::vector<std::int64_t>&,              \
      const std::vector<std::int64_t>&, const BlockOpts&);
RINGSIM_INSTANTIATE(float)
RINGSIM_INSTANTIATE(double)
#undef RINGSIM_INSTANTIATE

}  // namespace ringsim::kernels
