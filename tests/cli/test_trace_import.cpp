// Kernels from a PyTorch profiler trace (`ringsim profile --from-trace`,
// docs/own-cluster.md): the reader on real published traces
// (tests/data/traces/SOURCES.md) and on hostile ones, the attribution checked
// against the raw events by another path, and the profile it writes driving
// `run`'s compute times.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/kineto_trace.hpp"
#include "models/core/profile.hpp"
#include "models/core/trace_profile.hpp"
#include "proc/child.hpp"
#include "tests/run_cli.hpp"

namespace ringsim {
namespace {

namespace fs = std::filesystem;
const std::string kDir = RINGSIM_TRACES_DATA;

KinetoTrace load(const std::string& name) {
  return parse_kineto_trace(read_trace_text(kDir + "/" + name, "--from-trace"), name);
}

// The raw events by name alone (no launches, no operators): what the
// attribution must agree with where the kernel's name says what it is.
double kernel_seconds_named(const KinetoTrace& t, const std::string& part) {
  double s = 0;
  for (const auto& k : t.kernels)
    if (k.name.find(part) != std::string::npos) s += k.dur * 1e-6;
  return s;
}

std::string refusal_of(const std::string& text) {
  try {
    parse_kineto_trace(text, "--from-trace t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

fs::path temp_dir() {
  auto d = fs::temp_directory_path() / ("ringsim-trace-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

TEST(KinetoTrace, QwenOnH100CausalFlashCalls) {
  const auto t = load("h100-qwen1.5-0.5b-chat.json.gz");
  EXPECT_EQ(t.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.sm_count, 132);
  EXPECT_TRUE(t.record_shapes);
  const auto calls = trace_calls(t);
  // Qwen1.5-0.5B has 24 layers; the trace profiles one forward pass.
  ASSERT_EQ(calls.attention.size(), 24u);
  double seconds = 0;
  for (const auto& a : calls.attention) {
    EXPECT_EQ(a.op, "aten::_flash_attention_forward");
    EXPECT_FALSE(a.backward);
    EXPECT_TRUE(a.causal);
    EXPECT_EQ(a.dtype, "bf16");
    EXPECT_EQ(a.batch, 16);
    EXPECT_EQ(a.heads, 16);
    EXPECT_EQ(a.head_dim, 64);
    EXPECT_EQ(a.q_len, a.k_len);
    EXPECT_EQ(a.entries(), 16u * 16u * a.q_len * (a.q_len + 1) / 2);
    seconds += a.seconds;
  }
  // Every FlashAttention kernel in the trace, found by name, is one of the 24
  // calls' time or one launched before the profiled operators (the trace's
  // window starts mid-step), and nothing else is.
  const auto outside = calls.unattributed.find(
      "launched outside any recorded operator (no launch event, or a CUDA graph replay)");
  ASSERT_NE(outside, calls.unattributed.end());
  const auto early = outside->second.find("pytorch_flash::flash_fwd_kernel");
  ASSERT_NE(early, outside->second.end());
  EXPECT_NEAR(seconds + early->second.seconds, kernel_seconds_named(t, "flash_fwd"), 1e-12);
  EXPECT_FALSE(calls.gemm.empty());
  for (const auto& g : calls.gemm) EXPECT_GT(g.flops(), 0);
}

TEST(KinetoTrace, VitOnH100FullMaskPoints) {
  const auto t = load("h100-falconsai-vit.json.gz");
  const auto calls = trace_calls(t);
  ASSERT_FALSE(calls.attention.empty());
  for (const auto& a : calls.attention) EXPECT_FALSE(a.causal);
  const auto p = trace_profile(calls);
  ASSERT_FALSE(p.points.empty());
  for (const auto& pt : p.points) {
    EXPECT_EQ(pt.point.mask, "full");
    EXPECT_LE(pt.point.min_s, pt.point.median_s);
    EXPECT_LE(pt.point.median_s, pt.point.max_s);
    EXPECT_EQ(pt.point.entries,
              static_cast<std::uint64_t>(pt.heads * pt.point.block * pt.point.block));
  }
}

TEST(KinetoTrace, NcclAllReduceSizesAndBusBandwidth) {
  const auto t = load("a100-nccl-allreduce.json.gz");
  const auto calls = trace_calls(t);
  ASSERT_FALSE(calls.collectives.empty());
  for (const auto& c : calls.collectives) {
    EXPECT_EQ(c.kind, MeasuredKind::AllReduce);
    EXPECT_EQ(c.ranks, 2);
    // fp32 elements; nccl-tests' busbw for 2 ranks is 2 (n-1)/n = 1 x algbw.
    EXPECT_EQ(std::fmod(c.bytes, 4.0), 0.0);
    EXPECT_NEAR(c.busbw(), c.bytes / c.seconds, 1e-6 * c.busbw());
  }
  // Broadcasts are NCCL kernels ringsim does not model; the trace has no
  // shapes (record_shapes off), so its GEMMs are named, not measured.
  EXPECT_TRUE(
      calls.unattributed.count("NCCL collective ringsim does not model (broadcast, reduce)"));
  EXPECT_TRUE(calls.gemm.empty());
  EXPECT_TRUE(calls.unattributed.count("GEMM without shapes (profile with record_shapes=True)"));
}

TEST(KinetoTrace, UnknownAttentionOperatorIsNamed) {
  const auto calls = trace_calls(load("b200-vllm-eager.json.gz"));
  EXPECT_TRUE(calls.attention.empty());
  const auto it = calls.unattributed.find("attention under an operator ringsim does not read");
  ASSERT_NE(it, calls.unattributed.end());
  bool vllm = false;
  for (const auto& [op, u] : it->second) vllm = vllm || op.find("vllm::") == 0;
  EXPECT_TRUE(vllm);
}

// One attention operator, its launch and kernel; `dims` and `concrete` as
// the trace would record them.
std::string one_call(const std::string& dims, const std::string& concrete,
                     const std::string& extra_kernels = "") {
  return R"({"traceEvents":[
 {"ph":"X","cat":"cpu_op","name":"aten::_flash_attention_backward","pid":1,"tid":1,"ts":100,"dur":50,
  "args":{"Input Dims":)" +
         dims + R"(,"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16"],
  "Concrete Inputs":)" +
         concrete + R"(}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":5,"args":{"correlation":7}},
 {"ph":"X","cat":"kernel","name":"flash_bwd_dq_dk_dv_loop_kernel","pid":0,"tid":7,"ts":200,"dur":40,
  "args":{"device":0,"stream":7,"correlation":7}})" +
         extra_kernels + "]}";
}

const std::string kBwdDims = R"([[2,1024,8,128],[2,1024,8,128],[2,1024,8,128],[2,1024,8,128]])";
const std::string kCausal = R"(["","","","","","","","","","","0.","True"])";

TEST(KinetoTrace, BackwardSignatureAndHostileTraces) {
  const auto ok = trace_calls(parse_kineto_trace(one_call(kBwdDims, kCausal), "t"));
  ASSERT_EQ(ok.attention.size(), 1u);
  EXPECT_TRUE(ok.attention[0].backward);
  EXPECT_TRUE(ok.attention[0].causal);
  EXPECT_DOUBLE_EQ(ok.attention[0].seconds, 40e-6);
  // Missing shapes, a missing mask, packed (3-d) sequences: named, not guessed.
  const auto no_shapes = trace_calls(parse_kineto_trace(one_call("[]", kCausal), "t"));
  EXPECT_TRUE(no_shapes.attention.empty());
  EXPECT_TRUE(
      no_shapes.unattributed.count("attention without shapes (profile with record_shapes=True)"));
  const auto no_mask = trace_calls(parse_kineto_trace(one_call(kBwdDims, "[]"), "t"));
  EXPECT_TRUE(no_mask.attention.empty());
  const auto varlen = trace_calls(
      parse_kineto_trace(one_call(R"([[8,8,128],[2048,8,128],[2048,8,128]])", kCausal), "t"));
  EXPECT_TRUE(varlen.attention.empty());
  // A kernel on another stream over the same time: the call is marked overlapped.
  const auto over = trace_calls(parse_kineto_trace(
      one_call(
          kBwdDims, kCausal,
          R"(,{"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv","pid":0,"tid":9,"ts":210,"dur":100,"args":{"device":0,"stream":9}})"),
      "t"));
  ASSERT_EQ(over.attention.size(), 1u);
  EXPECT_TRUE(over.attention[0].overlapped);
  // Not JSON, no events, no kernels: one line each.
  for (const auto* bad : {"{", "{\"traceEvents\":{}}", "{\"traceEvents\":[]}", "[1,2]"}) {
    const auto why = refusal_of(bad);
    EXPECT_NE(why, "") << bad;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

TEST(KinetoTrace, LargeAndBrokenFilesRefusedBeforeReading) {
  const auto dir = temp_dir();
  // A 2 GiB sparse file: refused by its size, without reading it.
  const auto big = (dir / "big.json").string();
  { std::ofstream(big).put('{'); }
  ASSERT_EQ(::truncate(big.c_str(), 2LL << 30), 0);
  EXPECT_THROW(read_trace_text(big, "--from-trace"), InputError);
  // A gzip stream cut in half.
  std::ifstream in(kDir + "/h100-falconsai-vit.json.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), {});
  const auto cut = (dir / "cut.json.gz").string();
  std::ofstream(cut, std::ios::binary)
      .write(gz.data(), static_cast<std::streamsize>(gz.size() / 2));
  try {
    read_trace_text(cut, "--from-trace");
    ADD_FAILURE() << "a truncated gzip stream was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(TraceImport, ProfileDrivesRunComputeTime) {
  const auto dir = temp_dir();
  const auto out = (dir / "vit.json").string();
  const auto r = cli_testing::run_cli(
      {"profile", "--from-trace", kDir + "/h100-falconsai-vit.json.gz", "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("catalog device h100-sxm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pytorch_flash::flash_fwd_kernel"), std::string::npos) << r.out;
  // Beside each point, ringsim's own model of the same call (FlashAttention-2
  // on the H100, by the kernel's name), so the curve's error at this shape shows.
  EXPECT_NE(r.out.find("ringsim's fa2 model on the h100-sxm"), std::string::npos) << r.out;
  const auto prof = read_profile(out);
  ASSERT_FALSE(prof.points.empty());
  const auto& pt = prof.points.front();
  // The model's time for the measured block is the measured median, and for
  // twice the block's entries twice that: the trace's rate, not a curve's.
  const ProfileModel model(prof, "bf16", out);
  EXPECT_DOUBLE_EQ(model.seconds(pt.entries, pt.block, pt.head_dim, false, false), pt.median_s);
  EXPECT_DOUBLE_EQ(model.seconds(2 * pt.entries, pt.block, pt.head_dim, false, false),
                   2 * pt.median_s);
  // Through `run`: a ring of that block and those heads, unmasked, computes
  // the measured call per step (plus the merge the profile's kernel adds),
  // where the default kernel's published curves give another time.
  const auto run = [&](const std::vector<std::string>& extra) {
    proc::Command cmd;
    cmd.argv = {RINGSIM_BIN,   "run",
                "--gpu",       "h100-sxm",
                "--dtype",     "bf16",
                "--devices",   "2",
                "--block",     std::to_string(pt.block),
                "--heads",     std::to_string(pt.entries / (pt.block * pt.block)),
                "--kv-heads",  std::to_string(pt.entries / (pt.block * pt.block)),
                "--head-dim",  std::to_string(pt.head_dim),
                "--no-causal", "--engine",
                "analytic",    "--json"};
    cmd.argv.insert(cmd.argv.end(), extra.begin(), extra.end());
    cmd.timeout_s = 110;
    const auto res = proc::run(cmd);
    EXPECT_EQ(res.exit_code, 0) << res.err;
    return res.exit_code == 0 ? nlohmann::json::parse(res.out) : nlohmann::json::object();
  };
  const auto measured = run({"--profile", out});
  const auto curves = run({});
  ASSERT_TRUE(measured.contains("compute_s_per_step"));
  EXPECT_EQ(measured.at("compute_model"), "profile:NVIDIA H100 80GB HBM3");
  EXPECT_NEAR(measured.at("compute_s_per_step").get<double>() -
                  measured.at("merge_s_per_step").get<double>(),
              pt.median_s, 1e-12);
  EXPECT_NE(curves.at("compute_s_per_step").get<double>(),
            measured.at("compute_s_per_step").get<double>());
  fs::remove_all(dir);
}

TEST(TraceImport, RefusesWithOneLine) {
  const auto dir = temp_dir();
  const auto out = (dir / "p.json").string();
  // No attention call the reader can profile: the report, then exit 2.
  auto r = cli_testing::run_cli(
      {"profile", "--from-trace", kDir + "/b200-vllm-eager.json.gz", "--out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no attention call to profile"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(out));
  // Without --out: the report of what it holds, exit 0, nothing written.
  r = cli_testing::run_cli({"profile", "--from-trace", kDir + "/b200-vllm-eager.json.gz"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("vllm::unified_attention_with_output"), std::string::npos) << r.out;
  r = cli_testing::run_cli({"profile", "--from-trace", (dir / "none.json").string(), "--out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--from-trace"), std::string::npos) << r.err;
  r = cli_testing::run_cli({"profile", "--from-trace", kDir + "/h100-falconsai-vit.json.gz",
                            "--out", out, "--blocks", "128"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--blocks"), std::string::npos) << r.err;
  r = cli_testing::run_cli({"profile", "--device", "cpu", "--gpu", "h100-sxm", "--out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ringsim
