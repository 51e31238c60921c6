#pragma once
// The attention kernel calls a device makes at one step, as the kernel sees
// them: how many query rows and key columns, which mask, how many heads. The
// pair counts of models/core/work.hpp say how much of the score matrix is
// visible (the exactness contract); these calls say what shape it reaches the
// kernel in, which is what its speed depends on (docs/models.md, "Kernel
// calls"). Sum of call_pairs over a step's calls == step_entries: a test holds
// that for every layout.
//
// Per layout, with c tokens per device and h = c/2 (causal mask):
//   ring     own block: causal(c); an earlier block: full(c x c); a later one: none
//   striped  every step: causal(c), strict (diagonal excluded) for a block
//            from a higher device index (Striped Attention, Brandon et al.)
//   zigzag   own: causal(c) over the two chunks (local order is global order);
//            an earlier device's: full(c queries x h keys, its first chunk);
//            a later one's: full(h queries, the second chunk, x c keys)
//            (ring-flash-attention's zigzag_ring_flash_attn; Megatron-LM CP)
//   allgather  two calls, one per query chunk, against every key up to it,
//            bottom-right aligned (Llama 3, sec. 3.3.2 context parallelism)
//   hybrid   zigzag on the ring of Ulysses groups: U*c tokens, H/U heads
//   ulysses  one call over the whole sequence, H/N heads
#include <cstdint>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

enum class CallMask { Full, Causal };

struct KernelCall {
  std::int64_t q = 0, k = 0;  // query rows and key columns, per head
  CallMask mask = CallMask::Full;
  // Causal only: query row r sees key columns j <= r + shift. 0: the usual
  // top-left square; k - q: bottom-right aligned (queries are the last rows);
  // -1: the diagonal excluded (striped, keys from a higher device index).
  std::int64_t shift = 0;
  std::uint64_t heads = 0;  // query heads the call covers
  bool operator==(const KernelCall&) const = default;
};

// Visible (query, key) pairs of the call, heads included.
std::uint64_t call_pairs(const KernelCall& c);

// Pairs the kernel computes at tile granularity, heads included: FlashAttention
// -style kernels walk the score matrix in tiles of tile_q rows x tile_k columns
// and skip only tiles wholly above the causal diagonal; a touched tile costs
// all of its entries (inside the matrix: edge tiles are not padded).
std::uint64_t call_tile_pairs(const KernelCall& c, std::int64_t tile_q, std::int64_t tile_k);

// A causal call split into what runs at each rate: the columns every row sees
// (a full q x `full_k` rectangle) and the causal square on the diagonal. A
// bottom-right call of q rows and k keys is full(q x (k - q)) + causal(q).
struct CallParts {
  KernelCall full;    // q = 0 when there is none
  KernelCall causal;  // q = 0 when there is none
};
CallParts split_call(const KernelCall& c);

// The calls device `device` makes at `step` (forward and backward alike).
std::vector<KernelCall> step_calls(const Workload& w, std::int64_t device, std::int64_t step);

// Calls of one shape (q, k, mask, shift) merged into one whose heads are
// their sum, sorted by shape. In one varlen launch a call's time, pairs and
// thread blocks are each its heads times one head's
// (KernelModel::launch_seconds), so merging changes no cost, while a step's
// list shrinks from its document pieces to its distinct shapes (--pack
// document gives every device a sliver of every document). step_calls
// returns packed documents' calls merged.
std::vector<KernelCall> merge_shapes(std::vector<KernelCall> calls);

// Work done for packed documents on this thread so far, in units of one
// device-step: each step's calls found (1, plus a unit per call before
// merging) and each device-step a closed form evaluates (add_document_work).
// A count, never a clock: plan's document sampler guards on it, the same on
// every machine (models/plan/documents.hpp).
std::uint64_t document_work_done();
void add_document_work(std::uint64_t units);

// Packed documents: step_calls keeps what it builds for the last workload
// asked about (per thread), and checks on every call that the documents are
// still the same, which costs their count. While a scope lives, it trusts
// that this very object's documents hold still (a closed form asking about
// every device-step of a const workload), so each call costs what the step's
// own documents need. Nested scopes: the outermost holds the pin.
class DocumentCallsScope {
 public:
  explicit DocumentCallsScope(const Workload& w);
  ~DocumentCallsScope();
  DocumentCallsScope(const DocumentCallsScope&) = delete;
  DocumentCallsScope& operator=(const DocumentCallsScope&) = delete;

 private:
  bool owner_ = false;
};

// Query rows (x heads) a device holds: what its output, and the merge of a
// step's partial output into it, covers.
std::uint64_t device_query_rows(const Workload& w);

}  // namespace ringsim
