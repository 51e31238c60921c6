// Pipeline parallelism in the planner: the 1F1B and interleaved bubble, the
// microbatches in flight, the layer split (Llama 3 405B's 7 + 14 x 8 + 7),
// P2P seconds inside a node and across the NIC, per-stage memory (first,
// middle, last stage) counted by hand, the shape rules, and the done-when
// 405B config through the command line.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "helpers.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"
#include "models/plan/pipeline.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::items;
using plan_testing::request;
using plan_testing::tiny_shape;

TEST(PlanPipeline, BubbleByHand) {
  // 1F1B, p 4, m 8: (p-1)/(m+p-1) = 3/11 (Narayanan et al. 2021 sec. 2.2.1).
  EXPECT_DOUBLE_EQ(bubble_fraction(4, 1, 8), 3.0 / 11);
  EXPECT_DOUBLE_EQ(schedule_slots(4, 1, 8), 11);
  // Interleaved, V 2: the bubble is (p-1)/V = 1.5 slots of 8 + 1.5 = 9.5: 3/19.
  EXPECT_DOUBLE_EQ(schedule_slots(4, 2, 8), 9.5);
  EXPECT_DOUBLE_EQ(bubble_fraction(4, 2, 8), 1.5 / 9.5);
  // No pipeline, no bubble.
  EXPECT_DOUBLE_EQ(bubble_fraction(1, 1, 8), 0);
}

TEST(PlanPipeline, MicrobatchesInFlightByHand) {
  // 1F1B: stage i holds p - i (Megatron's p - i - 1 warm-up forwards + 1), at most m.
  EXPECT_DOUBLE_EQ(in_flight_microbatches(4, 1, 8, 0), 4);
  EXPECT_DOUBLE_EQ(in_flight_microbatches(4, 1, 8, 1), 3);
  EXPECT_DOUBLE_EQ(in_flight_microbatches(4, 1, 8, 3), 1);
  EXPECT_DOUBLE_EQ(in_flight_microbatches(4, 1, 2, 0), 2);
  // Interleaved, p 4, V 2, stage 0: 2 x 3 + 1 x 4 + 1 = 11 chunks of 1/2 a
  // stage = 5.5 = p (1 + (p-1)/(p V)) = 4 x (1 + 3/8) (sec. 2.2.2).
  EXPECT_DOUBLE_EQ(in_flight_microbatches(4, 2, 8, 0), 5.5);
  // Stage 3: 0 + 4 + 1 = 5 chunks = 2.5.
  EXPECT_DOUBLE_EQ(in_flight_microbatches(4, 2, 8, 3), 2.5);
}

TEST(PlanPipeline, Llama3_405BSplitsAsThePaperDoes) {
  // 126 layers over 16 stages: floor 7, the 14 extra layers to the middle
  // stages, the first and last keep 7 (Llama 3 paper sec. 3.3.2). The head is
  // 6 D V / (6 x layer params + 6 H d S) = 12.61 / 32.01 GFLOP = 0.39 layers.
  const auto s = find_model("--model", "llama3-405b");
  EXPECT_NEAR(head_layer_equivalents(s, 131072, true), 12608077824.0 / 32011124736.0, 1e-12);
  std::vector<int> want(16, 8);
  want.front() = want.back() = 7;
  EXPECT_EQ(split_layers(s, 131072, true, 16), want);
  EXPECT_EQ(layers_text(want), "7, 8 x14, 7");
}

TEST(PlanPipeline, SplitMovesLayersOffAHeavyLastStage) {
  auto s = tiny_shape();
  s.layers = 10;
  // Small head (0.62 layers): 2 each, the 2 extra layers to middle stages.
  EXPECT_EQ(split_layers(s, 1024, true, 4), (std::vector<int>{2, 3, 3, 2}));
  // Vocabulary 32000: the head is 6 x 64 x 32000 / (6 x 36992 + 12 x 4 x 16 x
  // 512) = 12.3M / 0.615M = 20 layers, so the last stage sheds layers.
  s.layers = 8;
  s.vocab = 32000;
  EXPECT_EQ(split_layers(s, 1024, true, 4), (std::vector<int>{2, 3, 2, 1}));
  // Llama 3 8B at 8K, pp 2: the head is 3.152 / 1.510 GFLOP = 2.09 layers.
  // 16 + 16 -> 17 + 15 (loads 17, 17.09); one more would make the first 18.
  const auto b = find_model("--model", "llama3-8b");
  EXPECT_EQ(split_layers(b, 8192, true, 2), (std::vector<int>{17, 15}));
  // Interleaved V 2 moves pairs of layers: 8 + 8 pairs (head 1.04 pairs) -> 9 + 7.
  EXPECT_EQ(split_layers(b, 8192, true, 2, 2), (std::vector<int>{18, 14}));
}

