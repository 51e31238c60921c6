// The conventions of well-kept command-line tools: did-you-mean for a
// mistyped flag, subcommand or catalog name (the exact lines are rows of
// docs/bad-input.md; here the rule behind them), `ringsim help [CMD]`,
// -V/--version, and the words shell completion asks for
// (`ringsim __complete`, cli/complete.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "models/core/suggest.hpp"
#include "proc/child.hpp"

namespace {

ringsim::proc::Result ringsim_run(const std::vector<std::string>& args) {
  std::vector<std::string> argv{RINGSIM_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return ringsim::proc::run(argv, 60);
}

std::vector<std::string> lines(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Suggest, TyposAndPrefixesButNotStrangers) {
  using ringsim::closest_choice;
  const std::vector<std::string> flags{"--devices", "--block", "--layout", "--dtype"};
  EXPECT_EQ(closest_choice("--devcies", flags), "--devices");  // a swap
  EXPECT_EQ(closest_choice("--blok", flags), "--block");       // a deletion
  EXPECT_EQ(closest_choice("--Layout", flags), "--layout");    // case
  EXPECT_EQ(closest_choice("--frobnicate", flags), "");
  const std::vector<std::string> gpus{"h100-sxm", "h200", "a100-80gb"};
  EXPECT_EQ(closest_choice("h100", gpus), "h100-sxm");  // the only longer name it starts
  EXPECT_EQ(closest_choice("h2", gpus), "h200");
  EXPECT_EQ(closest_choice("x", gpus), "");
  EXPECT_EQ(closest_choice("", gpus), "");
  EXPECT_EQ(ringsim::edit_distance("plna", "plan"), 1);
  EXPECT_EQ(ringsim::edit_distance("kitten", "sitting"), 3);
}

TEST(Conventions, VersionOnEveryFlagSpelling) {
  for (const char* flag : {"-V", "--version"}) {
    const auto r = ringsim_run({flag});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("ringsim ", 0), 0u) << r.out;
  }
}

TEST(Conventions, HelpSubcommand) {
  const auto all = ringsim_run({"help"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out, ringsim_run({"--help"}).out);
  const auto plan = ringsim_run({"help", "plan"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(plan.out, ringsim_run({"plan", "--help"}).out);
  const auto bad = ringsim_run({"help", "nope"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(bad.out.empty());
}

TEST(Conventions, CompletionWordsFollowTheProgram) {
  const auto subs = lines(ringsim_run({"__complete"}).out);
  for (const char* s : {"run", "plan", "minblock", "help"})
    EXPECT_NE(std::find(subs.begin(), subs.end(), s), subs.end()) << s;
  // plan's flags, from the parser itself (a flag added to plan shows here).
  const auto plan = lines(ringsim_run({"__complete", "plan"}).out);
  for (const char* f : {"--model", "--context", "--train-tokens", "--config", "--help"})
    EXPECT_NE(std::find(plan.begin(), plan.end(), f), plan.end()) << f;
  const auto gpus = lines(ringsim_run({"__complete", "run", "--gpu"}).out);
  EXPECT_NE(std::find(gpus.begin(), gpus.end(), "h100-sxm"), gpus.end());
  const auto layouts = lines(ringsim_run({"__complete", "run", "--layout"}).out);
  EXPECT_NE(std::find(layouts.begin(), layouts.end(), "zigzag"), layouts.end());
  // A flag that takes no name: no words, so the shell offers files or nothing.
  EXPECT_TRUE(ringsim_run({"__complete", "run", "--devices"}).out.empty());
}

}  // namespace
