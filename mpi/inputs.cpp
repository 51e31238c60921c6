#include "mpi/inputs.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>

#include "models/core/errors.hpp"
#include "models/core/npy.hpp"
#include "models/core/work.hpp"

namespace ringsim::mpi {

namespace {

// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective mix, so distinct
// (seed, tensor, index) triples give independent-looking values.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Dims {
  std::int64_t tokens = 0;
  int heads = 0, kv_heads = 0, dim = 0;
  bool has_do = false;
};

// The largest finite value of the type the ring computes and carries: a value
// beyond it becomes inf on conversion, and the check's errors and tolerance
// with it, so such an input is refused up front.
double largest_finite(const std::string& dtype) {
  if (dtype == "fp64") return std::numeric_limits<double>::max();
  if (dtype == "fp16") return 65504.0;                            // IEEE 754 binary16
  if (dtype == "bf16") return 0x1.fep127;                         // bfloat16
  return static_cast<double>(std::numeric_limits<float>::max());  // fp32
}

// "" or the error line naming the first value out of range.
std::string out_of_range(const NpyArray& a, const std::string& label, const std::string& dtype) {
  const double top = largest_finite(dtype);
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (std::fabs(a.data[i]) > top) {
      const auto d1 = static_cast<std::size_t>(a.shape[1] * a.shape[2]);
      const auto d2 = static_cast<std::size_t>(a.shape[2]);
      return fmt::format(
          "{}: value at [{}, {}, {}] is {:g}, beyond the range of {} (largest {:g}) that the ring "
          "computes in; scale the inputs down",
          label, i / d1, i % d1 / d2, i % d2, a.data[i], dtype, top);
    }
  return "";
}

// Rank 0: reads and checks the files; returns "" or the error line.
std::string read_files(const RingOptions& o, int ranks, FullInputs& in, Dims& d) {
  try {
    const auto budget = static_cast<std::uint64_t>(o.max_input_bytes);
    auto read_npy = [budget](const std::string& path, const std::string& label, int rank) {
      return ringsim::read_npy(path, label, rank, budget, "--max-input");
    };
    const auto q = read_npy(o.q_path, "--q " + o.q_path, 3);
    const auto k = read_npy(o.k_path, "--k " + o.k_path, 3);
    const auto v = read_npy(o.v_path, "--v " + o.v_path, 3);
    for (const auto& [a, label] :
         {std::pair{&q, "--q " + o.q_path}, {&k, "--k " + o.k_path}, {&v, "--v " + o.v_path}})
      if (auto e = out_of_range(*a, label, o.dtype); !e.empty()) return e;
    d.tokens = q.shape[0];
    d.heads = static_cast<int>(q.shape[1]);
    d.dim = static_cast<int>(q.shape[2]);
    d.kv_heads = static_cast<int>(k.shape[1]);
    if (k.shape[0] != d.tokens || k.shape[2] != d.dim)
      return fmt::format("--k {}: expected shape [{}, kv_heads, {}] to match --q, got [{}, {}, {}]",
                         o.k_path, d.tokens, d.dim, k.shape[0], k.shape[1], k.shape[2]);
    if (v.shape != k.shape)
      return fmt::format("--v {}: expected the shape of --k [{}, {}, {}], got [{}, {}, {}]",
                         o.v_path, k.shape[0], k.shape[1], k.shape[2], v.shape[0], v.shape[1],
                         v.shape[2]);
    if (d.heads % d.kv_heads != 0)
      return fmt::format("--k {}: its {} heads must divide the {} query heads of --q", o.k_path,
                         d.kv_heads, d.heads);
    if (d.tokens % ranks != 0)
      return fmt::format("--q {}: its {} tokens must split evenly over the {} ranks", o.q_path,
                         d.tokens, ranks);
    in.q = q.data;
    in.k = k.data;
    in.v = v.data;
    if (!o.do_path.empty()) {
      const auto g = read_npy(o.do_path, "--do " + o.do_path, 3);
      if (auto e = out_of_range(g, "--do " + o.do_path, o.dtype); !e.empty()) return e;
      if (g.shape != q.shape)
        return fmt::format("--do {}: expected the shape of --q [{}, {}, {}]", o.do_path, d.tokens,
                           d.heads, d.dim);
      in.d_o = g.data;
      d.has_do = true;
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

template <typename T>
kernels::HeadTensor<T> synthetic_rows(std::uint64_t seed, Tensor which,
                                      const std::vector<std::int64_t>& tokens, int heads, int dim) {
  kernels::HeadTensor<T> out(heads, static_cast<std::int64_t>(tokens.size()), dim);
  for (int h = 0; h < heads; ++h)
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      T* row = out.row(h, static_cast<std::int64_t>(t));
      const auto base = (static_cast<std::uint64_t>(tokens[t]) * heads + h) * dim;
      for (int e = 0; e < dim; ++e) row[e] = static_cast<T>(synthetic_value(seed, which, base + e));
    }
  return out;
}

// The ranks compute on inputs rounded to T; the reference must see the same values.
template <typename T>
void round_to(std::vector<double>& x) {
  for (auto& v : x) v = static_cast<double>(static_cast<T>(v));
}

template <typename T>
void round_all(FullInputs& f) {
  round_to<T>(f.q);
  round_to<T>(f.k);
  round_to<T>(f.v);
  round_to<T>(f.d_o);
}

template <typename T>
void send_tensor(const World& w, const kernels::HeadTensor<T>& x, int to, int tag) {
  RS_MPI(MPI_Send(x.data.data(), static_cast<int>(x.size()), mpi_type<T>(), to, tag, w.comm));
}

template <typename T>
void recv_tensor(const World& w, kernels::HeadTensor<T>& x, int tag) {
  RS_MPI(MPI_Recv(x.data.data(), static_cast<int>(x.size()), mpi_type<T>(), 0, tag, w.comm,
                  MPI_STATUS_IGNORE));
}

}  // namespace

double synthetic_value(std::uint64_t seed, Tensor which, std::uint64_t index) {
  const std::uint64_t h = mix(mix(seed * 4 + static_cast<std::uint64_t>(which)) ^ index);
  // Top 53 bits -> [0, 1) exactly representable, then [-1, 1).
  return static_cast<double>(h >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

std::vector<double> synthetic_tensor(std::uint64_t seed, Tensor which, std::int64_t tokens,
                                     int heads, int dim) {
  std::vector<double> x(static_cast<std::size_t>(tokens) * heads * dim);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = synthetic_value(seed, which, i);
  return x;
}

template <typename T>
Loaded<T> load_inputs(const World& w, RingOptions& o, bool keep_full) {
  Loaded<T> out;
  const bool bwd = o.pass != Pass::Fwd;
  if (o.from_files()) {
    Dims d;
    std::string err;
    if (w.rank == 0) err = read_files(o, w.size, out.full, d);
    agree_on_error(w, err);
    std::array<std::int64_t, 5> dims{d.tokens, d.heads, d.kv_heads, d.dim, d.has_do ? 1 : 0};
    RS_MPI(MPI_Bcast(dims.data(), 5, MPI_INT64_T, 0, w.comm));
    o.block = dims[0] / w.size;
    o.heads = static_cast<int>(dims[1]);
    o.kv_heads = static_cast<int>(dims[2]);
    o.head_dim = static_cast<int>(dims[3]);
    validate(o, w.size);  // the sizes are known only now
    const bool has_do = dims[4] != 0;
    if (w.rank == 0 && bwd && !has_do)
      out.full.d_o = synthetic_tensor(o.seed, Tensor::DO, dims[0], o.heads, o.head_dim);
    auto& s = out.shard;
    s.tokens = device_tokens(o.layout, w.size, o.block, w.rank);
    if (w.rank == 0) {
      const auto& f = out.full;
      for (int r = w.size - 1; r >= 0; --r) {
        const auto toks = device_tokens(o.layout, w.size, o.block, r);
        auto q = kernels::gather_rows<T>(f.q, o.heads, o.head_dim, toks, 0, o.heads);
        auto k = kernels::gather_rows<T>(f.k, o.kv_heads, o.head_dim, toks, 0, o.kv_heads);
        auto v = kernels::gather_rows<T>(f.v, o.kv_heads, o.head_dim, toks, 0, o.kv_heads);
        kernels::HeadTensor<T> g;
        if (bwd) g = kernels::gather_rows<T>(f.d_o, o.heads, o.head_dim, toks, 0, o.heads);
        if (r == 0) {
          s.q = std::move(q);
          s.k = std::move(k);
          s.v = std::move(v);
          s.d_o = std::move(g);
        } else {
          send_tensor(w, q, r, 10);
          send_tensor(w, k, r, 11);
          send_tensor(w, v, r, 12);
          if (bwd) send_tensor(w, g, r, 13);
        }
      }
      if (keep_full)
        round_all<T>(out.full);
      else
        out.full = {};
    } else {
      const auto c = static_cast<std::int64_t>(s.tokens.size());
      s.q = kernels::HeadTensor<T>(o.heads, c, o.head_dim);
      s.k = kernels::HeadTensor<T>(o.kv_heads, c, o.head_dim);
      s.v = kernels::HeadTensor<T>(o.kv_heads, c, o.head_dim);
      recv_tensor(w, s.q, 10);
      recv_tensor(w, s.k, 11);
      recv_tensor(w, s.v, 12);
      if (bwd) {
        s.d_o = kernels::HeadTensor<T>(o.heads, c, o.head_dim);
        recv_tensor(w, s.d_o, 13);
      }
    }
    return out;
  }

  validate(o, w.size);
  auto& s = out.shard;
  s.tokens = device_tokens(o.layout, w.size, o.block, w.rank);
  s.q = synthetic_rows<T>(o.seed, Tensor::Q, s.tokens, o.heads, o.head_dim);
  s.k = synthetic_rows<T>(o.seed, Tensor::K, s.tokens, o.kv_heads, o.head_dim);
  s.v = synthetic_rows<T>(o.seed, Tensor::V, s.tokens, o.kv_heads, o.head_dim);
  if (bwd) s.d_o = synthetic_rows<T>(o.seed, Tensor::DO, s.tokens, o.heads, o.head_dim);
  if (keep_full && w.rank == 0) {
    const auto S = o.block * w.size;
    out.full.q = synthetic_tensor(o.seed, Tensor::Q, S, o.heads, o.head_dim);
    out.full.k = synthetic_tensor(o.seed, Tensor::K, S, o.kv_heads, o.head_dim);
    out.full.v = synthetic_tensor(o.seed, Tensor::V, S, o.kv_heads, o.head_dim);
    if (bwd) out.full.d_o = synthetic_tensor(o.seed, Tensor::DO, S, o.heads, o.head_dim);
    round_all<T>(out.full);
  }
  return out;
}

template Loaded<float> load_inputs<float>(const World&, RingOptions&, bool);
template Loaded<double> load_inputs<double>(const World&, RingOptions&, bool);

}  // namespace ringsim::mpi