TEST(PlanPipeline, P2PSecondsInsideANode) {
  // tp 2 x cp 1 x pp 4 = 8 ranks: the whole pipeline on one node's NVLink 4.
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 8192, 64);
  const auto x = pipeline_p2p(r, hw, 1, 2, 8192, 1, 4);
  // 8192 tokens x 4096 x 2 B / tp 2 = 33,554,432 B; / 450 GB/s + 2 us.
  EXPECT_DOUBLE_EQ(x.message_bytes, 33554432);
  EXPECT_FALSE(x.inter_node);
  EXPECT_EQ(x.link, hw.intra_name);
  EXPECT_NEAR(x.message_s, 33554432 / 450e9 + 2e-6, 1e-12);
}

TEST(PlanPipeline, P2PSecondsAcrossTheNic) {
  // tp 8: each stage fills a node, so neighbours talk over InfiniBand NDR.
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 8192, 64);
  const auto x = pipeline_p2p(r, hw, 1, 8, 8192, 1, 2);
  // 8192 x 4096 x 2 / 8 = 8,388,608 B; / 50 GB/s + 3 us.
  EXPECT_DOUBLE_EQ(x.message_bytes, 8388608);
  EXPECT_TRUE(x.inter_node);
  EXPECT_EQ(x.link, hw.inter_name);
  EXPECT_NEAR(x.message_s, 8388608 / 50e9 + 3e-6, 1e-12);
}

TEST(PlanPipeline, StepIsMicrobatchesPlusBubblePlusP2P) {
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 8192, 64);
  const RooflineModel roofline(hw.effective_flops());
  const auto cm = bare_implementation(roofline);
  // tp 8, pp 2, dp 4; default m = pp = 2 microbatches of one sequence.
  const auto c = evaluate(r, hw, cm, Layout::Ring, 1, 8, 1, std::nullopt, false, {2, 1});
  ASSERT_TRUE(c.feasible) << c.reason();
  EXPECT_EQ(c.grad_accum, 2);
  EXPECT_EQ(c.dp, 4);
  const auto& t = c.time;
  // Bubble (p-1)/V = 1 slot of the slowest stage's microbatch: 1/3 of 3 slots.
  EXPECT_DOUBLE_EQ(t.pp_bubble_s, t.micro_step_s);
  EXPECT_DOUBLE_EQ(t.pp_bubble_fraction, 1.0 / 3);
  // P2P: 3 slots x 2 messages of 8,388,608 B on IB NDR.
  EXPECT_NEAR(t.pp_p2p_s, 3 * 2 * (8388608 / 50e9 + 3e-6), 1e-12);
  // FSDP under PP gathers once per step: its exposed edges join the step once.
  EXPECT_GT(t.dp_step_exposed_s, 0);
  EXPECT_NEAR(t.step_time_s,
              2 * t.micro_step_s + t.pp_bubble_s + t.pp_p2p_s + t.optimizer_s + t.dp_step_exposed_s,
              1e-12 * t.step_time_s);
  // Evaluated again from the config (as a re-check does): the same pipeline.
  const auto again = evaluate(r, hw, cm, c, std::nullopt);
  EXPECT_EQ(again.pp, 2);
  EXPECT_DOUBLE_EQ(again.time.step_time_s, t.step_time_s);
  // Interleaving (V 2, 16 layers per stage) halves the bubble and doubles the messages.
  const auto v = evaluate(r, hw, cm, Layout::Ring, 1, 8, 1, std::nullopt, false, {2, 2});
  ASSERT_TRUE(v.feasible) << v.reason();
  EXPECT_DOUBLE_EQ(v.time.pp_bubble_s, 0.5 * v.time.micro_step_s);
  EXPECT_NEAR(v.time.pp_p2p_s, 2.5 * 4 * (8388608 / 50e9 + 3e-6), 1e-12);
}

