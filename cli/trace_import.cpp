#include "cli/trace_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "models/core/atomic_file.hpp"
#include "models/core/calls.hpp"
#include "models/core/errors.hpp"
#include "models/core/kineto_trace.hpp"
#include "models/core/parse.hpp"
#include "models/core/profile.hpp"
#include "models/core/schema.hpp"
#include "models/core/trace_profile.hpp"
#include "models/core/workload.hpp"
#include "models/kernel/implementation.hpp"
#include "proc/resolve.hpp"

namespace ringsim::cli {
namespace {

constexpr const char* kFlag = "--from-trace";

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The catalog device a trace's GPU is, from the name CUDA reports
// (cudaDeviceProp.name) and its memory; "" when none fits. PCIe and NVL
// parts have other peaks than the SXM parts the catalog holds.
std::string guess_device(const KinetoTrace& t) {
  const auto n = upper(t.device_name);
  if (n.find("PCIE") != std::string::npos || n.find("NVL") != std::string::npos) return "";
  const double gib = static_cast<double>(t.device_memory) / (1u << 30);
  if (n.find("GB200") != std::string::npos) return "gb200";
  if (n.find("B200") != std::string::npos) return "b200";
  if (n.find("H200") != std::string::npos) return "h200";
  if (n.find("H800") != std::string::npos) return "h800";
  if (n.find("H100") != std::string::npos) return gib > 85 ? "h100-sxm-96gb" : "h100-sxm";
  if (n.find("A100") != std::string::npos) return gib > 45 ? "a100-80gb" : "a100-40gb";
  if (n.find("MI300X") != std::string::npos) return "mi300x";
  return "";
}

std::map<std::string, double> peaks(const Catalog& cat, const std::string& device) {
  if (device.empty()) return {};
  const auto& d = cat.device(device);
  return {{"bf16", d.peak_bf16}, {"fp16", d.peak_fp16}, {"fp32", d.peak_fp32}, {"fp8", d.peak_fp8}};
}

// The catalog's kernel a trace's attention kernel is, by its name: the
// flash-attn 2 kernels (also PyTorch's copy, pytorch_flash::), flash-attn 3's
// Hopper kernels, cuDNN's SDPA graphs; "" for others (xFormers' cutlass fmha).
std::string catalog_kernel(const std::string& name) {
  const auto n = upper(name);
  if (n.find("SM90") != std::string::npos && n.find("FLASH") != std::string::npos) return "fa3";
  if (n.find("FLASH_FWD") != std::string::npos || n.find("FLASH_BWD") != std::string::npos)
    return "fa2";
  if (n.find("CUDNN") != std::string::npos || n.find("SDPA") != std::string::npos) return "cudnn";
  return "";
}

// What ringsim's own model of that kernel on that device gives for the
// point's call (its device work, no launch): the measured-over-model ratio
// says how far the catalog's curves are from this GPU at this shape.
struct ModelCheck {
  std::string kernel;
  double seconds = 0;
};

std::optional<ModelCheck> model_check(const Catalog& cat, const std::string& device,
                                      const std::string& catalog_file, const TracePoint& p) {
  const auto kernel = catalog_kernel(p.kernel);
  if (device.empty() || kernel.empty()) return {};
  try {
    proc::HardwareFlags flags;
    flags.gpu = device;
    flags.kernel = kernel;
    flags.catalog = catalog_file;
    const auto hs = proc::parse_hardware(flags);
    const auto dtype = parse_dtype("--dtype", p.point.dtype);
    const auto hw = proc::resolve_hardware(hs, cat, dtype);
    const auto im = proc::make_implementation(hs, cat, hw, dtype);
    KernelCall call;
    call.q = call.k = p.point.block;
    call.mask = p.point.mask == "full" ? CallMask::Full : CallMask::Causal;
    call.heads = static_cast<std::uint64_t>(p.heads);
    return ModelCheck{
        kernel, im->rates().launch_seconds({call}, p.point.head_dim, p.point.kernel == "bwd")};
  } catch (const InputError&) {
    return {};  // the kernel does not run this dtype or device: no comparison
  }
}

std::string file_name(const std::string& path) {
  return one_line(std::filesystem::path(path).filename().string());
}

struct Found {
  KinetoTrace trace;
  TraceCalls calls;
  TraceProfile profile;
  std::string device;
  std::map<std::string, double> peak;
  std::vector<std::optional<ModelCheck>> checks;  // per profile point
  nlohmann::json doc;
};

double share(double part, double whole) {
  return whole > 0 ? 100 * part / whole : 0;
}

void print_attention(const Found& f) {
  double seconds = 0;
  for (const auto& c : f.calls.attention) seconds += c.seconds;
  std::cout << fmt::format("Attention: {} calls, {:.3f} ms ({:.1f}% of kernel time)\n",
                           f.calls.attention.size(), seconds * 1e3,
                           share(seconds, f.calls.kernel_seconds));
  for (std::size_t i = 0; i < f.profile.points.size(); ++i) {
    const auto& p = f.profile.points[i];
    const auto& q = p.point;
    const double rate = flops_per_entry(q.head_dim, q.kernel == "bwd") *
                        static_cast<double>(q.entries) / q.median_s;
    std::cout << fmt::format(
        "  {} {} d {} length {} {}: {} calls of {} heads (batch x heads), median {:.1f} us "
        "(min {:.1f}, max {:.1f}), {:.1f} TFLOP/s{}; {}\n",
        q.kernel, q.dtype, q.head_dim, q.block, q.mask == "full" ? "full" : "causal", q.repeats,
        p.heads, q.median_s * 1e6, q.min_s * 1e6, q.max_s * 1e6, rate / 1e12,
        p.overlapped ? fmt::format(" ({} overlapped another stream)", p.overlapped) : "", p.kernel);
    if (const auto& c = f.checks[i])
      std::cout << fmt::format(
          "    ringsim's {} model on the {}: {:.1f} us (measured / model {:.2f})\n", c->kernel,
          f.device, c->seconds * 1e6, q.median_s / c->seconds);
  }
  for (const auto& [why, u] : f.profile.left_out)
    std::cout << fmt::format("  kept out of the profile: {} calls, {:.3f} ms: {}\n", u.count,
                             u.seconds * 1e3, why);
}

void print_gemm_and_comms(const Found& f, const Catalog& cat) {
  for (const auto& [dtype, g] : f.profile.gemm_by_dtype) {
    std::string against;
    const auto it = f.peak.find(dtype);
    if (it != f.peak.end() && it->second > 0)
      against = fmt::format(" = {:.1f}% of the {}'s {:.0f} TFLOP/s peak",
                            100 * g.rate() / it->second, f.device, it->second / 1e12);
    // The catalog's GEMM efficiency is a large bf16/fp16 matmul's.
    if (!against.empty() && (dtype == "bf16" || dtype == "fp16"))
      against += fmt::format(" (the catalog assumes {:.1f}% for a large GEMM)",
                             100 * cat.device(f.device).gemm_efficiency);
    std::cout << fmt::format("GEMM {}: {} calls, {:.3f} ms, {:.1f} TFLOP/s over their time{}\n",
                             dtype, g.calls, g.seconds * 1e3, g.rate() / 1e12, against);
  }
  if (f.profile.gemm_by_dtype.empty()) std::cout << "GEMM: none with shapes\n";
  for (const auto& c : f.calls.collectives)
    std::cout << fmt::format("NCCL {} of {} over {} ranks: {:.1f} us, busbw {:.2f} GB/s; {}\n",
                             to_string(c.kind), human_bytes(c.bytes), c.ranks, c.seconds * 1e6,
                             c.busbw() / 1e9, c.kernel);
}

void print_unattributed(const Found& f) {
  for (const auto& [why, by_name] : f.calls.unattributed) {
    std::size_t count = 0;
    double seconds = 0;
    std::vector<std::pair<std::string, Unattributed>> top(by_name.begin(), by_name.end());
    for (const auto& [n, u] : top) count += u.count, seconds += u.seconds;
    std::stable_sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
      return a.second.seconds > b.second.seconds;
    });
    std::string names;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, top.size()); ++i)
      names += fmt::format("{}{} ({}, {:.3f} ms)", i ? ", " : "", top[i].first, top[i].second.count,
                           top[i].second.seconds * 1e3);
    std::cout << fmt::format("Not attributed: {} kernels, {:.3f} ms ({:.1f}%): {}; most time: {}\n",
                             count, seconds * 1e3, share(seconds, f.calls.kernel_seconds), why,
                             names);
  }
}

