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

}  // namespace
