// `--config FILE` (cli/config_file.hpp) and the "schema_version" key of every
// --json output, through the real ringsim binary as a child process.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "proc/child.hpp"

namespace {

ringsim::proc::Result ringsim_run(std::vector<std::string> args) {
  ringsim::proc::Command cmd;
  cmd.argv = {RINGSIM_BIN};
  cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
  cmd.cwd = RINGSIM_CLI_DATA;
  cmd.timeout_s = 110;
  return ringsim::proc::run(cmd);
}

nlohmann::json json_of(const std::vector<std::string>& args) {
  const auto r = ringsim_run(args);
  EXPECT_EQ(r.exit_code, 0) << r.command << "\n" << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

TEST(ConfigFile, EqualsTheFlagsItHolds) {
  const auto a = json_of({"--config", "config-good.toml", "--json"});
  const auto b = json_of({"--devices", "64", "--block", "4K", "--gpu", "h100-sxm", "--engine",
                          "analytic", "--no-causal", "--json"});
  ASSERT_FALSE(a.is_null());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.at("devices"), 64);
  EXPECT_EQ(a.at("block"), 4096);
  EXPECT_EQ(a.at("causal"), false);
}

TEST(ConfigFile, WorksAfterTheSubcommandAndTheCommandLineWins) {
  const auto a = json_of({"run", "--config", "config-good.toml", "--devices", "8", "--json"});
  ASSERT_FALSE(a.is_null());
  EXPECT_EQ(a.at("devices"), 8);   // the command line
  EXPECT_EQ(a.at("block"), 4096);  // the file
  const auto b = json_of({"--config=config-good.toml", "--devices=8", "--json"});
  EXPECT_EQ(a, b);
}

TEST(ConfigFile, BadFilesAreOneLineAndExit2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--config", "nope.toml"}, "ringsim: error: --config: cannot open 'nope.toml'\n"},
      {{"--config", "config-unknown.toml"},
       "ringsim: error: --config config-unknown.toml: unknown key 'blocks' for 'ringsim run'; did "
       "you mean 'block'? a "
       "key is one of its long flags without the dashes (see 'ringsim run --help')\n"},
      {{"--config", "config-section.toml"},
       "ringsim: error: --config config-section.toml: key 'run.devices' is in a section; write "
       "each flag as a top-level key\n"},
  };
  for (const auto& [args, line] : cases) {
    const auto r = ringsim_run(args);
    EXPECT_EQ(r.exit_code, 2) << r.command;
    EXPECT_EQ(r.err, line) << r.command;
    EXPECT_EQ(r.out, "") << r.command;
  }
}

TEST(SchemaVersion, EveryJsonOutputCarriesIt) {
  const std::vector<std::vector<std::string>> commands{
      {"run", "--devices", "8", "--block", "1K", "--json"},
      {"run", "--devices", "8", "--block", "1K", "--engine", "analytic", "--json"},
      {"minblock", "--json"},
      {"sweep", "--devices", "2,4", "--engine", "analytic", "--json"},
      {"hardware", "--json"},
      {"plan", "--gpus", "8", "--context", "32K", "--json"},
      {"plan", "--inference", "--gpus", "8", "--context", "32K", "--json"},
      {"infer", "--gpus", "8", "--context", "16K", "--json"},
      {"verify", "--devices", "4", "--block", "16", "--json"},
      {"experiment", "--list", "--json"},
  };
  for (const auto& c : commands) {
    const auto r = ringsim_run(c);
    ASSERT_EQ(r.exit_code, 0) << r.command << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.is_object()) << r.command;
    EXPECT_EQ(j.value("schema_version", -1), 2) << r.command;
  }
}

}  // namespace
