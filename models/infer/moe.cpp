#include "models/infer/moe.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "models/analytic/collectives.hpp"
#include "models/analytic/moe.hpp"
#include "models/infer/infer.hpp"
#include "models/plan/moe.hpp"

namespace ringsim {

namespace {

// Rows routed to each expert: per token k distinct experts (a partial
// Fisher-Yates draw), or the multinomial for long prefills.
std::vector<std::int64_t> routed_rows(int experts, int k, std::int64_t tokens, std::uint64_t seed) {
  if (tokens > kDistinctRoutingTokens) return multinomial_counts(tokens * k, experts, seed);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(experts), 0);
  std::vector<int> order(static_cast<std::size_t>(experts));
  std::mt19937_64 gen(seed);
  for (std::int64_t t = 0; t < tokens; ++t) {
    std::iota(order.begin(), order.end(), 0);
    for (int j = 0; j < k; ++j) {
      std::uniform_int_distribution<int> pick(j, experts - 1);
      std::swap(order[static_cast<std::size_t>(j)], order[static_cast<std::size_t>(pick(gen))]);
      ++rows[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])];
    }
  }
  return rows;
}

// The MLP (gate and up fused, as serving stacks' fused MoE kernels run
// them) of experts with rows[i] rows each at width `width`: the up and the
// down projection each one grouped GEMM over the experts.
double experts_seconds(const ModelShape& s, const std::vector<std::int64_t>& rows,
                       std::int64_t width, const GemmRates& rates) {
  const std::int64_t up = mlp_gated(s) ? 2 * width : width;
  return grouped_gemm_time(rows.data(), rows.size(), up, s.d_model, rates).seconds +
         grouped_gemm_time(rows.data(), rows.size(), s.d_model, width, rates).seconds;
}

// EP across CP ranks (the group: ep consecutive GPUs, TP innermost): a
// prefill's dispatch and combine, each of the T/tp x k x D routed copies per
// GPU (the training model's ep_alltoall_bytes and ep_alltoall_seconds, a
// plain all-to-all); a decode step's all-reduce of the T x D partial outputs
// over the group.
void ep_group_traffic(InferMoe& m, const InferRequest& r, const Hardware& hw, std::int64_t tokens,
                      bool decode) {
  const int db = dtype_bytes(r.dtype);
  if (decode) {
    const double bytes = static_cast<double>(tokens) * r.shape.d_model * db;
    m.alltoall_s =
        collective_time(Collective::AllReduce, bytes, placed_group(hw, r.ep), hw).seconds;
    return;
  }
  m.alltoall_bytes = ep_alltoall_bytes(r.shape, tokens, r.tp, db);
  m.alltoall_s = 2 * ep_alltoall_seconds(r.shape, m.alltoall_bytes, r.ep, hw, false);
}

}  // namespace

double expected_experts_touched(int experts, int k, std::int64_t tokens) {
  const double E = experts;
  return E * (1 - std::pow(1 - k / E, static_cast<double>(tokens)));
}

std::int64_t ep_span(const InferRequest& r) {
  return r.ep > r.tp ? r.ep / r.tp : 1;
}

std::int64_t expert_tp(const InferRequest& r) {
  return r.ep >= r.tp ? 1 : r.tp / std::max<std::int64_t>(1, r.ep);
}

InferMoe infer_moe_mlp(const InferRequest& r, const Hardware& hw, std::int64_t tokens,
                       const GemmRates& rates, const GemmRates& bf16, bool decode) {
  const auto& s = r.shape;
  InferMoe m;
  const std::int64_t ep = std::max<std::int64_t>(1, r.ep), span = ep_span(r);
  const std::int64_t width = s.expert_ffn / expert_tp(r), local = s.experts / ep;
  // A prefill's EP group routes the tokens of its span's CP ranks; a decode
  // step's tokens are the same on each.
  const std::int64_t routed = decode ? tokens : tokens * span;
  const auto rows = routed_rows(s.experts, s.experts_per_token, routed, r.routing_seed);
  std::int64_t most = 0, all = 0;
  for (std::int64_t g = 0; g < ep; ++g) {
    const std::vector<std::int64_t> mine(rows.begin() + g * local, rows.begin() + (g + 1) * local);
    m.routed_s = std::max(m.routed_s, experts_seconds(s, mine, width, rates));
    const auto n = std::accumulate(mine.begin(), mine.end(), std::int64_t{0});
    most = std::max(most, n);
    all += n;
  }
  m.experts_touched =
      static_cast<double>(std::count_if(rows.begin(), rows.end(), [](auto n) { return n > 0; }));
  m.imbalance = all > 0 ? static_cast<double>(most * ep) / static_cast<double>(all) : 1;
  // The router (D x E, replicated) and the shared experts (sliced over tp).
  m.seconds = m.routed_s + gemm_time({tokens, s.experts, s.d_model}, bf16).seconds;
  if (s.shared_experts > 0)
    m.seconds += experts_seconds(s, {tokens}, s.shared_experts * s.expert_ffn / r.tp, rates);
  if (span > 1) ep_group_traffic(m, r, hw, tokens, decode);
  return m;
}

}  // namespace ringsim
