// What the CLI says about units: every option in every subcommand's --help
// has a type name (never CLI11's bare TEXT, which it prints for any flag read
// as a string, numbers included), the causal flag shows its real default, and
// token counts and memory print in the binary units the flags read
// (models/core/parse.hpp). Also the policy that keeps `ringsim calibrate`'s
// folder when the commands it prints read files there.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/calibrate/workdir.hpp"
#include "models/core/parse.hpp"
#include "proc/child.hpp"

namespace {

std::string help_of(const std::vector<std::string>& args) {
  std::vector<std::string> argv{RINGSIM_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = ringsim::proc::run(argv, 60);
  EXPECT_EQ(r.exit_code, 0) << r.command << "\n" << r.err;
  return r.out;
}

// The subcommands `ringsim --help` lists (the lines under "Subcommands:").
std::vector<std::string> subcommands() {
  std::istringstream in(help_of({"--help"}));
  std::vector<std::string> out;
  bool in_list = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.empty()) break;
    std::istringstream words(line);
    std::string name;
    words >> name;
    out.push_back(name);
  }
  return out;
}

// Option lines of a help text: "  --name TYPE=default   description".
std::vector<std::string> option_lines(const std::string& help) {
  std::istringstream in(help);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  -", 0) == 0) out.push_back(line);
  return out;
}

TEST(Help, EveryOptionOfEverySubcommandHasATypeName) {
  const auto subs = subcommands();
  // run, minblock, hardware, plan, infer, sweep, verify, profile, experiment,
  // calibrate at the time of writing: the test must see them to be a test.
  ASSERT_GE(subs.size(), 10u);
  int options = 0;
  for (const auto& s : subs) {
    for (const auto& line : option_lines(help_of({s, "--help"}))) {
      ++options;
      // The option column ends at the first double space after the names.
      const auto names = line.substr(2, line.find("  ", 2) - 2);
      EXPECT_EQ(names.find(" TEXT"), std::string::npos)
          << "ringsim " << s << ": an option shows TEXT; give it ->type_name(flag_type::...)"
          << " (models/core/flag_types.hpp):\n"
          << line;
    }
  }
  EXPECT_GT(options, 100);  // the shared run, hardware and sim flags alone are over 40
}

TEST(Help, NumericFlagsNameTheirUnit) {
  const auto help = help_of({"run", "--help"});
  for (const char* want : {"--block TOKENS (K/M binary)=4096", "--devices INT=256",
                           "--bandwidth BYTES/S", "--latency SECONDS", "--flops FLOP/S",
                           "--max-memory BYTES (K/M/G binary)", "--efficiency FRACTION"})
    EXPECT_NE(help.find(want), std::string::npos) << want << "\n" << help;
  const auto plan = help_of({"plan", "--help"});
  EXPECT_NE(plan.find("--context TOKENS (K/M binary)"), std::string::npos) << plan;
  EXPECT_NE(plan.find("--hbm BYTES (K/M/G binary)"), std::string::npos) << plan;
}

TEST(Help, CausalShowsItsDefault) {
  // Causal is the default; CLI11 alone printed `--causal,--no-causal{false}`.
  for (const char* sub : {"run", "plan", "verify", "minblock", "sweep"}) {
    const auto help = help_of({sub, "--help"});
    const auto at = help.find("--causal,--no-causal");
    ASSERT_NE(at, std::string::npos) << sub;
    const auto line = help.substr(at, help.find('\n', at) - at);
    EXPECT_EQ(line.find("{false}"), std::string::npos) << sub << ": " << line;
    EXPECT_NE(line.find("(default: --causal)"), std::string::npos) << sub << ": " << line;
  }
}

TEST(Units, TokensPrintInTheBinaryUnitsTheFlagsRead) {
  using ringsim::human_tokens;
  EXPECT_EQ(human_tokens(131072), "128K");   // 128 x 1024: what --context 128K reads
  EXPECT_EQ(human_tokens(1048576), "1M");    // 1024 x 1024
  EXPECT_EQ(human_tokens(1572864), "1.5M");  // 1.5 x 1048576
  EXPECT_EQ(human_tokens(4096), "4K");
  EXPECT_EQ(human_tokens(6663), "6.5K");  // 6663 / 1024 = 6.507
  EXPECT_EQ(human_tokens(512), "512");
  EXPECT_EQ(human_tokens(1073741824), "1G");  // 2^30
  // Round trip: what prints parses back to the same count when it is exact.
  for (std::int64_t n : {1024LL, 131072LL, 1048576LL, 4194304LL})
    EXPECT_EQ(ringsim::parse_count("--context", human_tokens(static_cast<double>(n)), 1, 1LL << 40),
              n);
}

TEST(Units, MemoryPrintsInGiB) {
  // 80e9 B / 2^30 = 74.5058 GiB.
  EXPECT_EQ(ringsim::human_gib(80e9), "74.5 GiB");
  EXPECT_EQ(ringsim::human_bytes(80e9), "74.51 GiB");
  EXPECT_EQ(ringsim::human_bytes(32.0 * 1024 * 1024), "32.00 MiB");
  EXPECT_DOUBLE_EQ(ringsim::to_gib(3.0 * 1024 * 1024 * 1024), 3.0);
}

TEST(Units, PlanPrintsContextAndMemoryInBinaryUnits) {
  const auto out = help_of({"plan", "--model", "llama3-8b", "--context", "128K", "--gpus", "16"});
  // The context typed as 128K prints back as 128K, not "131.1K" (decimal).
  EXPECT_EQ(out.find("131.1K"), std::string::npos) << out;
  EXPECT_EQ(out.find(" GB "), std::string::npos) << out;
  EXPECT_NE(out.find("GiB"), std::string::npos) << out;
}

TEST(CalibrateWorkdir, KeptWheneverThePrintedCommandsReadFromIt) {
  using ringsim::cli::calibrate::WorkdirPolicy;
  // temporary, no --keep, profiles measured into it: the printed commands'
  // --profile paths are there, so it stays (the bug: it was removed).
  const WorkdirPolicy probed{true, false, true};
  EXPECT_FALSE(probed.remove());
  EXPECT_NE(probed.note("/tmp/x").find("/tmp/x kept"), std::string::npos);
  // temporary, --profile FILE given: nothing printed points into the folder.
  const WorkdirPolicy given{true, false, false};
  EXPECT_TRUE(given.remove());
  EXPECT_EQ(given.note("/tmp/x"), "");
  // --keep and --workdir always keep it.
  EXPECT_FALSE((WorkdirPolicy{true, true, false}.remove()));
  EXPECT_FALSE((WorkdirPolicy{false, false, false}.remove()));
}

}  // namespace
