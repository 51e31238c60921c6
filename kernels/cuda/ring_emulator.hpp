#pragma once
// One GPU plays n devices of a context-parallel ring: each virtual device keeps its
// layout's Q/K/V rows in its own buffers, and at step s attends to the K/V that
// started on device (r - s) mod n, exactly the blocks a real ring would compute
// (no communication is timed: the point is that the blockwise kernels, the
// position masks and the LSE merge reproduce full attention).
#include <cstdint>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/ring_plan.hpp"

namespace ringsim::kernels::cuda {

struct RingProblem {
  DType dtype = DType::BF16;
  int head_dim = 128;
  std::int64_t seq = 0;  // global sequence length (queries = keys)
  int heads = 1, kv_heads = 1;
  bool causal = true;
  RingLayout layout = RingLayout::Ring;
  int devices = 1;
};

// Global tensors in token order (device memory). o: [seq, heads, d] in the input
// type; lse: [seq, heads].
void ring_forward(const RingProblem& pr, const std::uint16_t* q, const std::uint16_t* k,
                  const std::uint16_t* v, std::uint16_t* o, float* lse, void* stream = nullptr);

// Gradients (fp32, overwritten) of sum(dO * O) given the forward's o and lse; each
// virtual device adds its step contributions to the dK/dV of the K/V it holds.
void ring_backward(const RingProblem& pr, const std::uint16_t* q, const std::uint16_t* k,
                   const std::uint16_t* v, const std::uint16_t* o, const std::uint16_t* d_o,
                   const float* lse, float* dq, float* dk, float* dv, void* stream = nullptr);

}  // namespace ringsim::kernels::cuda