TEST(PlanPipeline, DistributedOptimizerOverlapOrExposed) {
  // Megatron's distributed optimizer: its reduce-scatter and all-gather hide
  // behind the last and first microbatch (--dp-overlap on, the default) or,
  // off, sit whole on the step's path; the step grows by exactly the hidden part.
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 8192, 64);
  r.framework = Framework::Megatron;
  const RooflineModel roofline(hw.effective_flops());
  const auto cm = bare_implementation(roofline);
  const auto on = evaluate(r, hw, cm, Layout::Ring, 1, 8, 1, std::nullopt, false, {2, 1});
  r.dp_overlap = false;
  const auto off = evaluate(r, hw, cm, Layout::Ring, 1, 8, 1, std::nullopt, false, {2, 1});
  ASSERT_TRUE(on.feasible && off.feasible);
  ASSERT_GT(on.time.dp_step_comm_s, 0);
  EXPECT_DOUBLE_EQ(off.time.dp_step_comm_s, on.time.dp_step_comm_s);
  EXPECT_DOUBLE_EQ(off.time.dp_step_exposed_s, off.time.dp_step_comm_s);
  EXPECT_LT(on.time.dp_step_exposed_s, on.time.dp_step_comm_s);
  EXPECT_NEAR(off.time.step_time_first_principles_s - on.time.step_time_first_principles_s,
              off.time.dp_step_exposed_s - on.time.dp_step_exposed_s, 1e-12 * off.time.step_time_s);
}

TEST(PlanPipeline, FsdpUnderPipelineGathersOncePerStep) {
  // TorchTitan under PP keeps a stage gathered across microbatches and
  // reduce-scatters once after the last (framework.hpp): the FSDP link time
  // is the same at 2 and at 8 microbatches, and equals one all-gather of the
  // stage plus one reduce-scatter of its fp32 gradients.
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 8192, 64);
  const RooflineModel roofline(hw.effective_flops());
  const auto cm = bare_implementation(roofline);
  auto at = [&](std::int64_t m) {
    r.microbatches = m;
    const auto c = evaluate(r, hw, cm, Layout::Ring, 1, 8, 1, std::nullopt, false, {2, 1});
    EXPECT_TRUE(c.feasible) << c.reason();
    return c;
  };
  const auto two = at(2), eight = at(8);
  EXPECT_EQ(eight.grad_accum, 8);
  EXPECT_GT(two.time.dp_step_comm_s, 0);
  EXPECT_DOUBLE_EQ(two.time.dp_step_comm_s, eight.time.dp_step_comm_s);
  EXPECT_DOUBLE_EQ(two.time.fsdp_comm_s, two.time.dp_step_comm_s);
  EXPECT_DOUBLE_EQ(eight.time.fsdp_comm_s, eight.time.dp_step_comm_s);
  // The first all-gather and the last reduce-scatter have nothing to hide behind.
  EXPECT_GT(two.time.edges_s, 0);
  EXPECT_GE(two.time.dp_step_exposed_s, two.time.edges_s);
}

