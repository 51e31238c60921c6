#include "models/kernel/implementation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "models/core/calls.hpp"
#include "models/core/checked.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/work.hpp"
#include "models/kernel/chunk_scan.hpp"
#include "models/kernel/kernel_model.hpp"

namespace ringsim {

Implementation::Implementation(std::shared_ptr<const ComputeModel> rates)
    : rates_(std::move(rates)) {
  kernel_ = rates_->name() == "roofline" ? "roofline" : "profile";
  dma_ = true;  // no library: overlap is free
}

Implementation::Implementation(const KernelSpec& spec, std::shared_ptr<const ComputeModel> rates,
                               const Device& device, const CommLibrary* comm)
    : ops_(spec.ops),
      launch_s_(spec.launch_s),
      kernels_fwd_(spec.kernels_fwd),
      kernels_bwd_(spec.kernels_bwd),
      grad_bytes_(spec.grad_bytes),
      hbm_bandwidth_(device.hbm_bandwidth),
      sm_count_(device.sm_count),
      expands_kv_(spec.ring_kv == "expanded"),
      permutation_(spec.permutation),
      scores_in_hbm_(spec.scores == "hbm"),
      rates_(std::move(rates)),
      kernel_(spec.name),
      merge_(spec.merge) {
  if (comm) comm_ = *comm;
  dma_ = comm_.ctas.empty();
  scan_ = std::dynamic_pointer_cast<const ChunkScanModel>(rates_);
}

int Implementation::k_bytes() const {
  return scan_ ? scan_->target().k_bytes : 0;
}

Interference Implementation::interference(const std::string& kind, double bandwidth) const {
  Interference f;
  f.link_kind = kind;
  if (dma_) return f;
  const auto it = comm_.ctas.find(kind);
  if (it == comm_.ctas.end()) return f;  // the library does not run on this link
  f.ctas = it->second;
  // The library's CTAs hold their SMs for the whole transfer; the kernel's
  // waves spread over the rest (NCCL: one channel = one CTA on one SM).
  if (sm_count_ > f.ctas && f.ctas > 0)
    f.compute = static_cast<double>(sm_count_) / static_cast<double>(sm_count_ - f.ctas);
  // The copy reads the block sent and writes the block received from HBM at
  // the link's rate, taking that share of the bandwidth from the merge.
  if (hbm_bandwidth_ > 0 && bandwidth > 0) {
    const double share = std::min(0.9, 2 * bandwidth / hbm_bandwidth_);
    f.memory = 1 / (1 - share);
  }
  return f;
}

double Implementation::op_seconds(const StepOp& op, double units) const {
  if (hbm_bandwidth_ <= 0 || units <= 0) return 0;
  return op.bytes * units / hbm_bandwidth_;
}

namespace {

bool applies(const StepOp& op, bool backward) {
  return op.pass == "both" || (op.pass == "bwd") == backward;
}

// The query block the device's kernel sees (what a profile's merge points
// are measured at): the whole sequence for Ulysses, the group block for hybrid.
std::int64_t q_block(const Workload& w) {
  switch (w.layout) {
    case Layout::Ulysses:
      return w.seq_len();
    case Layout::Hybrid:
      return w.block * w.ulysses();
    default:
      return w.block;
  }
}

// The keys a step's scan walks: the gathered sequence for all-gather, else
// the rows it holds (a ring block, Ulysses' whole sequence, hybrid's group).
std::int64_t k_block(const Workload& w) {
  return w.layout == Layout::Allgather ? w.seq_len() : q_block(w);
}

struct Units {
  double call_q_rows = 0, call_kv_rows = 0;
  double query_chunks = 1;  // the outer scan's trip count (1 without a scan)
};

// `kvh`: the KV heads the ring passes (Implementation::ring_kv_heads).
double units_of(const StepOp& op, const Workload& w, const Units& u, double kvh) {
  const double d = w.shape.head_dim;
  const double c = static_cast<double>(w.block), H = w.shape.heads;
  if (op.per == "call_q_elems") return u.call_q_rows * d;
  if (op.per == "call_q_rows") return u.call_q_rows;
  if (op.per == "call_kv_elems") return u.call_kv_rows * d;
  // The keys a step's scan walks, whether its tiles compute or not; once per
  // query chunk where the seed's backward adds each query chunk's dK/dV into
  // the whole block's (docs/models.md, "JAX blockwise scan").
  const double block_kv = static_cast<double>(k_block(w)) * kvh * d;
  if (op.per == "block_kv_elems") return block_kv;
  if (op.per == "block_kv_elems_per_query_chunk") return block_kv * u.query_chunks;
  if (op.per == "all_q_elems") return static_cast<double>(device_query_rows(w)) * d;
  if (op.per == "all_qkv_elems") return c * d * (H + 2 * kvh);
  if (op.per == "sent_kv_elems") return 2.0 * c * kvh * d;
  return 0;
}

Units call_units(const Workload& w, const std::vector<KernelCall>& calls, double kvh) {
  Units u;
  const double kv_per_head = kvh / w.shape.heads;
  for (const auto& c : calls) {
    u.call_q_rows += static_cast<double>(c.q) * static_cast<double>(c.heads);
    u.call_kv_rows += static_cast<double>(c.k) * static_cast<double>(c.heads) * kv_per_head;
  }
  return u;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> Implementation::scan_grid(const Workload& w) const {
  if (!scan_) return {0, 0};
  const auto g = scan_->grid(q_block(w), k_block(w));
  return {g.query_chunks, g.key_chunks};
}

StepCost Implementation::step(const Workload& w, std::int64_t device, std::int64_t step,
                              bool backward, bool sends) const {
  StepCost c;
  const int d = w.shape.head_dim;
  const auto calls = step_calls(w, device, step);
  int kernels = 0;
  // Packed documents: one varlen launch (cu_seqlens) runs every document's
  // calls of the step, timed together; otherwise each call is its own launch.
  const bool varlen = !w.documents.empty();
  if (varlen) c.attention_s = rates_->launch_seconds(calls, d, backward);
  for (const auto& call : calls) {
    if (!varlen) c.attention_s += rates_->call_seconds(call, d, backward);
    constexpr const char* kWhat = "--devices/--block: score entries of one step";
    c.useful_pairs = add_checked(c.useful_pairs, call_pairs(call), kWhat);
    c.executed_pairs =
        add_checked(c.executed_pairs, rates_->executed_pairs(call, d, backward), kWhat);
    if (!varlen || kernels == 0) kernels += backward ? kernels_bwd_ : kernels_fwd_;
  }
  const bool computes = !calls.empty();
  auto u = call_units(w, calls, ring_kv_heads(w));
  if (scan_) u.query_chunks = static_cast<double>(scan_->grid(q_block(w), k_block(w)).query_chunks);
  // A measured merge (profiles with merge points): forward steps after the
  // first, over the device's whole query block.
  if (!backward && step > 0 && computes)
    c.merge_s += rates_->merge_seconds(device_query_rows(w), q_block(w), d);
  const bool partial = computes && u.call_q_rows < static_cast<double>(device_query_rows(w));
  for (const auto& op : ops_) {
    if (!applies(op, backward)) continue;
    bool on = false;
    if (op.when == "first") on = computes && step == 0;
    if (op.when == "after_first") on = computes && step > 0;
    if (op.when == "step") on = computes;
    if (op.when == "every_step") on = true;  // a scan runs whatever the mask
    if (op.when == "partial") on = partial;
    if (op.when == "send") on = sends;
    if (!on) continue;
    c.merge_s += op_seconds(op, units_of(op, w, u, ring_kv_heads(w)));
    kernels += op.kernels;
  }
  if (sends && launch_s_ > 0) kernels += 1;  // the send/receive's own launch
  // Launches are asynchronous: they cost the device time only where the
  // host cannot queue them as fast as the device runs them.
  c.launch_s = std::max(0.0, kernels * launch_s_ - c.attention_s - c.merge_s);
  // A scan runs every chunk pair's iteration whether it computes or not, and
  // a step with nothing to compute still runs its scan (the seed's code).
  if (scan_) {
    c.loop_s = scan_->loop_seconds(q_block(w), k_block(w));
    c.launch_s += c.loop_s;
  }
  return c;
}

double Implementation::reduce(const Workload& w, std::int64_t device, bool backward) const {
  double work = 0;
  int kernels = 0;
  for (const auto& op : ops_) {
    if (!applies(op, backward)) continue;
    if (op.when == "final") {
      work += op_seconds(op, units_of(op, w, {}, ring_kv_heads(w)));
      kernels += op.kernels;
    } else if (op.when == "deferred") {
      for (std::int64_t s = 0; s < num_steps(w); ++s) {
        const auto calls = step_calls(w, device, s);
        if (calls.empty()) continue;
        work += op_seconds(
            op, units_of(op, w, call_units(w, calls, ring_kv_heads(w)), ring_kv_heads(w)));
        kernels += op.kernels;
      }
    }
  }
  return work + std::max(0.0, kernels * launch_s_ - work);
}

namespace {

// One device's attention over S tokens as a tiled kernel runs it, in calls of
// L: k = S / L diagonal calls (causal) and, under a causal mask, k (k - 1) / 2
// full ones below them; without a mask k^2 full ones.
double tiled_seconds(const ComputeModel& rates, std::int64_t S, std::int64_t L, bool causal,
                     std::uint64_t heads, int head_dim, bool backward) {
  const KernelCall full{L, L, CallMask::Full, 0, heads};
  const double k = static_cast<double>(S) / static_cast<double>(L);
  if (!causal) return k * k * rates.call_seconds(full, head_dim, backward);
  const KernelCall diag{L, L, CallMask::Causal, 0, heads};
  return k * rates.call_seconds(diag, head_dim, backward) +
         k * (k - 1) / 2 * rates.call_seconds(full, head_dim, backward);
}

}  // namespace

double Implementation::single_device(const Workload& w, bool backward) const {
  // Past 2^20 tokens every rate is flat (curves and profiles are clamped far
  // below), so calls of at most 2^20 tile longer sequences, whose pairs
  // overflow 64 bits.
  constexpr std::int64_t kRef = std::int64_t{1} << 20;
  const auto S = w.seq_len();
  const auto heads = static_cast<std::uint64_t>(w.shape.heads);
  // The one device runs a sequence of `len` in the tiles it runs fastest:
  // one call of up to 2^20, or calls of the ring's own block (and zigzag's
  // half block), or of any power of two between. A measured curve need not
  // rise with the length (a 64K call may run slower than two of 32K), and a
  // baseline tied to one tiling would let the ring's devices beat it: an
  // efficiency against one device above 1.
  auto fastest = [&](std::int64_t len, bool causal) {
    const auto top = std::min(len, kRef);
    std::vector<std::int64_t> tiles;
    for (std::int64_t p = 256; p < top; p *= 2) tiles.push_back(p);
    for (const auto b : {w.block, w.block / 2})
      if (b >= 1 && b < top) tiles.push_back(b);
    double best = tiled_seconds(*rates_, len, top, causal, heads, w.shape.head_dim, backward);
    for (const auto tile : tiles) {
      try {
        best = std::min(
            best, tiled_seconds(*rates_, len, tile, causal, heads, w.shape.head_dim, backward));
      } catch (const InputError&) {
        // A measured profile refuses lengths below its smallest point: that
        // tiling is not one this device was measured at.
      }
    }
    return best;
  };
  double t = 0;
  if (w.documents.size() <= 1) {
    t = fastest(S, w.causal);
  } else {
    // Packed documents, each causal in itself. Documents of one length are
    // one call of their heads summed (merge_shapes: the same launch cost), so
    // a million one-token documents are timed as one call, not a million:
    // up to 2^20 tokens in all, one varlen launch over every document; past
    // it, each length's call (a document past 2^20 tiled as a sequence).
    std::map<std::int64_t, std::uint64_t> count;  // length -> documents of it
    for (const auto len : w.documents) ++count[len];
    std::vector<KernelCall> docs;
    for (const auto& [len, n] : count)
      if (len <= kRef)
        docs.push_back({len, len, CallMask::Causal, 0, mul_checked(n, heads, "heads")});
    if (S <= kRef) {
      t = rates_->launch_seconds(docs, w.shape.head_dim, backward);
    } else {
      for (const auto& call : docs) t += rates_->call_seconds(call, w.shape.head_dim, backward);
      for (const auto& [len, n] : count)
        if (len > kRef) t += static_cast<double>(n) * fastest(len, true);
    }
  }
  if (scan_) t += scan_->loop_seconds(S, S) - scan_->target().step_s;
  return std::max(t, (backward ? kernels_bwd_ : kernels_fwd_) * launch_s_);
}

Implementation bare_implementation(const ComputeModel& cm) {
  return Implementation(std::shared_ptr<const ComputeModel>(&cm, [](const ComputeModel*) {}));
}

PhaseEnds overlap_phase_ends(const StepCost& c, const Interference& f, double window) {
  const double work[3] = {c.launch_s, c.attention_s, c.merge_s};
  const double slow[3] = {1.0, f.compute, f.memory};
  double ends[3] = {0, 0, 0};
  double t = 0;
  for (int i = 0; i < 3; ++i) {
    const double w = work[i];
    if (w > 0) {
      if (t >= window) {
        t += w;
      } else if (t + w * slow[i] <= window) {
        t += w * slow[i];
      } else {
        // Slowed until the window closes, full speed for the rest.
        const double done = (window - t) / slow[i];
        t = window + (w - done);
      }
    }
    ends[i] = t;
  }
  return {ends[0], ends[1], ends[2]};
}

double overlap_phases(const StepCost& c, const Interference& f, double window) {
  return overlap_phase_ends(c, f, window).merge;
}

namespace embedded {
const char* profile_text(const std::string& name);
}

std::shared_ptr<const Implementation> make_implementation(const Catalog& cat, const Hardware& hw,
                                                          DType dtype,
                                                          const ImplementationChoice& choice) {
  const auto& dev = cat.device(hw.gpu_name);
  std::string name = choice.kernel;
  if (name.empty()) {
    if (const auto* pm = dynamic_cast<const ProfileModel*>(choice.profile.get()))
      name = pm->profile().device_kind == "cuda" ? "ringsim-cuda" : "ringsim-cpu";
    else if (choice.profile)
      name = "ringsim-cpu";
    else if (choice.roofline_overrides)
      name = "roofline";
    else
      name = dev.default_kernel;
    // The device's default kernel may not run this dtype (fp32 attention):
    // then the roofline at the catalog's efficiency, as before kernels existed.
    const auto& dflt = cat.kernel(name);
    if (!dflt.dtypes.empty() &&
        std::find(dflt.dtypes.begin(), dflt.dtypes.end(), to_string(dtype)) == dflt.dtypes.end())
      name = "roofline";
  }
  const auto& spec = cat.kernel(name);
  if (!spec.dtypes.empty() &&
      std::find(spec.dtypes.begin(), spec.dtypes.end(), to_string(dtype)) == spec.dtypes.end())
    throw InputError(fmt::format(
        "--kernel {}: runs {}, not {}; pass --dtype with one of those, or --kernel roofline",
        spec.name, join(spec.dtypes, ", "), to_string(dtype)));
  std::shared_ptr<const ComputeModel> rates;
  if ((choice.query_chunk > 0 || choice.key_chunk > 0) && spec.rates != "chunk_scan")
    throw InputError(fmt::format(
        "--query-chunk-size/--key-chunk-size: chunk the JAX blockwise scan of --kernel "
        "ringattention-jax; {} has fixed tiles (drop them or pass --kernel ringattention-jax)",
        spec.name));
  if (spec.rates == "chunk_scan") {
    if (choice.profile)
      throw InputError(fmt::format("--profile: times ringsim's own kernels, not {}", spec.name));
    const auto it = spec.chunk_scan.targets.find(dev.kind);
    if (it == spec.chunk_scan.targets.end())
      throw InputError(fmt::format("--kernel {}: not modelled on a {} ({}); it runs on {}",
                                   spec.name, dev.kind, dev.name,
                                   spec.chunk_scan.targets.count("gpu") ? "GPUs" : "TPUs"));
    const auto qc = choice.query_chunk > 0 ? choice.query_chunk : spec.chunk_scan.query_chunk;
    const auto kc = choice.key_chunk > 0 ? choice.key_chunk : spec.chunk_scan.key_chunk;
    rates = std::make_shared<ChunkScanModel>(spec.name, it->second, qc, kc, hw);
  } else if (spec.rates == "roofline") {
    if (choice.profile)
      throw InputError("--profile: times ringsim's own kernels; drop --kernel roofline");
    rates = std::make_shared<RooflineModel>(hw.effective_flops());
  } else if (spec.rates == "curves") {
    if (choice.profile)
      throw InputError(fmt::format(
          "--profile: times ringsim's own kernels, not {}; pass --kernel ringsim-cpu or "
          "ringsim-cuda, or drop --profile",
          spec.name));
    const KernelSpec* from =
        spec.curves_from_kernel.empty() ? nullptr : &cat.kernel(spec.curves_from_kernel);
    // Published curves are bursts at the boost clock; a saturated device runs
    // them at its settled clock (Hardware::attention_throttle).
    const double prior = hw.effective_flops() * hw.attention_throttle;
    const double clock = hw.clock_scale * hw.attention_throttle;
    KernelCurves curves(spec, from, dev.name, prior, clock);
    // A device on another's compute die (same_compute_as) shares its curves.
    if (!curves.published() && !dev.same_compute_as.empty())
      curves = KernelCurves(spec, from, dev.same_compute_as, prior, clock);
    rates = std::make_shared<KernelModel>(spec, std::move(curves), dev.sm_count, dev.name);
  } else if (choice.profile) {
    rates = choice.profile;
  } else if (!spec.profile.empty()) {
    const char* text = embedded::profile_text(spec.profile);
    if (!text)
      throw InputError(
          fmt::format("--kernel {}: its profile '{}' is not built in", spec.name, spec.profile));
    rates =
        std::make_shared<ProfileModel>(parse_profile(text, spec.profile), to_string(dtype),
                                       "--kernel " + spec.name + " (profile " + spec.profile + ")");
  } else {
    throw InputError(fmt::format(
        "--kernel {}: no profile of it ships with ringsim (none was measured on such a device); "
        "measure one with 'ringsim profile' and pass --profile FILE",
        spec.name));
  }
  const CommLibrary* comm = &cat.comm_library(spec.comm_library);
  auto d = dev;
  d.hbm_bandwidth = hw.hbm_bandwidth;
  return std::make_shared<Implementation>(spec, std::move(rates), d, comm);
}

}  // namespace ringsim
