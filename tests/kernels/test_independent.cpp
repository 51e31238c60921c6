// The acceptance check: `ringsim verify --q --k --v --out O.npy` on
// float32 (float64) .npy inputs writes an O that matches an independent
// float64 implementation to 5e-5 (1e-10), for ring, striped, zigzag and
// ulysses, causal and not, GQA included.
//
// Independent of ringsim's own code on purpose: the .npy files are written and
// read here byte by byte (not with kernels/npy), and attention is a plain
// two-pass softmax per query in long double (not kernels/reference).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "helpers.hpp"

namespace ringsim::kernels {
namespace {

// numpy.save's layout: magic, version 1.0, uint16 header length, dict padded
// with spaces to a 64-byte boundary, '\n', raw little-endian data.
void save(const std::string& path, int seq, int heads, int dim, const std::vector<double>& x,
          bool f64) {
  std::ostringstream d;
  d << "{'descr': '" << (f64 ? "<f8" : "<f4") << "', 'fortran_order': False, 'shape': (" << seq
    << ", " << heads << ", " << dim << "), }";
  std::string h = d.str();
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(h.size() & 0xff), static_cast<char>(h.size() >> 8)};
  out.write(len, 2);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  for (double v : x) {
    if (f64) {
      out.write(reinterpret_cast<const char*>(&v), 8);
    } else {
      const float f = static_cast<float>(v);
      out.write(reinterpret_cast<const char*>(&f), 4);
    }
  }
}

// Reads back what verify wrote: checks the descr and takes the data after the header.
std::vector<double> load(const std::string& path, bool f64, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(1, 5), "NUMPY");
  const std::size_t hlen =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_NE(bytes.substr(10, hlen).find(f64 ? "'<f8'" : "'<f4'"), std::string::npos);
  const std::size_t item = f64 ? 8 : 4;
  EXPECT_EQ(bytes.size(), 10 + hlen + n * item);
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n && 10 + hlen + (i + 1) * item <= bytes.size(); ++i) {
    const char* p = bytes.data() + 10 + hlen + i * item;
    if (f64) {
      std::memcpy(&x[i], p, 8);
    } else {
      float f;
      std::memcpy(&f, p, 4);
      x[i] = f;
    }
  }
  return x;
}

// Plain attention: for each query, scores against every visible key, max,
// exp, sum, weighted values, all in long double.
std::vector<double> naive_attention(int S, int H, int Hk, int D, bool causal,
                                    const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v) {
  std::vector<double> o(static_cast<std::size_t>(S * H * D));
  std::vector<long double> s(static_cast<std::size_t>(S));
  const long double scale = 1.0L / std::sqrt(static_cast<long double>(D));
  for (int h = 0; h < H; ++h) {
    const int g = h / (H / Hk);
    for (int i = 0; i < S; ++i) {
      const int last = causal ? i : S - 1;
      long double mx = -INFINITY;
      for (int j = 0; j <= last; ++j) {
        long double dot = 0;
        for (int e = 0; e < D; ++e)
          dot += static_cast<long double>(q[(i * H + h) * D + e]) * k[(j * Hk + g) * D + e];
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      long double sum = 0;
      for (int j = 0; j <= last; ++j) sum += (s[j] = std::exp(s[j] - mx));
      for (int e = 0; e < D; ++e) {
        long double acc = 0;
        for (int j = 0; j <= last; ++j) acc += s[j] * v[(j * Hk + g) * D + e];
        o[(i * H + h) * D + e] = static_cast<double>(acc / sum);
      }
    }
  }
  return o;
}

TEST(Independent, VerifyOutputMatchesFloat64Attention) {
  struct Shape {
    int devices, block, heads, kv_heads, dim;
  };
  std::mt19937_64 rng(2026);
  std::normal_distribution<double> nd;  // only seeds this test's own inputs
  int checked = 0;
  for (const char* layout : {"ring", "striped", "zigzag", "ulysses"})
    for (bool causal : {false, true})
      for (const Shape& sh : {Shape{4, 6, 4, 2, 16}, Shape{2, 10, 2, 2, 8}, Shape{2, 8, 4, 2, 8}})
        for (bool f64 : {false, true}) {
          const int S = sh.devices * sh.block, H = sh.heads, Hk = sh.kv_heads, D = sh.dim;
          if (std::string(layout) == "ulysses" && Hk % sh.devices != 0) continue;
          SCOPED_TRACE(fmt::format("{} {} S={} H={} Hk={} {}", layout, causal ? "causal" : "full",
                                   S, H, Hk, f64 ? "f64" : "f32"));
          auto gen = [&](int heads) {
            std::vector<double> x(static_cast<std::size_t>(S * heads * D));
            for (auto& e : x) e = f64 ? nd(rng) : static_cast<float>(nd(rng));
            return x;
          };
          const auto q = gen(H), k = gen(Hk), v = gen(Hk);
          const auto qp = testing::temp_path("iq.npy"), kp = testing::temp_path("ik.npy"),
                     vp = testing::temp_path("iv.npy"), op = testing::temp_path("io.npy");
          save(qp, S, H, D, q, f64);
          save(kp, S, Hk, D, k, f64);
          save(vp, S, Hk, D, v, f64);
          const auto r = testing::run_cli(
              {"verify", "--q", qp, "--k", kp, "--v", vp, "--out", op, "--layout", layout,
               "--devices", std::to_string(sh.devices), causal ? "--causal" : "--no-causal"});
          ASSERT_EQ(r.code, 0) << r.out << r.err;
          const auto got = load(op, f64, static_cast<std::size_t>(S * H * D));
          const auto want = naive_attention(S, H, Hk, D, causal, q, k, v);
          double err = 0;
          for (std::size_t i = 0; i < got.size(); ++i)
            err = std::max(err, std::fabs(got[i] - want[i]));
          EXPECT_LE(err, f64 ? 1e-10 : 5e-5);
          ++checked;
        }
  EXPECT_EQ(checked, 4 * 2 * 3 * 2 - 2 * 2);  // ulysses skips the 2-KV-head shape on 4 devices
}

}  // namespace
}  // namespace ringsim::kernels
