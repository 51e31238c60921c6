// LSE merge: two halves of the keys merge into attention over all keys;
// -inf (fully masked) rows; huge LSEs; order independence.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "helpers.hpp"
#include "kernels/accuracy.hpp"
#include "kernels/blockwise.hpp"
#include "kernels/merge.hpp"
#include "kernels/reference.hpp"

namespace ringsim::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Merge, TwoKeyRangesGiveFullAttention) {
  const int H = 2, Hk = 1, d = 8;
  const std::int64_t S = 40, split = 17;
  AttnInputs in;
  in.q = testing::randn(S * H * d, 1);
  in.k = testing::randn(S * Hk * d, 2);
  in.v = testing::randn(S * Hk * d, 3);
  const auto all = iota_positions(S);
  const std::vector<std::int64_t> lo(all.begin(), all.begin() + split),
      hi(all.begin() + split, all.end());
  for (bool causal : {false, true}) {
    BlockOpts opts{8, 8, causal};
    const auto q = gather_rows<double>(in.q, H, d, all, 0, H);
    auto a = blockwise_forward(q, gather_rows<double>(in.k, Hk, d, lo, 0, Hk),
                               gather_rows<double>(in.v, Hk, d, lo, 0, Hk), all, lo, opts);
    const auto b = blockwise_forward(q, gather_rows<double>(in.k, Hk, d, hi, 0, Hk),
                                     gather_rows<double>(in.v, Hk, d, hi, 0, Hk), all, hi, opts);
    // Causal: queries before `split` see nothing of the second range (LSE -inf there).
    merge_partial(a.o, a.lse, b.o, b.lse);
    std::vector<double> o(in.q.size()), lse(static_cast<std::size_t>(S * H));
    scatter_rows(a.o, H, all, 0, o);
    scatter_scalars(a.lse, H, all, H, 0, lse);
    const auto ref = reference_forward({S, S, H, Hk, d, causal}, in.q, in.k, in.v);
    const double tau = tolerance_model(in, Hk, d, true).tau();
    EXPECT_TRUE(compare("O", o, ref.o, tau * max_abs_value(in.v)).ok) << causal;
    EXPECT_TRUE(compare("LSE", lse, ref.lse, tau).ok) << causal;
  }
}

TEST(Merge, MaskedRowsContributeNothing) {
  const double o1[2] = {1, 2}, o2[2] = {3, 4};
  double out[2];
  EXPECT_EQ(merge_row(o1, 0.5, o2, -kInf, 2, out), 0.5);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 2);
  EXPECT_EQ(merge_row(o1, -kInf, o2, 0.25, 2, out), 0.25);
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[1], 4);
  const double z[2] = {0, 0};
  EXPECT_EQ(merge_row(z, -kInf, z, -kInf, 2, out), -kInf);
  EXPECT_EQ(out[0], 0);
  EXPECT_FALSE(std::isnan(out[1]));
}

TEST(Merge, HugeLsesDoNotOverflow) {
  // exp(1e4) overflows; the merge works relative to the larger LSE.
  const float o1[1] = {1.f}, o2[1] = {3.f};
  float out[1];
  const float l = merge_row(o1, 1e4f, o2, 1e4f, 1, out);
  EXPECT_NEAR(l, 1e4f + std::log(2.f), 1e-3f);
  EXPECT_FLOAT_EQ(out[0], 2.f);
  // A difference of 200 in LSE: the smaller side's weight exp(-200) underflows to 0 cleanly.
  const float l2 = merge_row(o1, -5000.f, o2, -4800.f, 1, out);
  EXPECT_FLOAT_EQ(l2, -4800.f);
  EXPECT_FLOAT_EQ(out[0], 3.f);
}

TEST(Merge, OrderDoesNotMatter) {
  const double o1[3] = {0.1, -2, 5}, o2[3] = {7, 0.5, -1};
  double ab[3], ba[3];
  const double lab = merge_row(o1, 1.3, o2, -0.7, 3, ab);
  const double lba = merge_row(o2, -0.7, o1, 1.3, 3, ba);
  EXPECT_DOUBLE_EQ(lab, lba);
  EXPECT_DOUBLE_EQ(lab, std::log(std::exp(1.3) + std::exp(-0.7)));
  for (int e = 0; e < 3; ++e) EXPECT_NEAR(ab[e], ba[e], 1e-15);
  // Weights are the softmax of the two LSEs.
  const double w1 = std::exp(1.3) / (std::exp(1.3) + std::exp(-0.7));
  EXPECT_NEAR(ab[0], w1 * 0.1 + (1 - w1) * 7, 1e-14);
}

TEST(Merge, InPlaceAndShapeChecks) {
  HeadTensor<double> a(1, 2, 1), b(1, 2, 1), c(2, 2, 1);
  a.data = {1, 2};
  b.data = {3, 4};
  std::vector<double> la{0, 0}, lb{0, -kInf}, lc(4);
  merge_partial(a, la, b, lb);
  EXPECT_DOUBLE_EQ(a.data[0], 2);  // equal weights
  EXPECT_DOUBLE_EQ(a.data[1], 2);  // other side masked
  EXPECT_DOUBLE_EQ(la[0], std::log(2.0));
  EXPECT_THROW(merge_partial(a, la, c, lc), std::invalid_argument);
}

}  // namespace
}  // namespace ringsim::kernels
