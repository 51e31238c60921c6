// ringsim-mpi's flags, in process: every error names its flag; help exits 0.
#include <gtest/gtest.h>

#include <vector>

#include "models/core/errors.hpp"
#include "mpi/options.hpp"

namespace ringsim::mpi {
namespace {

ParsedArgs parse(std::vector<const char*> args) {
  args.insert(args.begin(), "ringsim-mpi");
  return parse_args(static_cast<int>(args.size()), args.data());
}

TEST(MpiOptions, Defaults) {
  const auto p = parse({});
  EXPECT_FALSE(p.exit_now);
  EXPECT_EQ(p.opts.layout, Layout::Ring);
  EXPECT_TRUE(p.opts.causal);
  EXPECT_EQ(p.opts.pass, Pass::Fwd);
}

TEST(MpiOptions, ParsesEveryFlag) {
  const auto p = parse({"--block",     "1K",         "--heads",  "16",       "--kv-heads",
                        "4",           "--head-dim", "128",      "--layout", "striped",
                        "--no-causal", "--pass",     "fwdbwd",   "--dtype",  "fp64",
                        "--seed",      "9",          "--repeat", "3",        "--warmup",
                        "1",           "--threads",  "2"});
  ASSERT_FALSE(p.exit_now) << p.message;
  EXPECT_EQ(p.opts.threads, 2);
  EXPECT_EQ(p.opts.block, 1024);
  EXPECT_EQ(p.opts.heads, 16);
  EXPECT_EQ(p.opts.kv_heads, 4);
  EXPECT_EQ(p.opts.head_dim, 128);
  EXPECT_EQ(p.opts.layout, Layout::Striped);
  EXPECT_FALSE(p.opts.causal);
  EXPECT_EQ(p.opts.pass, Pass::FwdBwd);
  EXPECT_EQ(p.opts.dtype, "fp64");
  EXPECT_EQ(p.opts.seed, 9u);
  EXPECT_EQ(p.opts.repeat, 3);
  EXPECT_EQ(p.opts.warmup, 1);
}

TEST(MpiOptions, ErrorsNameTheirFlag) {
  struct Bad {
    std::vector<const char*> args;
    const char* flag;
  };
  for (const auto& b : std::vector<Bad>{{{"--block", "0"}, "--block"},
                                        {{"--block", "12x"}, "--block"},
                                        {{"--heads", "8", "--kv-heads", "3"}, "--kv-heads"},
                                        {{"--layout", "ulysses"}, "--layout"},
                                        {{"--pass", "both"}, "--pass"},
                                        {{"--dtype", "bf16"}, "--dtype"},
                                        {{"--q", "a.npy"}, "--q/--k/--v"},
                                        {{"--do", "d.npy"}, "--do"},
                                        {{"--pp-min", "1M", "--pp-max", "1K"}, "--pp-min"},
                                        {{"--repeat", "-1"}, "--repeat"},
                                        {{"--threads", "0"}, "--threads"}}) {
    const auto p = parse(b.args);
    EXPECT_TRUE(p.exit_now);
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_EQ(p.message.find("ringsim-mpi: error: "), 0u) << p.message;
    EXPECT_NE(p.message.find(b.flag), std::string::npos) << p.message;
    EXPECT_EQ(p.message.find('\n'), std::string::npos) << "one line: " << p.message;
  }
}

TEST(MpiOptions, HelpExitsZero) {
  const auto p = parse({"--help"});
  EXPECT_TRUE(p.exit_now);
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_NE(p.message.find("--layout"), std::string::npos);
}

TEST(MpiOptions, ValidateNeedsTheRankCount) {
  RingOptions o;
  o.layout = Layout::Zigzag;
  o.block = 7;
  EXPECT_THROW(validate(o, 4), InputError);
  o.block = 8;
  EXPECT_NO_THROW(validate(o, 4));
  o.check = true;
  o.block = kMaxCheckTokens;
  EXPECT_THROW(validate(o, 2), InputError);  // the reference would need 2 GiB per head
  RingOptions pp;
  pp.pingpong = true;
  EXPECT_THROW(validate(pp, 1), InputError);
}

}  // namespace
}  // namespace ringsim::mpi
