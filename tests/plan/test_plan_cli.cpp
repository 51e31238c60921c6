// `ringsim plan` through the real command line: the issue's done-when case,
// --json keys, --max-context, --explain, one line + exit 2 for bad input, and
// the SimGrid re-check, which runs the ringsim binary (never this process:
// SimGrid allows one engine per process).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "helpers.hpp"
#include "proc/child.hpp"

namespace ringsim {
namespace {

using plan_testing::run_cli;

const std::vector<std::string> kDoneWhen{"plan",   "--model", "llama3-8b", "--context", "1048576",
                                         "--gpus", "32",      "--gpu",     "h100-sxm"};

TEST(PlanCli, DoneWhenCaseListsFeasibleAndExplainsInfeasible) {
  const auto r = run_cli(kDoneWhen);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* s :
       {"rank", "tok/s/GPU", "MFU", "infeasible:", "over by", "SimGrid re-check: off"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(PlanCli, JsonHasTheIssuesKeys) {
  auto args = kDoneWhen;
  args.push_back("--json");
  const auto r = run_cli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("engine"), "analytic");
  EXPECT_EQ(j.at("context"), 1048576);
  ASSERT_TRUE(j.at("configs").is_array());
  ASSERT_FALSE(j["configs"].empty());
  int feasible = 0, infeasible = 0;
  for (const auto& c : j["configs"]) {
    for (const char* k : {"feasible", "reason", "layout", "cp", "block", "memory_bytes_per_device",
                          "step_time_s", "tokens_per_s_per_gpu", "mfu"})
      EXPECT_TRUE(c.contains(k)) << k;
    if (c["feasible"].get<bool>()) {
      ++feasible;
      // Within the H100's 81,559 MiB (nvidia-smi), or tight: over by less than the 10% band.
      EXPECT_LT(c["memory_bytes_per_device"].get<double>() * 0.9, 81559.0 * 1048576);
      EXPECT_NE(c["memory_verdict"], "over");
      EXPECT_LE(c["memory_allocated_bytes"].get<double>(),
                c["memory_reserved_bytes"].get<double>());
      EXPECT_LT(c["memory_reserved_bytes"].get<double>(),
                c["memory_bytes_per_device"].get<double>());
      EXPECT_GT(c["step_time_s"].get<double>(), 0);
      EXPECT_TRUE(c["reason"].is_null());
      EXPECT_EQ(c["engine"], "analytic");
    } else {
      ++infeasible;
      EXPECT_TRUE(c["reason"].is_string());
    }
  }
  EXPECT_GT(feasible, 0);
  EXPECT_GT(infeasible, 0);
  EXPECT_FALSE(j.contains("max_context"));
  EXPECT_EQ(j.at("recheck").at("status"), "off");
}

TEST(PlanCli, BinarySuffixContextMatchesTheNumber) {
  auto a = kDoneWhen, b = kDoneWhen;
  b[4] = "1M";
  a.push_back("--json");
  b.push_back("--json");
  EXPECT_EQ(run_cli(a).out, run_cli(b).out);
}

TEST(PlanCli, MaxContextFor7BOn8A100) {
  const auto r = run_cli({"plan", "--model", "llama2-7b", "--gpus", "8", "--gpu", "a100-80gb",
                          "--max-context", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto tokens = j.at("max_context").at("tokens").get<std::int64_t>();
  EXPECT_GT(tokens, 0);
  EXPECT_EQ(j.at("context"), tokens);
  EXPECT_TRUE(j.at("configs").at(0).at("feasible").get<bool>());
  const auto text = run_cli(
      {"plan", "--model", "llama2-7b", "--gpus", "8", "--gpu", "a100-80gb", "--max-context"});
  EXPECT_NE(text.out.find("longest context that fits: " + std::to_string(tokens)),
            std::string::npos)
      << text.out;
}

TEST(PlanCli, ExplainItemisesMemoryAndTime) {
  auto args = kDoneWhen;
  for (const char* a : {"--cp", "32", "--layout", "zigzag", "--explain"}) args.push_back(a);
  const auto r = run_cli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"explain: zigzag cp 32", "optimizer_m_v_fp32", "logits_and_loss_fp32",
                        "largest:", "cuda_context", "nccl_buffers", "max_memory_allocated",
                        "attention fwd+bwd", "tokens/s per GPU"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  // The largest three terms lead the itemisation, largest first.
  const auto mem = r.out.find("largest:");
  const auto first = r.out.find("\n", mem) + 1;
  EXPECT_EQ(r.out.substr(first).find("    logits_and_loss_fp32"), 0u) << r.out.substr(mem, 400);
}

TEST(PlanCli, BadInputIsOneLineAndExit2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"plan", "--context", "1M"}, "--gpus"},
      {{"plan", "--gpus", "8"}, "--context"},
      {{"plan", "--gpus", "0", "--context", "1M"}, "--gpus"},
      {{"plan", "--gpus", "8", "--context", "1.5M"}, "--context"},
      {{"plan", "--gpus", "32", "--context", "1M", "--cp", "3"}, "--cp"},
      {{"plan", "--gpus", "8", "--context", "1M", "--activation-checkpointing", "some"},
       "--activation-checkpointing"},
      {{"plan", "--gpus", "8", "--context", "1M", "--optimizer", "sgd"}, "--optimizer"},
      {{"plan", "--gpus", "8", "--context", "1M", "--global-batch-tokens", "1000"},
       "--global-batch-tokens"},
      {{"plan", "--gpus", "8", "--max-context", "--global-batch-tokens", "1M"},
       "--global-batch-tokens"},
      {{"plan", "--gpus", "8", "--context", "1M", "--layout", "spiral"}, "--layout"},
      {{"plan", "--gpus", "8", "--context", "1M", "--tp", "3"}, "--tp"},
      {{"plan", "--gpus", "8", "--context", "1M", "--model", "nope"}, "--model"},
      {{"plan", "--gpus", "8", "--context", "1M", "--gpu", "nope"}, "--gpu"},
      {{"plan", "--gpus", "8", "--context", "1M", "--hbm", "-1"}, "--hbm"},
  };
  for (const auto& [args, flag] : cases) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args.back();
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  }
}

TEST(PlanCli, RecheckWithoutARingsimProgramSaysUnavailable) {
  // $RINGSIM_BIN names the program for child runs, and an explicit choice is final.
  ::setenv("RINGSIM_BIN", "/nonexistent/ringsim", 1);
  auto args = kDoneWhen;
  for (const char* a : {"--recheck", "1", "--json"}) args.push_back(a);
  const auto r = run_cli(args);
  ::unsetenv("RINGSIM_BIN");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("recheck").at("status"), "unavailable");
  EXPECT_NE(j["recheck"]["message"].get<std::string>().find("$RINGSIM_BIN=/nonexistent/ringsim"),
            std::string::npos)
      << j["recheck"]["message"];
}

