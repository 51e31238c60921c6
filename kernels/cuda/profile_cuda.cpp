#include "kernels/cuda/profile_cuda.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/timing.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"
#include "models/core/schema.hpp"

namespace ringsim::kernels::cuda {
namespace {

// Bumped whenever a kernel change can move the timings. -2: the calls the ring
// makes (fp32 partial output, the LSE merge), L2 flushed before each repeat.
constexpr const char* kKernelVersion = "ringsim-cuda-fa2-mma.sync-2";

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string cuda_profile_json(const CudaProfileOptions& opt_in, const ProfileProgress& progress) {
  CudaProfileOptions opt = opt_in;
  if (opt.blocks.empty())
    for (std::int64_t b = 128; b <= (opt.quick ? 4096 : 16384); b *= 2) opt.blocks.push_back(b);
  if (opt.dtypes.empty())
    opt.dtypes =
        opt.quick ? std::vector<std::string>{"bf16"} : std::vector<std::string>{"bf16", "fp16"};
  if (opt.quick) {
    opt.warmup = std::min(opt.warmup, 1);
    opt.repeats = std::min(opt.repeats, 5);
  }
  for (const auto& d : opt.dtypes)
    if (d != "bf16" && d != "fp16")
      throw InputError("--dtype: CUDA profiles bf16 or fp16, got " + d);
  if (opt.heads < 1 || opt.repeats < 1) throw InputError("cuda profile: heads and repeats >= 1");

  std::string why;
  if (device_count(&why) == 0) throw CudaError("cuda profile: no usable GPU (" + why + ")");
  const DeviceInfo info = device_info();

  std::vector<CudaProfilePoint> points;
  std::int64_t max_block = 0;
  for (auto b : opt.blocks) max_block = std::max(max_block, b);
  const int max_d = 128;
  const std::size_t elems = static_cast<std::size_t>(max_block) * opt.heads * max_d;
  DeviceBuffer q(elems * 2), k(elems * 2), v(elems * 2), o(elems * 2), d_o(elems * 2);
  DeviceBuffer lse(static_cast<std::size_t>(max_block) * opt.heads * 4), delta(lse.bytes());
  DeviceBuffer dq(elems * 4), dk(elems * 4), dv(elems * 4);
  // The ring's partial output is fp32 (ring_emulator.cu); the merge folds it
  // into an fp32 accumulator (acc_o, acc_lse).
  DeviceBuffer o32(elems * 4), acc_o(elems * 4), acc_lse(lse.bytes());
  DeviceBuffer scratch(2 * l2_bytes() + (1 << 20));
  const auto flush = [&] { flush_l2(scratch); };

  // Per dtype, head dim and block: fwd (and bwd) per mask, and one merge.
  const double total_points =
      static_cast<double>(opt.dtypes.size() * opt.head_dims.size() * opt.blocks.size() *
                          (2 * (opt.backward ? 2 : 1) + 1));
  for (const auto& dts : opt.dtypes) {
    const DType t = dts == "bf16" ? DType::BF16 : DType::FP16;
    const bool bf16 = t == DType::BF16;
    fill_random(q, elems, bf16, 1);
    fill_random(k, elems, bf16, 2);
    fill_random(v, elems, bf16, 3);
    fill_random(d_o, elems, bf16, 4);
    for (int d : opt.head_dims) {
      if (d != 64 && d != 128) throw InputError("--head-dims: CUDA kernels take 64 or 128");
      for (bool causal : {false, true})
        for (auto block : opt.blocks) {
          const std::uint64_t per_head = causal
                                             ? static_cast<std::uint64_t>(block) * (block + 1) / 2
                                             : static_cast<std::uint64_t>(block) * block;
          FwdParams fp;
          fp.q = q.as<std::uint16_t>();
          fp.k = k.as<std::uint16_t>();
          fp.v = v.as<std::uint16_t>();
          fp.o = nullptr;
          fp.o_f32 = o32.as<float>();
          fp.lse = lse.as<float>();
          fp.seq_q = fp.seq_k = block;
          fp.heads = fp.kv_heads = opt.heads;
          fp.causal = causal;
          auto add = [&](const char* kernel, const TimeStats& st) {
            points.push_back({kernel, dts, causal ? "causal_diagonal" : "full", d, opt.heads, block,
                              per_head * static_cast<std::uint64_t>(opt.heads), st});
            if (progress) {
              const double flops = 4.0 * d * static_cast<double>(per_head) * opt.heads *
                                   (kernel[0] == 'b' ? 2.5 : 1.0);
              progress(std::string(kernel) + " " + dts + " d=" + std::to_string(d) +
                           " block=" + std::to_string(block) + (causal ? " causal" : " full") +
                           ": " + std::to_string(st.median_s * 1e3) + " ms, " +
                           std::to_string(flops / st.median_s * 1e-12) + " TFLOP/s",
                       total_points > 0 ? static_cast<double>(points.size()) / total_points : 1.0);
            }
          };
          add("fwd", time_on_device([&] { flash_forward(t, d, fp); }, opt.warmup, opt.repeats,
                                    nullptr, flush));
          if (!causal) {
            // The merge after a ring step: block x heads rows of d floats.
            const std::int64_t rows = block * opt.heads;
            const auto st = time_on_device(
                [&] {
                  lse_merge(acc_o.as<float>(), acc_lse.as<float>(), o32.as<float>(),
                            lse.as<float>(), rows, d);
                },
                opt.warmup, opt.repeats, nullptr, flush);
            points.push_back(
                {"merge", dts, "full", d, opt.heads, block, static_cast<std::uint64_t>(rows), st});
          }
          if (!opt.backward) continue;
          // The backward reads the forward's output in storage precision.
          FwdParams fo = fp;
          fo.o = o.as<std::uint16_t>();
          fo.o_f32 = nullptr;
          flash_forward(t, d, fo);  // untimed: o and lse are this forward's
          const BwdParams bp = backward_of(fo, d_o.as<std::uint16_t>(), dq.as<float>(),
                                           dk.as<float>(), dv.as<float>());
          // The gradients accumulate into dq/dk/dv; their values do not matter here.
          add("bwd", time_on_device([&] { flash_backward(t, d, bp, delta.as<float>()); },
                                    opt.warmup, opt.repeats, nullptr, flush));
        }
    }
  }
  return cuda_profile_document(info, points, utc_now());
}

std::string cuda_profile_document(const DeviceInfo& info,
                                  const std::vector<CudaProfilePoint>& points,
                                  const std::string& date) {
  auto version = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  };
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : points)
    pts.push_back(
        profile_point_json({p.kernel, p.dtype, p.head_dim, p.block, p.mask, p.time.median_s,
                            p.time.min_s, p.time.max_s, p.time.repeats, p.entries},
                           p.heads));
  nlohmann::json j = {
      {"schema", "ringsim-profile-1"},
      {"device",
       {{"kind", "cuda"},
        {"name", info.name},
        {"driver", version(info.driver)},
        {"runtime", version(info.runtime)},
        {"compute_capability", std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor)},
        {"multiprocessors", info.sm_count},
        {"memory_gib", info.mem_gib}}},
      {"date", date},
      {"kernel_version", kKernelVersion},
      {"method",
       "CUDA events around each call after warm-up, L2 flushed before each repeat; median of "
       "repeats; inputs uniform unit-variance random; one call = block x block x heads, "
       "positions 0..block-1; forward writes the fp32 partial output the ring merges; merge = "
       "lse_merge of block x heads rows"},
      {"points", pts},
      {"schema_version", kJsonSchemaVersion}};
  return j.dump(1);
}

}  // namespace ringsim::kernels::cuda