void print_report(const Found& f, const TraceImportFlags& flags, const Catalog& cat) {
  std::cout << fmt::format(
      "Read {}: {} ({}{}), {} kernels, {:.3f} ms of kernel time\n", one_line(flags.trace),
      f.trace.device_name.empty() ? "GPU not named in the trace" : f.trace.device_name,
      f.trace.sm_count ? fmt::format("{} SMs; ", f.trace.sm_count) : "",
      f.device.empty() ? "no catalog device: pass --gpu NAME for GEMM peaks"
                       : fmt::format("catalog device {}", f.device),
      f.calls.kernels, f.calls.kernel_seconds * 1e3);
  if (!f.trace.record_shapes)
    std::cout << "The trace says record_shapes is off: shapes come only where an event has them\n";
  print_attention(f);
  print_gemm_and_comms(f, cat);
  print_unattributed(f);
}

nlohmann::json unattributed_json(const TraceCalls& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [why, by_name] : c.unattributed) {
    nlohmann::json names = nlohmann::json::array();
    std::size_t count = 0;
    double seconds = 0;
    for (const auto& [n, u] : by_name) {
      names.push_back({{"name", n}, {"count", u.count}, {"seconds", u.seconds}});
      count += u.count, seconds += u.seconds;
    }
    out.push_back({{"reason", why}, {"count", count}, {"seconds", seconds}, {"names", names}});
  }
  return out;
}