// Runs the ringsim binary; returns its stdout and sets *code to its exit status.
std::string run_binary(const std::vector<std::string>& args, int* code) {
  proc::Command c;
  c.argv = {RINGSIM_BIN};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.timeout_s = 300;
  const auto r = proc::run(c);
  *code = r.ok() ? 0 : (r.exit_code >= 0 ? r.exit_code : 128 + r.signal);
  return r.out;
}

TEST(PlanCli, SimgridRecheckRunsTheWholeLayerInJobMode) {
  // 16 GPUs, cp 8: dp 2, so the re-check also simulates one layer of both
  // rings and their FSDP flows on the cluster (two nodes) in job mode.
  int code = 0;
  const auto out =
      run_binary({"plan", "--model", "llama3-8b", "--layers", "2", "--context", "64K", "--gpus",
                  "16", "--cp", "8", "--layout", "zigzag", "--recheck", "1", "--json"},
                 &code);
  ASSERT_EQ(code, 0) << out;
  const auto j = nlohmann::json::parse(out);
  const auto& rc = j.at("recheck");
  ASSERT_EQ(rc.at("status"), "ok") << rc.at("message").get<std::string>();
  const auto& job = rc.at("configs").at(0).at("job");
  ASSERT_FALSE(job.contains("error")) << job.dump();
  EXPECT_EQ(job.at("gpus").get<int>(), 16);
  EXPECT_TRUE(job.at("fsdp").get<bool>());
  // Contention can only slow a ring down, and the layer holds more than its attention.
  EXPECT_GE(job.at("contention").get<double>(), 1 - 1e-9);
  EXPECT_GT(job.at("layer_fwdbwd_s").get<double>(),
            rc.at("configs").at(0).at("attention_fwdbwd_s_per_layer_simgrid").get<double>());
  EXPECT_FALSE(job.at("why").get<std::string>().empty());
  EXPECT_FALSE(job.at("hottest_link").get<std::string>().empty());
}

