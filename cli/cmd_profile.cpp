// `ringsim profile`: times the blockwise kernels over block sizes and writes a
// profile (models/profiles/README.md) that `ringsim ... --profile FILE` reads.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.hpp"
#include "cli/stop_scope.hpp"
#include "cli/trace_import.hpp"
#include "kernels/profile_run.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/parse.hpp"
#include "models/core/profile.hpp"
#include "models/core/schema.hpp"
#include "sim/progress.hpp"
#ifdef RINGSIM_HAVE_CUDA
#include "kernels/cuda/profile_cuda.hpp"
#endif

namespace ringsim::cli {
namespace {

struct ProfileFlags {
  std::string device = "cpu", out, blocks, head_dims, dtypes, repeats, threads = "1";
  bool quick = false, json = false, no_backward = false;
  TraceImportFlags trace;  // --from-trace: read a profiler trace instead of timing
};

// A comma-separated list; an empty item (`16,,32`, a trailing comma) is refused.
std::vector<std::string> split(const std::string& flag, const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  while (true) {
    const auto comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (out.back().empty())
      throw InputError(
          fmt::format("{}: empty item in the list '{}'; separate values by single "
                      "commas, with none at either end",
                      flag, s));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// The timing flags mean nothing to a trace's import, and the import's flags
// nothing to timing: either mix is refused by name.
void check_mode(const ProfileFlags& f, const CLI::App& app) {
  const bool from_trace = !f.trace.trace.empty();
  for (const char* flag : {"--device", "--blocks", "--head-dims", "--dtypes", "--repeats",
                           "--threads", "--quick", "--no-backward"})
    if (from_trace && app.count(flag))
      throw InputError(
          fmt::format("{}: times ringsim's kernels; --from-trace reads a trace "
                      "instead (drop one of them)",
                      flag));
  for (const char* flag : {"--gpu", "--catalog"})
    if (!from_trace && app.count(flag))
      throw InputError(fmt::format("{}: only with --from-trace TRACE", flag));
}

int run(const ProfileFlags& f) {
  if (!f.trace.trace.empty()) {
    auto t = f.trace;
    t.out = f.out;
    t.json = f.json;
    return import_trace(t);
  }
  const auto device = parse_choice("--device", f.device, {"cpu", "cuda"});
  if (f.out.empty())
    throw InputError("--out: give the profile file to write, e.g. --out models/profiles/mine.json");
  std::vector<std::int64_t> blocks;
  for (const auto& b : split("--blocks", f.blocks))
    blocks.push_back(parse_count("--blocks", b, 1, 1 << 16));
  std::vector<int> dims;
  for (const auto& d : split("--head-dims", f.head_dims))
    dims.push_back(static_cast<int>(parse_count("--head-dims", d, 1, 1024)));
  const int repeats =
      f.repeats.empty() ? 0 : static_cast<int>(parse_count("--repeats", f.repeats, 1, 1000));
  const int threads = static_cast<int>(parse_count("--threads", f.threads, 1, 1024));
  if (device != "cpu" && threads != 1)
    throw InputError("--threads: applies to --device cpu only (a GPU call uses the whole device)");
  // Judge the output path before minutes of timing, without touching it.
  check_outputs({{"--out", f.out}});
  const StopScope stop;  // Ctrl-C ends the timing at the next point: exit 130, no file
  const auto t0 = std::chrono::steady_clock::now();
  // One log line per point, led by the work done and the time left at the
  // rate so far (a log, not a redrawn bar, so it reads the same piped).
  auto progress = [&f, t0](const std::string& line, double done) {
    if (f.json) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto permille =
        static_cast<std::uint64_t>(std::lround(std::clamp(done, 0.0, 1.0) * 1000));
    std::cerr << fmt::format("profile: [{:3.0f}% ETA {}] {}\n", 100 * done,
                             sim::duration_text(sim::eta_seconds(permille, 1000, elapsed)), line);
  };
  std::string doc;
  if (device == "cpu") {
    kernels::CpuProfileOptions o;
    o.quick = f.quick;
    o.blocks = blocks;
    if (!dims.empty()) o.head_dims = dims;
    if (!f.dtypes.empty()) o.dtypes = split("--dtypes", f.dtypes);
    if (repeats) o.repeats = repeats;
    o.backward = !f.no_backward;
    o.threads = threads;
    o.tool_version = RINGSIM_VERSION;
    doc = kernels::cpu_profile_json(o, progress);
  } else {
    std::string why;
    if (!kernels::cuda_profile_available(&why)) throw InputError("--device cuda: " + why);
#ifdef RINGSIM_HAVE_CUDA
    kernels::cuda::CudaProfileOptions o;
    o.quick = f.quick;
    o.blocks = blocks;
    if (!dims.empty()) o.head_dims = dims;
    if (!f.dtypes.empty()) o.dtypes = split("--dtypes", f.dtypes);
    if (repeats) o.repeats = repeats;
    o.backward = !f.no_backward;
    doc = kernels::cuda::cuda_profile_json(o, progress);
#endif
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // What we write must be what the simulator accepts.
  const auto prof = parse_profile(doc, "profile");
  AtomicFile out(f.out, "--out");
  out.write(doc);
  out.write("\n");
  out.commit();
  if (f.json) {
    std::cout << nlohmann::json{{"command", "profile"},
                                {"device", prof.device_kind},
                                {"name", prof.device_name},
                                {"out", f.out},
                                {"points", prof.points.size()},
                                {"seconds", seconds},
                                {"kernel_version", prof.kernel_version},
                                {"schema_version", kJsonSchemaVersion}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << fmt::format("Wrote {} ({} points, {} {}, kernel {}) in {:.1f} s\n", f.out,
                             prof.points.size(), prof.device_kind, prof.device_name,
                             prof.kernel_version, seconds);
    std::cout << fmt::format("Use it with: ringsim --profile {} --dtype {} ...\n", f.out,
                             device == "cpu" ? "fp32" : "bf16");
  }
  return 0;
}

}  // namespace

Command profile_command() {
  return {
      "profile", [](CLI::App& app, int* code) {
        auto f = std::make_shared<ProfileFlags>();
        auto* sub = app.add_subcommand(
            "profile", "Time the blockwise kernels over block sizes; write a profile JSON");
        sub->add_option("--device", f->device, "cpu|cuda")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_option("--out", f->out,
                        "Profile file to write (schema: models/profiles/README.md); with "
                        "--from-trace optional (without it: the report alone)")
            ->type_name(flag_type::kFile);
        sub->add_flag("--quick", f->quick, "Fewer sizes and repeats (CPU: under a minute)");
        sub->add_option("--blocks", f->blocks,
                        "Comma-separated block sizes (default 128,256,...,16384; quick: to 2048)")
            ->type_name(flag_type::kList);
        sub->add_option("--head-dims", f->head_dims, "Comma-separated head dims (default 64,128)")
            ->type_name(flag_type::kList);
        sub->add_option("--dtypes", f->dtypes, "Comma-separated: cpu fp32,fp64; cuda bf16,fp16")
            ->type_name(flag_type::kList);
        sub->add_option("--threads", f->threads,
                        "Threads per CPU kernel call, 1-1024 (timed by the wall clock above 1)")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        sub->add_option("--repeats", f->repeats,
                        "Timed calls per point after warm-up (default 5; quick 3)")
            ->type_name(flag_type::kInt);
        sub->add_flag("--no-backward", f->no_backward, "Forward kernel only");
        sub->add_flag("--json", f->json, "Print one JSON object (and no progress lines)");
        sub->add_option("--from-trace", f->trace.trace,
                        "Read a torch.profiler trace (JSON or .json.gz, record_shapes=True) "
                        "instead of timing: its attention calls become the profile "
                        "(docs/own-cluster.md)")
            ->type_name(flag_type::kFile);
        sub->add_option("--gpu", f->trace.gpu,
                        "With --from-trace: the catalog device the trace ran on (default: "
                        "from the GPU name in the trace), for the GEMM rates' share of peak")
            ->type_name(flag_type::kName);
        sub->add_option("--catalog", f->trace.catalog,
                        "With --from-trace: extra catalog JSON (for --gpu)")
            ->type_name(flag_type::kFile);
        sub->callback([f, code, sub] {
          check_mode(*f, *sub);
          *code = run(*f);
        });
        return sub;
      }};
}

}  // namespace ringsim::cli