// The profile's points, each with ringsim's model of the same call
// (model_kernel, model_s; null where the kernel or device has none).
nlohmann::json points_with_checks(const Found& f) {
  auto points = f.doc["points"];
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& c = f.checks[i];
    points[i]["model_kernel"] = c ? nlohmann::json(c->kernel) : nlohmann::json();
    points[i]["model_s"] = c ? nlohmann::json(c->seconds) : nlohmann::json();
  }
  return points;
}

void print_json(const Found& f, const TraceImportFlags& flags, bool wrote) {
  nlohmann::json left = nlohmann::json::array();
  for (const auto& [why, u] : f.profile.left_out)
    left.push_back({{"reason", why}, {"count", u.count}, {"seconds", u.seconds}});
  std::cout << nlohmann::json{{"command", "profile"},
                              {"from_trace", flags.trace},
                              {"out", wrote ? nlohmann::json(flags.out) : nlohmann::json()},
                              {"device", f.doc["device"]["name"]},
                              {"catalog_device",
                               f.device.empty() ? nlohmann::json() : nlohmann::json(f.device)},
                              {"kernels", f.calls.kernels},
                              {"kernel_seconds", f.calls.kernel_seconds},
                              {"attention_calls", f.calls.attention.size()},
                              {"points", points_with_checks(f)},
                              {"left_out", left},
                              {"gemm", f.doc["gemm"]},
                              {"collectives", f.doc["collectives"]},
                              {"unattributed", unattributed_json(f.calls)},
                              {"schema_version", kJsonSchemaVersion}}
                   .dump(2)
            << "\n";
}

}  // namespace

int import_trace(const TraceImportFlags& flags) {
  // Without --out: the report alone (what the trace holds), nothing written.
  if (!flags.out.empty()) check_outputs({{"--out", flags.out}}, {{kFlag, flags.trace}});
  proc::HardwareFlags hw;
  hw.catalog = flags.catalog;
  const auto cat = proc::load_catalog(proc::parse_hardware(hw));
  Found f;
  const std::string where = fmt::format("{} {}", kFlag, one_line(flags.trace));
  f.trace = parse_kineto_trace(read_trace_text(flags.trace, kFlag), where);
  f.calls = trace_calls(f.trace);
  f.profile = trace_profile(f.calls);
  f.device = flags.gpu.empty() ? guess_device(f.trace) : cat.device(flags.gpu).name;
  f.peak = peaks(cat, f.device);
  for (const auto& p : f.profile.points)
    f.checks.push_back(model_check(cat, f.device, flags.catalog, p));
  f.doc = trace_profile_json(f.trace, f.calls, f.profile, file_name(flags.trace), f.device, f.peak);
  f.doc["tool_version"] = "ringsim " RINGSIM_VERSION;
  if (flags.out.empty()) {
    if (flags.json)
      print_json(f, flags, false);
    else
      print_report(f, flags, cat);
    return 0;
  }
  if (f.profile.points.empty())
    throw InputError(fmt::format(
        "{}: no attention call to profile ({} kernels, {} attention calls; without --out "
        "ringsim reports what the trace holds); record it with torch.profiler(record_shapes=True) "
        "around steps that run FlashAttention, cuDNN or memory-efficient SDPA",
        where, f.calls.kernels, f.calls.attention.size()));
  // What we write must be what the simulator accepts.
  const auto text = f.doc.dump(1);
  (void)parse_profile(text, where);
  AtomicFile out(flags.out, "--out");
  out.write(text);
  out.write("\n");
  out.commit();
  if (flags.json) {
    print_json(f, flags, true);
    return 0;
  }
  print_report(f, flags, cat);
  const auto& p = f.profile.points.front().point;
  std::cout << fmt::format(
      "Wrote {} ({} point{}). Use it with:\n  ringsim run --profile {} --dtype {} --head-dim {} "
      "{}...\n",
      one_line(flags.out), f.profile.points.size(), f.profile.points.size() == 1 ? "" : "s",
      one_line(flags.out), p.dtype, p.head_dim, f.device.empty() ? "" : "--gpu " + f.device + " ");
  return 0;
}

}  // namespace ringsim::cli