TEST(PlanCli, SimgridRecheckMatchesTheAnalyticAttention) {
  // One node (8 GPUs on NVLink, cp 8, no link shared by two flows): the
  // SimGrid engine's exact-timing settings should reproduce the analytic
  // attention time; 1% covers per-hop latency modelling differences.
  int code = 0;
  const auto out =
      run_binary({"plan", "--model", "llama3-8b", "--layers", "2", "--context", "64K", "--gpus",
                  "8", "--cp", "8", "--layout", "zigzag", "--recheck", "1", "--json"},
                 &code);
  ASSERT_EQ(code, 0) << out;
  const auto j = nlohmann::json::parse(out);
  const auto& rc = j.at("recheck");
  ASSERT_EQ(rc.at("status"), "ok") << rc.at("message").get<std::string>();
  const auto& c = rc.at("configs").at(0);
  EXPECT_EQ(c.at("engine"), "simgrid");
  const double sim = c.at("attention_s_simgrid").get<double>(),
               an = c.at("attention_s_analytic").get<double>();
  EXPECT_NEAR(sim, an, 0.01 * an);
}

TEST(PlanCli, RecheckChildrenGetOnlyTheFlagsTheirPlatformHas) {
  // `ringsim run` refuses flags a platform does not have (--inter on a
  // torus, --intra and --gpus-per-node on a fat-tree): the re-check must
  // spell out only what applies, or every child is refused.
  for (const std::vector<std::string>& hw :
       {std::vector<std::string>{"--cluster", "tpu-v4-pod"},
        std::vector<std::string>{"--gpu", "h100-sxm", "--platform", "fattree"}}) {
    std::vector<std::string> args{"plan",     "--gpus", "16",        "--context", "32K",
                                  "--layers", "2",      "--recheck", "1",         "--json"};
    args.insert(args.end(), hw.begin(), hw.end());
    int code = 0;
    const auto out = run_binary(args, &code);
    ASSERT_EQ(code, 0) << out;
    const auto rc = nlohmann::json::parse(out).at("recheck");
    EXPECT_EQ(rc.at("status"), "ok") << hw[1] << ": " << rc.dump();
  }
}

TEST(PlanCli, RecheckReportsARefusedChildAsFailedNotUnavailable) {
  // 131072 devices: the child's size guard refuses the simulation (exit 2).
  // That is a failure of this config's re-check, said with the child's own
  // line; the engine is there, so the status is never "unavailable".
  int code = 0;
  const auto out =
      run_binary({"plan", "--gpus", "131072", "--cp", "131072", "--layout", "hybrid", "--framework",
                  "any", "--context", "16M", "--recheck", "1", "--json"},
                 &code);
  ASSERT_EQ(code, 0) << out;
  const auto rc = nlohmann::json::parse(out).at("recheck");
  EXPECT_EQ(rc.at("status"), "failed") << rc.dump();
  ASSERT_EQ(rc.at("configs").size(), 1u);
  const auto error = rc["configs"][0].at("error").get<std::string>();
  EXPECT_NE(error.find("exit 2"), std::string::npos) << error;
  EXPECT_NE(error.find("--max-activities"), std::string::npos) << error;
}

// issue: what one slow GPU does to the whole step, not only to the ring.
// A 1.5x straggler: its ring slows in SimGrid, and every other compute of a
// synchronous step runs at its pace, so the step moves by nearly 1.5x (less
// what is communication) and never by more.
TEST(PlanCli, RecheckWithAStragglerReportsTheWholeStep) {
  int code = 0;
  const auto out =
      run_binary({"plan",   "--model",   "llama3-8b", "--context",   "64K",   "--gpus", "16",
                  "--cp",   "8",         "--tp",      "1",           "--pp",  "1",      "--layout",
                  "zigzag", "--recheck", "1",         "--straggler", "5:1.5", "--json"},
                 &code);
  ASSERT_EQ(code, 0) << out;
  const auto rc = nlohmann::json::parse(out).at("recheck");
  EXPECT_EQ(rc.at("status"), "ok") << rc.dump();
  EXPECT_EQ(rc.at("faults"), "--straggler 5:1.5");
  const auto& c = rc.at("configs").at(0);
  EXPECT_DOUBLE_EQ(c.at("compute_slowdown").get<double>(), 1.5);
  const double with = c.at("step_time_s_simgrid_attention").get<double>(),
               without = c.at("step_time_s_analytic").get<double>();
  EXPECT_GT(with / without, 1.25);
  EXPECT_LE(with / without, 1.5 * 1.02);
  // MFU against the device's own peak: lower with the straggler.
  const double mfu = nlohmann::json::parse(out).at("configs").at(0).at("mfu").get<double>();
  EXPECT_LT(c.at("mfu_simgrid_attention").get<double>(), mfu / 1.25);
  // Without --recheck the faults have nowhere to run.
  run_binary({"plan", "--gpus", "16", "--context", "64K", "--straggler", "5:1.5"}, &code);
  EXPECT_EQ(code, 2);
}

}  // namespace
}  // namespace ringsim