TEST(PlanPipeline, StageMemoryFirstMiddleLastByHand) {
  // Tiny model, 4 layers over pp 4 (one each), 8 devices (2 per stage), cp 2:
  // 512 tokens per device, m 4 microbatches.
  const auto hw = hardware("h100-sxm");
  auto s = tiny_shape();
  s.layers = 4;
  auto r = request(s, 1024, 8);
  const std::vector<int> layers{1, 1, 1, 1};
  const PipelineChoice pc{4, 1};
  auto stage = [&](std::int64_t i) {
    const auto v = stage_view(r, layers, pc, 4, i);
    return items(training_memory(r, hw, Layout::Ring, 2, 1, 1, &v));
  };
  const auto first = stage(0), middle = stage(1), last = stage(3);
  // First: 36992 + embedding 64000 = 100,992 params over 2 devices, FSDP2's
  // 4 + 8 B each sharded; under PP the stage stays gathered (bf16) and
  // accumulates unsharded fp32 gradients (TorchTitan's default with PP).
  EXPECT_DOUBLE_EQ(first.at("params_fp32_shard"), 4 * 100992 / 2.0);
  EXPECT_DOUBLE_EQ(first.at("optimizer_m_v_fp32"), 8 * 100992 / 2.0);
  EXPECT_DOUBLE_EQ(first.at("fsdp_gathered_params"), 2 * 100992.0);
  EXPECT_DOUBLE_EQ(first.at("fsdp_accumulated_grads_fp32"), 4 * 100992.0);
  EXPECT_DOUBLE_EQ(first.at("activations_layer_inputs"), 128 * 512 * 4.0);  // 4 in flight
  EXPECT_EQ(first.count("logits_and_loss_fp32"), 0u);
  // Middle (stage 1): one layer, 3 microbatches in flight.
  EXPECT_DOUBLE_EQ(middle.at("params_fp32_shard"), 4 * 36992 / 2.0);
  EXPECT_DOUBLE_EQ(middle.at("fsdp_gathered_params"), 2 * 36992.0);
  EXPECT_DOUBLE_EQ(middle.at("activations_layer_inputs"), 128 * 512 * 3.0);
  EXPECT_EQ(middle.count("logits_and_loss_fp32"), 0u);
  // Last: layer + head 64000 + final norm 64 = 101,056 params; one in flight; the loss.
  EXPECT_DOUBLE_EQ(last.at("params_fp32_shard"), 4 * 101056 / 2.0);
  EXPECT_DOUBLE_EQ(last.at("activations_layer_inputs"), 128 * 512 * 1.0);
  EXPECT_DOUBLE_EQ(last.at("logits_and_loss_fp32"), 12 * 512 * 1000.0);
  // A Megatron stage keeps its bf16 params and grads over the tp shards, no FSDP units.
  r.framework = Framework::Megatron;
  const auto mg = stage(1);
  EXPECT_DOUBLE_EQ(mg.at("params_bf16"), 2 * 36992.0);
  EXPECT_EQ(mg.count("fsdp_gathered_params"), 0u);
  r.framework = Framework::PytorchFsdp;
  // The worst stage is the last (its 6.1 MB of logits), and is named.
  const auto worst = pipeline_memory(r, hw, Layout::Ring, 2, 1, 1, layers, pc, 4);
  EXPECT_EQ(worst.stage, 3);
}

TEST(PlanPipeline, ShapeRulesAndBadRequests) {
  const auto hw = hardware("h100-sxm");
  const RooflineModel roofline(hw.effective_flops());
  const auto cm = bare_implementation(roofline);
  auto r = request(find_model("--model", "llama3-8b"), 8192, 16);
  r.pp_degrees = {3};
  try {
    search(r, hw, cm);
    ADD_FAILURE() << "--pp 3 on 16 devices";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--pp: must divide --gpus (16), got 3");
  }
  r.gpus = 64;
  r.pp_degrees = {64};
  EXPECT_THROW(search(r, hw, cm), InputError);  // 64 stages > 32 layers
  r.pp_degrees = {4};
  r.pp_virtual = 2;
  r.microbatches = 6;
  try {
    search(r, hw, cm);
    ADD_FAILURE() << "interleaved with m % p != 0";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--pp-virtual:", 0), 0u) << e.what();
  }
  // The same rule per config when m comes from the global batch: 6 per replica.
  r.microbatches = 0;
  r.gpus = 16;
  r.global_batch_tokens = 8192 * 12;  // 12 sequences over dp 2 (tp 2 x pp 4)
  const auto c = evaluate(r, hw, cm, Layout::Ring, 1, 2, 1, std::nullopt, false, {4, 2});
  EXPECT_EQ(c.why.kind, Infeasibility::Kind::Rule);
  EXPECT_NE(c.reason().find("multiple of pp (4)"), std::string::npos) << c.reason();
  // Llama 3 405B: 126 layers are 63 pairs, so V 2 splits in pairs (6 or 8
  // per stage); 126 is not a multiple of 4, so the balanced split of V 4
  // falls back to 7, 8 x14, 7, whose stages do not divide into 4 virtual
  // stages: the automatic layout then counts the embedding and the loss as
  // layers (128 = 16 stages x 4 chunks x 2), Megatron's way.
  auto big = request(find_model("--model", "llama3-405b"), 131072, 16384);
  const auto v2 = evaluate(big, hw, cm, Layout::Zigzag, 16, 8, 1, std::nullopt, false, {16, 2});
  EXPECT_NE(v2.why.kind, Infeasibility::Kind::Rule) << v2.reason();
  for (int n : v2.stage_layers) EXPECT_EQ(n % 2, 0);
  const auto v4 = evaluate(big, hw, cm, Layout::Zigzag, 16, 8, 1, std::nullopt, false, {16, 4});
  EXPECT_NE(v4.why.kind, Infeasibility::Kind::Rule) << v4.reason();
  EXPECT_EQ(v4.pp_layout, "embedding-loss");
  EXPECT_EQ(layers_text(v4.stage_layers), "7, 8 x14, 7");
  big.pp_layout = PipelineLayout::Balanced;
  const auto b4 = evaluate(big, hw, cm, Layout::Zigzag, 16, 8, 1, std::nullopt, false, {16, 4});
  EXPECT_NE(b4.reason().find("(7, 8 x14, 7) divisible by pp-virtual 4"), std::string::npos)
      << b4.reason();
}

