// `ringsim plan`'s defaults and labels as a user meets them: TP and PP are
// searched unless fixed (--tp 1 --pp 1: context parallelism alone), and an
// infeasible row names each layout once with the degrees it stands for
// (never "ulysses/ulysses/ulysses cp 16").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace {

ringsim::proc::Result plan(std::vector<std::string> args) {
  args.insert(args.begin(),
              {RINGSIM_BIN, "plan", "--model", "llama3-8b", "--context", "1M", "--gpus", "32"});
  return ringsim::proc::run(args, 120);
}

TEST(PlanDefaults, TpAndPpAreSearchedUnlessFixed) {
  const auto r = plan({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<int> tps, pps;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& c : j.at("configs")) {
    tps.insert(c.at("tp").get<int>());
    pps.insert(c.at("pp").get<int>());
  }
  EXPECT_GT(tps.size(), 1u) << "TP not searched by default";
  EXPECT_GT(pps.size(), 1u) << "PP not searched by default";
  const auto fixed = plan({"--tp", "1", "--pp", "1", "--json"});
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  const auto jf = nlohmann::json::parse(fixed.out);
  for (const auto& c : jf.at("configs")) {
    EXPECT_EQ(c.at("tp"), 1);
    EXPECT_EQ(c.at("pp"), 1);
  }
}

TEST(PlanDefaults, InfeasibleRowsNameEachLayoutOnce) {
  // --top 1000: every infeasible row is printed, the shape-rule ones at the
  // end among them (Ulysses degrees above the KV heads, at several pp).
  const auto r = plan({"--top", "1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("\ninfeasible:\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream in(r.out.substr(at + 13));
  int rows = 0;
  for (std::string line; std::getline(in, line) && line.rfind("  ", 0) == 0;) {
    if (line.rfind("  (", 0) == 0 || line.rfind("  ...", 0) == 0) continue;
    const auto label = line.substr(2, line.find(' ', 2) - 2);  // "ring/zigzag"
    std::set<std::string> seen;
    std::istringstream names(label);
    for (std::string n; std::getline(names, n, '/');)
      EXPECT_TRUE(seen.insert(n).second) << "repeated layout in: " << line;
    ++rows;
  }
  EXPECT_GT(rows, 12) << r.out;
  EXPECT_EQ(r.out.find("more infeasible"), std::string::npos) << "--top 1000 shows them all";
}

// Like-for-like plans: the 405B question of the docs ranks every row at the
// model card's batch (Llama 3: 16M tokens), lists only the layouts PyTorch's
// context_parallel implements, marks the rows inside the best one's error
// band, and names the best other framework.
TEST(PlanDefaults, LlamaThree405BRanksLikeForLike) {
  const auto r = ringsim::proc::run({RINGSIM_BIN, "plan", "--model", "llama3-405b", "--context",
                                     "128K", "--gpus", "16384", "--json"},
                                    120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("global_batch_tokens"), 16777216);
  const std::set<std::string> pytorch{"ring", "zigzag", "allgather", "none"};
  int feasible = 0, tied = 0;
  for (const auto& c : j.at("configs")) {
    if (!c.at("feasible").get<bool>()) continue;
    ++feasible;
    EXPECT_EQ(c.at("tokens_per_step").get<double>(), 16777216.0) << c.at("label");
    EXPECT_TRUE(pytorch.count(c.at("layout").get<std::string>())) << c.at("label");
    tied += c.at("tied").get<bool>();
  }
  EXPECT_GT(feasible, 1);
  EXPECT_GT(tied, 0) << "no row inside the best row's band";
  EXPECT_FALSE(j.at("configs")[0].at("tied").get<bool>());
  EXPECT_TRUE(j.at("best_other_framework").is_object());
  EXPECT_NE(j.at("best_other_framework").at("framework"), "pytorch-fsdp");
}

TEST(PlanDefaults, DefaultBatchIsFourMillionTokensInWholeSequences) {
  // 4M / 64K = 64 sequences; 4M / 3M rounds down to one sequence.
  for (const auto& [context, tokens] :
       std::vector<std::pair<std::string, double>>{{"64K", 4194304.0}, {"3M", 3145728.0}}) {
    const auto r = ringsim::proc::run({RINGSIM_BIN, "plan", "--model", "llama3-8b", "--context",
                                       context, "--gpus", "8", "--tp", "1", "--pp", "1", "--json"},
                                      120);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out).at("global_batch_tokens").get<double>(), tokens)
        << context;
  }
}

TEST(PlanDefaults, OnlyTheFrameworksLayoutsUnlessAny) {
  auto layouts = [](std::vector<std::string> extra) {
    std::vector<std::string> a{RINGSIM_BIN, "plan",   "--model", "llama3-8b", "--context",
                               "128K",      "--gpus", "32",      "--tp",      "1",
                               "--pp",      "1",      "--top",   "1000",      "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    const auto r = ringsim::proc::run(a, 120);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> out;
    const auto j = nlohmann::json::parse(r.out);  // held: the loop reads into it
    for (const auto& c : j.at("configs")) out.insert(c.at("layout").get<std::string>());
    return out;
  };
  EXPECT_EQ(layouts({}), (std::set<std::string>{"none", "ring", "zigzag", "allgather"}));
  using S = std::string;
  EXPECT_EQ(layouts({S("--framework"), S("megatron")}),
            (std::set<std::string>{"none", "zigzag", "allgather", "ulysses", "hybrid"}));
  const auto any = layouts({S("--framework"), S("any")});
  EXPECT_TRUE(any.count("ulysses") && any.count("striped")) << "--framework any lists every layout";
  const auto refused = ringsim::proc::run({RINGSIM_BIN, "plan", "--model", "llama3-8b", "--context",
                                           "128K", "--gpus", "32", "--layout", "ulysses"},
                                          60);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--layout: pytorch-fsdp does not implement ulysses"),
            std::string::npos)
      << refused.err;
}

// --fail-if-none: exit 1 when nothing fits (a CI gate), the output as usual;
// exit 0 when something does, and without the flag either way.
TEST(PlanDefaults, FailIfNoneExitsOneWhenNothingFits) {
  const std::vector<std::string> none{RINGSIM_BIN, "plan", "--model", "llama3-405b",
                                      "--context", "1M",   "--gpus",  "8",
                                      "--tp",      "1",    "--pp",    "1"};
  auto with = [](std::vector<std::string> a, std::vector<std::string> extra) {
    a.insert(a.end(), extra.begin(), extra.end());
    return ringsim::proc::run(a, 120);
  };
  const auto plain = with(none, {});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  const auto gated = with(none, {"--fail-if-none"});
  EXPECT_EQ(gated.exit_code, 1) << gated.err;
  EXPECT_EQ(gated.out, plain.out) << "the flag changes the exit status, not the output";
  const auto json = with(none, {"--fail-if-none", "--json"});
  EXPECT_EQ(json.exit_code, 1) << json.err;
  EXPECT_TRUE(nlohmann::json::parse(json.out).is_object());
  const auto fits = ringsim::proc::run({RINGSIM_BIN, "plan", "--model", "llama3-8b", "--context",
                                        "8K", "--gpus", "8", "--fail-if-none"},
                                       120);
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  const auto infer =
      ringsim::proc::run({RINGSIM_BIN, "plan", "--inference", "--model", "llama3-405b", "--context",
                          "128K", "--gpus", "8", "--ttft-target", "0.001", "--fail-if-none"},
                         120);
  EXPECT_EQ(infer.exit_code, 1) << infer.err;
}

}  // namespace
