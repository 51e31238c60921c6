// Job mode (`ringsim run --dp D`): every CP ring of a layer on one platform,
// the binary as a child process (one SimGrid engine per process). Rings that
// share no link take the single ring's time; two rings through one
// oversubscribed cable take the hand-worked shared time.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace ringsim {
namespace {

struct Out {
  int code = -1;
  std::string out, err;
};

Out ringsim(const std::vector<std::string>& args) {
  proc::Command c;
  c.argv = {RINGSIM_BIN};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  const auto r = proc::run(c);
  return {r.exit_code, r.out, r.err};
}

nlohmann::json json_of(std::vector<std::string> args) {
  args.push_back("--json");
  const auto r = ringsim(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

void expect_near_rel(double got, double want, double tol, const std::string& what) {
  EXPECT_LE(std::fabs(got / want - 1), tol) << what << ": got " << got << ", want " << want;
}

TEST(JobCli, RingsThatShareNoLinkTakeTheSingleRingsTime) {
  // 4 rings of 8 CP ranks x TP 2 on DGX H100 nodes (8 nodes): rail-optimised,
  // every ring's node-boundary hop has NICs of its own and the leaf is a
  // crossbar, so no link is shared (FSDP flows off: they would share).
  const std::vector<std::string> base{"run",       "--devices", "8",       "--tp", "2",
                                      "--cluster", "dgx-h100",  "--scope", "layer"};
  auto job_args = base;
  for (const char* a : {"--dp", "4", "--fsdp", "off"}) job_args.push_back(a);
  const auto one = json_of(base);
  const auto job = json_of(job_args);
  const auto& j = job.at("job");
  EXPECT_EQ(j.at("rings").get<int>(), 4);
  EXPECT_EQ(j.at("gpus").get<int>(), 64);
  const double t = one.at("time_s").get<double>();
  ASSERT_EQ(j.at("ring_time_s").size(), 4u);
  for (const auto& x : j.at("ring_time_s")) expect_near_rel(x.get<double>(), t, 1e-12, "ring");
  expect_near_rel(job.at("time_s").get<double>(), t, 1e-12, "job");
  EXPECT_NE(j.at("why").get<std::string>().find("no slower than one ring alone"), std::string::npos)
      << j.at("why");
}

TEST(JobCli, FsdpFlowsShareTheRingsLinks) {
  // The same job with its FSDP all-gathers and reduce-scatter as flows: they
  // cross the same NICs and NVLink ports, so no ring is faster than alone
  // and the collectives take time.
  const auto one = json_of({"run", "--devices", "8", "--tp", "2", "--cluster", "dgx-h100",
                            "--scope", "layer", "--pass", "fwdbwd"});
  const auto job = json_of({"run", "--devices", "8", "--tp", "2", "--cluster", "dgx-h100",
                            "--scope", "layer", "--pass", "fwdbwd", "--dp", "4"});
  const auto& j = job.at("job");
  EXPECT_TRUE(j.at("fsdp").get<bool>());
  EXPECT_GT(j.at("fsdp_s").get<double>(), 0);
  EXPECT_GT(j.at("fsdp_round_bytes").get<double>(), 0);
  for (const auto& x : j.at("ring_time_s"))
    EXPECT_GE(x.get<double>(), one.at("time_s").get<double>() * (1 - 1e-12));
  EXPECT_FALSE(j.at("hottest_links").empty());
}

// FSDP alone on its links: rings of one rank (no ring transfers), 12 of them
// on a flat ring of 1e10 B/s, 1 us links. llama3-8b's layer is 218,112,000
// parameters (4096 x 6144 QKV + 4096 x 4096 O + 3 x 4096 x 14336 MLP + two
// norms), so a round's share is 218,112,000 / 12 x 2 B = 36,352,000 B (bf16
// weights), twice that for the fp32 reduce-scatter. A ring collective of 12
// ranks is 11 rounds of share / B + L, whether played round by round or as
// the simulator's staged flows: forward one all-gather, backward an
// all-gather and a reduce-scatter.
TEST(JobCli, FsdpCollectivesTakeTheRingCollectivesTimeByHand) {
  const auto job =
      json_of({"run", "--devices", "1", "--dp", "12", "--platform", "flat", "--bandwidth", "1e10",
               "--latency", "1e-6", "--scope", "layer", "--pass", "fwdbwd"});
  const auto& j = job.at("job");
  const double ag = 36352000, rs = 2 * ag, B = 1e10, L = 1e-6;
  EXPECT_EQ(j.at("fsdp_round_bytes").get<double>(), ag);
  expect_near_rel(j.at("fsdp_s").get<double>(), 2 * 11 * (ag / B + L) + 11 * (rs / B + L), 1e-12,
                  "fsdp");
  // The collectives outlast the ranks' own compute: they set the time.
  expect_near_rel(job.at("time_s").get<double>(), j.at("fsdp_s").get<double>(), 1e-12, "time");
  // ... and the summary names the link that paces them (every ring link alike
  // full: the first).
  const auto why = j.at("why").get<std::string>();
  EXPECT_NE(why.find("FSDP collectives take"), std::string::npos) << why;
  EXPECT_NE(why.find("ring0 up, peaks at 100%"), std::string::npos) << why;
}

// Two rings of 48 devices on a fat tree of 32-port leaves, spine cables
// oversubscribed 2:1, llama3-8b, block 4096, non-causal forward: a transfer
// is S = 2 x 4096 x 8 x 128 x 2 B = 16 MiB, a step's compute 274.877906944 us
// at 1e15 FLOP/s. Static routing picks the spine by the destination's port:
// ring 0's closing hop 47 -> 0 and ring 1's hop 63 -> 64 both leave leaf 1
// for spine 0 (destination port 0), so they share cable leaf1-spine0 (up),
// B/2 = 5e9 B/s, at 2.5e9 each. Comm-bound, each ring takes (N - 1) x S / rate + step.
TEST(JobCli, TwoRingsThroughOneOversubscribedCableAreSlower) {
  const std::vector<std::string> base{"run",
                                      "--devices",
                                      "48",
                                      "--block",
                                      "4096",
                                      "--no-causal",
                                      "--platform",
                                      "fattree",
                                      "--bandwidth",
                                      "1e10",
                                      "--latency",
                                      "0",
                                      "--flops",
                                      "1e15",
                                      "--efficiency",
                                      "1",
                                      "--oversubscription",
                                      "2"};
  auto job_args = base;
  for (const char* a : {"--dp", "2"}) job_args.push_back(a);
  const double S = 16777216, step = 274.877906944e-6;
  const double alone = 47 * S / 5e9 + step, shared = 47 * S / 2.5e9 + step;
  const auto one = json_of(base);
  expect_near_rel(one.at("time_s").get<double>(), alone, 1e-9, "one ring");
  const auto job = json_of(job_args);
  const auto& j = job.at("job");
  for (const auto& x : j.at("ring_time_s")) expect_near_rel(x.get<double>(), shared, 1e-9, "ring");
  // The closed form of one ring alone is the analytic column of both runs (it
  // leaves this oversubscribed cable out: 47 x S/B + step).
  expect_near_rel(j.at("ring_alone_s").get<double>(), one.at("analytic_time_s").get<double>(),
                  1e-12, "closed form");
  EXPECT_EQ(j.at("hottest_links").at(0).at("link").get<std::string>(), "leaf1-spine0 up");
  EXPECT_NEAR(j.at("hottest_links").at(0).at("peak_utilisation").get<double>(), 1.0, 1e-6);
  EXPECT_EQ(j.at("slowest_ring_link").get<std::string>(), "leaf1-spine0 up");
  EXPECT_NE(j.at("why").get<std::string>().find("leaf1-spine0 up"), std::string::npos) << j["why"];
}

TEST(JobCli, AStragglerSlowsItsOwnRing) {
  // --straggler names a device of the whole job: device 11 is rank 3 of ring 1
  // (non-causal: every rank computes alike, so any straggler paces its ring).
  const auto job = json_of({"run", "--devices", "8", "--dp", "3", "--cluster", "dgx-h100",
                            "--no-causal", "--straggler", "11:2"});
  const auto& j = job.at("job");
  EXPECT_EQ(j.at("slowest_ring").get<int>(), 1);
  const auto t = j.at("ring_time_s").get<std::vector<double>>();
  EXPECT_GT(t[1], t[0] * 1.5);
  EXPECT_DOUBLE_EQ(t[0], t[2]);
  EXPECT_NE(j.at("why").get<std::string>().find("device 11 (rank 3)"), std::string::npos)
      << j["why"];
}

TEST(JobCli, BadJobFlagsSayWhatIsAllowed) {
  for (const auto& [args, flag] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--devices", "8", "--dp", "2", "--layout", "ulysses"}, "--dp: job mode runs the ring"},
           {{"--devices", "8", "--fsdp", "on"}, "--fsdp: only applies to job mode"},
           {{"--devices", "8", "--dp", "2", "--fsdp", "on"}, "--fsdp: the FSDP flows"},
           {{"--devices", "8", "--dp", "0"}, "--dp"},
           {{"--devices", "8", "--dp", "2", "--symmetry", "on"}, "--symmetry: job mode"},
           {{"--devices", "8", "--straggler", "8:2"}, "--straggler"}}) {
    auto a = args;
    a.insert(a.begin(), "run");
    const auto r = ringsim(a);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace ringsim