using plan_testing::run_cli;

TEST(PlanPipeline, Llama3_405BAt128KOn16384H100Fits) {
  // Llama 3's 128K stage (TP 8, CP 16, PP 16, DP 8) under 1F1B, as it ran.
  const auto r = run_cli({"plan", "--model", "llama3-405b", "--context", "128K", "--gpus", "16384",
                          "--gpu", "h100-sxm", "--tp", "8", "--cp", "16", "--pp", "16",
                          "--pp-schedule", "1f1b", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j.at("configs").at(0);
  ASSERT_TRUE(c.at("feasible").get<bool>()) << c.dump();
  EXPECT_EQ(c.at("pp"), 16);
  EXPECT_EQ(c.at("pp_virtual"), 1);
  EXPECT_EQ(c.at("microbatches"), 16);  // m = pp by default
  EXPECT_EQ(c.at("dp"), 8);
  EXPECT_LT(c.at("memory_bytes_per_device").get<double>(), 80e9);
  // Stage 1: 8 layers x 15 microbatches in flight of layer inputs outweigh
  // stage 0's 7 x 16 (the balancing gave the first stage one layer less).
  EXPECT_EQ(c.at("memory_worst_stage"), 1);
  const auto& t = c.at("time_breakdown");
  EXPECT_GT(t.at("pp_bubble_s").get<double>(), 0);
  EXPECT_GT(t.at("pp_p2p_s").get<double>(), 0);
  EXPECT_DOUBLE_EQ(t.at("pp_bubble_fraction").get<double>(), 15.0 / 31);
  // 8192 tokens x 16384 x 2 B / tp 8 per message, across the NIC.
  EXPECT_EQ(c.at("pipeline").at("message_bytes"), 33554432);
  const auto text = run_cli({"plan", "--model", "llama3-405b", "--context", "128K", "--gpus",
                             "16384", "--gpu", "h100-sxm", "--tp", "8", "--cp", "16", "--pp", "16",
                             "--pp-schedule", "1f1b", "--explain"});
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* s : {"pp 16", "pipeline bubble", "pipeline P2P", "7, 8 x14, 7",
                        "worst stage, stage 1", "16 microbatches"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
}

TEST(PlanPipeline, BadPipelineFlagsAreOneLineAndExit2) {
  const plan_testing::Refusals cases{
      {{"plan", "--gpus", "16", "--context", "128K", "--pp", "3"}, "--pp: must divide"},
      {{"plan", "--gpus", "64", "--context", "128K", "--pp", "64"}, "--pp: at most"},
      {{"plan", "--gpus", "16", "--context", "128K", "--pp", "x"}, "--pp:"},
      {{"plan", "--gpus", "16", "--context", "128K", "--pp", "4", "--pp-virtual", "2",
        "--microbatches", "6"},
       "--pp-virtual: interleaved"},
      // PP is searched by default; with it fixed off, interleaving has no stages.
      {{"plan", "--gpus", "16", "--context", "128K", "--pp", "1", "--pp-virtual", "2"},
       "--pp-virtual:"},
      {{"plan", "--gpus", "16", "--context", "128K", "--microbatches", "0"}, "--microbatches:"},
  };
  plan_testing::expect_refused_with_one_line(cases);
}

}  // namespace
}  // namespace ringsim
