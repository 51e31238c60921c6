#include "models/analytic/memory.hpp"

#include "models/core/checked.hpp"

namespace ringsim {

std::uint64_t MemoryBreakdown::total() const {
  std::uint64_t t = 0;
  for (const auto& i : items) t = add_checked(t, i.bytes, "memory");
  return t;
}

MemoryBreakdown attention_memory(const Workload& w) {
  const std::uint64_t b = dtype_bytes(w.dtype), f32 = 4;
  const std::uint64_t c = w.block, d = w.shape.head_dim, S = w.seq_len();
  const std::uint64_t H = w.shape.heads, kvh = w.shape.kv_heads, B = w.batch;
  auto m = [&](std::uint64_t a, std::uint64_t x, std::uint64_t y) {
    return mul_checked(mul_checked(a, x, "memory"), mul_checked(y, B, "memory"), "memory");
  };
  const bool bwd = w.pass != Pass::Fwd;
  MemoryBreakdown out;
  auto add = [&](const char* name, std::uint64_t bytes) { out.items.push_back({name, bytes}); };

  // Queries held: c tokens x all heads for ring-type (hybrid: U*c tokens x H/U heads, the same).
  add("query", m(c * H, d, b));
  // The running output stays in fp32 across steps (merged by LSE each step).
  add("output_accumulator_fp32", m(c * H, d, f32));
  add("lse_and_running_stats_fp32", m(c * H, 2, f32));
  switch (w.layout) {
    case Layout::Ulysses:
      // Sequence-sharded Q/K/V before the all-to-all and head-sharded after:
      // both c x (H + 2 kvh) x d (S/N tokens x H/N heads is the same count).
      add("alltoall_staging_qkv", m(c * (H + 2 * kvh), d, b));
      add("kv_local", m(2 * c * kvh, d, b));
      add("alltoall_staging_output", m(c * H, d, b));
      break;
    case Layout::Allgather:
      // All-gathered K/V of the whole sequence: grows with S (Llama 3 sec. 3.3.2).
      add("kv_gathered", m(2 * S * kvh, d, b));
      break;
    case Layout::Hybrid:
      add("alltoall_staging_qkv", m(c * (H + 2 * kvh), d, b));
      add("alltoall_staging_output", m(c * H, d, b));
      [[fallthrough]];
    default:
      add("kv_current", m(2 * c * kvh, d, b));
      add("kv_incoming", m(2 * c * kvh, d, b));
  }
  if (bwd) {
    add("output_and_grad_output", m(2 * c * H, d, b));
    add("dq_accumulator_fp32", m(c * H, d, f32));
    if (w.layout == Layout::Allgather) {
      add("dkv_gathered_fp32", m(2 * S * kvh, d, f32));
    } else {
      add("dkv_current_fp32", m(2 * c * kvh, d, f32));
      if (w.layout != Layout::Ulysses) add("dkv_incoming_fp32", m(2 * c * kvh, d, f32));
    }
  }
  return out;
}

}  // namespace ringsim
