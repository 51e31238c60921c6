// Uncertainty (models/plan/uncertainty.hpp, catalog "<field>_range" keys):
// every assumed catalog number has a range that holds its value; the
// assumptions behind a resolved hardware; low/high re-evaluations that
// bracket the nominal step, sorted by swing; and `ringsim plan --explain`.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "helpers.hpp"
#include "models/core/errors.hpp"
#include "models/plan/uncertainty.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::request;

bool assumed(const std::string& source) {
  return source.rfind("assumption:", 0) == 0;
}

const Assumption* find(const std::vector<Assumption>& as, const std::string& what) {
  for (const auto& a : as)
    if (a.what == what) return &a;
  return nullptr;
}

TEST(PlanUncertainty, EveryAssumedCatalogNumberHasARangeHoldingIt) {
  const auto& cat = Catalog::embedded();
  int ranges = 0;
  for (const auto& d : cat.devices()) {
    const std::pair<const char*, const std::string*> fields[] = {
        {"gemm_efficiency", &d.gemm_source}, {"attention_efficiency", &d.efficiency_source}};
    for (const auto& [field, source] : fields) {
      const auto* a = find(d.assumptions, d.name + " " + field);
      EXPECT_EQ(a != nullptr, assumed(*source)) << d.name << " " << field;
      if (!a) continue;
      ++ranges;
      EXPECT_LE(a->low, a->value);
      EXPECT_GE(a->high, a->value);
      EXPECT_LT(a->low, a->high);
      EXPECT_FALSE(a->range_source.empty());
      EXPECT_EQ(a->source, *source);
    }
  }
  for (const auto& n : cat.interconnects()) {
    const auto* a = find(n.assumptions, n.name + " latency");
    EXPECT_EQ(a != nullptr, assumed(n.latency_source)) << n.name;
    if (!a) continue;
    ++ranges;
    EXPECT_DOUBLE_EQ(a->value, n.latency);
    EXPECT_LE(a->low, a->value);
    EXPECT_GE(a->high, a->value);
  }
  // mi300x, b200, gb200: attention (their GEMM rates are measured); 4 TPUs'
  // attention and 3 TPUs' GEMM (v5e's is measured); 16 links (with
  // gtt-roce-400g).
  EXPECT_EQ(ranges, 1 + 1 + 1 + 4 + 3 + 16);
  // The values typed in models/data/catalog.json (NCCL tuning.cc's NVLink ring hop 0.6-3.4 us).
  const auto* nv = find(cat.interconnect("nvlink4").assumptions, "nvlink4 latency");
  ASSERT_NE(nv, nullptr);
  EXPECT_DOUBLE_EQ(nv->low, 0.6e-6);
  EXPECT_DOUBLE_EQ(nv->high, 3.4e-6);
  const auto* g = find(cat.device("tpu-v5p").assumptions, "tpu-v5p gemm_efficiency");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(g->value, 0.923);  // carried over from v5e's measurement
  EXPECT_DOUBLE_EQ(g->low, 0.6);
  EXPECT_DOUBLE_EQ(g->high, 0.95);
  EXPECT_EQ(find(cat.device("tpu-v5e").assumptions, "tpu-v5e gemm_efficiency"), nullptr);
}

std::string device_with(const std::string& extra, const std::string& gemm_source) {
  return R"({"devices": [{"name": "x1", "peak_flops": {"bf16": 1e15, "fp16": 0, "fp32": 0}, "hbm_bytes": 8e10,
    "hbm_bandwidth": 3e12, "attention_efficiency": 0.5, "gemm_efficiency": 0.6,
    "gemm_source": ")" +
         gemm_source + R"(", "source": "test", "efficiency_source": "test")" + extra + "}]}";
}

TEST(PlanUncertainty, RangeKeysAreCheckedWhenMerged) {
  Catalog cat = Catalog::embedded();
  cat.merge_json_text(
      device_with(R"(, "gemm_efficiency_range": [0.4, 0.8], "gemm_efficiency_range_source": "why")",
                  "assumption: test"),
      "test");
  const auto* a = find(cat.device("x1").assumptions, "x1 gemm_efficiency");
  ASSERT_NE(a, nullptr);
  EXPECT_DOUBLE_EQ(a->low, 0.4);
  EXPECT_DOUBLE_EQ(a->high, 0.8);
  EXPECT_EQ(a->range_source, "why");
  const std::pair<std::string, std::string> bad[] = {
      {R"(, "gemm_efficiency_range": [0.7, 0.8], "gemm_efficiency_range_source": "w")",
       "assumption: t"},  // does not hold 0.6
      {R"(, "gemm_efficiency_range": [0.4], "gemm_efficiency_range_source": "w")",
       "assumption: t"},  // not [low, high]
      {R"(, "gemm_efficiency_range": [0.4, 2], "gemm_efficiency_range_source": "w")",
       "assumption: t"},                                              // above 1
      {R"(, "gemm_efficiency_range": [0.4, 0.8])", "assumption: t"},  // no reason
      {R"(, "gemm_efficiency_range": [0.4, 0.8], "gemm_efficiency_range_source": "w")",
       "a datasheet"}};  // a range only for an assumed number
  for (const auto& [extra, source] : bad) {
    Catalog c = Catalog::embedded();
    EXPECT_THROW(c.merge_json_text(device_with(extra, source), "test"), InputError) << extra;
  }
}

TEST(PlanUncertainty, AssumptionsBehindAResolvedHardware) {
  const auto& cat = Catalog::embedded();
  // H100's efficiencies are published; its links' latencies are not.
  auto h = cat.assumptions(hardware("h100-sxm"));
  ASSERT_EQ(h.size(), 2u);
  EXPECT_TRUE(find(h, "nvlink4 latency"));
  EXPECT_TRUE(find(h, "ib-ndr latency"));
  const auto m = cat.assumptions(hardware("mi300x"));
  // Its GEMM rate is measured (the MAMF table); its attention rate is not.
  for (const char* w : {"mi300x attention_efficiency", "xgmi-mi300x latency", "roce-400g latency"})
    EXPECT_TRUE(find(m, w)) << w;
  EXPECT_EQ(m.size(), 3u);
  // TPU v4: one ICI link serves as intra and inter, listed once.
  EXPECT_EQ(cat.assumptions(hardware("tpu-v4")).size(), 3u);
  // A flag that replaces the number removes its assumption.
  proc::HardwareSpec f;
  f.gpu = "h100-sxm";
  f.latency = 5e-6;
  EXPECT_TRUE(cat.assumptions(proc::resolve_hardware(f, cat, DType::BF16)).empty());
  f = {};
  f.gpu = "mi300x";
  f.efficiency = 0.5;
  EXPECT_FALSE(find(cat.assumptions(proc::resolve_hardware(f, cat, DType::BF16)),
                    "mi300x attention_efficiency"));
}

TEST(PlanUncertainty, WithAssumptionSetsOneField) {
  const auto hw = hardware("tpu-v4");
  const auto as = Catalog::embedded().assumptions(hw);
  const auto* lat = find(as, "ici-v4 latency");
  ASSERT_NE(lat, nullptr);
  const auto h = with_assumption(hw, *lat, 7e-6);
  EXPECT_EQ(h.intra_lat, 7e-6);  // ici-v4 is both links
  EXPECT_EQ(h.inter_lat, 7e-6);
  EXPECT_EQ(h.gemm_efficiency, hw.gemm_efficiency);
  const auto g = with_assumption(hw, *find(as, "tpu-v4 gemm_efficiency"), 0.5);
  EXPECT_EQ(g.gemm_efficiency, 0.5);
  EXPECT_EQ(g.efficiency, hw.efficiency);
  EXPECT_EQ(g.intra_lat, hw.intra_lat);
}

ImplementationFor catalog_implementation() {
  return [](const Hardware& h) {
    return make_implementation(Catalog::embedded(), h, DType::BF16, {});
  };
}

// Llama 3 8B at 128K on 64 devices: the planner's first config, re-evaluated.
std::vector<UncertaintyRow> rows_for(const std::string& gpu, PlanConfig* best) {
  const auto hw = hardware(gpu);
  const auto r = request(find_model("--model", "llama3-8b"), 128 * 1024, 64);
  const auto cm = catalog_implementation()(hw);
  const auto cs = search(r, hw, *cm);
  EXPECT_TRUE(cs.front().feasible);
  *best = cs.front();
  return step_time_uncertainty(r, hw, *best, Catalog::embedded().assumptions(hw),
                               catalog_implementation());
}

TEST(PlanUncertainty, LowAndHighBracketTheNominalStepSortedBySwing) {
  for (const char* gpu : {"h100-sxm", "mi300x", "b200", "tpu-v5p"}) {
    PlanConfig best;
    const auto rows = rows_for(gpu, &best);
    ASSERT_FALSE(rows.empty()) << gpu;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& x = rows[i];
      EXPECT_EQ(x.step_time_s, best.time.step_time_s);
      EXPECT_LE(std::min(x.step_time_s_low, x.step_time_s_high), x.step_time_s * (1 + 1e-12))
          << gpu << " " << x.assumption.what;
      EXPECT_GE(std::max(x.step_time_s_low, x.step_time_s_high), x.step_time_s * (1 - 1e-12))
          << gpu << " " << x.assumption.what;
      if (i > 0) {
        EXPECT_GE(rows[i - 1].swing(), x.swing()) << gpu;
      }
      // A slower link never speeds the step up; a higher efficiency never slows it.
      if (x.assumption.field == "latency") {
        EXPECT_GE(x.step_time_s_high, x.step_time_s_low) << gpu;
      } else {
        EXPECT_LE(x.step_time_s_high, x.step_time_s_low) << gpu;
      }
    }
  }
}

TEST(PlanUncertainty, TpuGemmEfficiencyMovesTheStep) {
  PlanConfig best;
  const auto rows = rows_for("tpu-v5p", &best);
  const UncertaintyRow* g = nullptr;
  for (const auto& x : rows)
    if (x.assumption.what == "tpu-v5p gemm_efficiency") g = &x;
  ASSERT_NE(g, nullptr);
  // 0.33 of peak is slower than the 0.60 prior, 0.869 faster: strictly.
  EXPECT_GT(g->step_time_s_low, best.time.step_time_s);
  EXPECT_LT(g->step_time_s_high, best.time.step_time_s);
  // Only the matmuls move: the change is at most the matmul time scaled by 0.60/0.33.
  const double matmuls = best.time.other_compute_s + best.time.head_s;
  EXPECT_LE(g->step_time_s_low - best.time.step_time_s, matmuls * (0.60 / 0.33 - 1) * (1 + 1e-9));
}

// ---- through the CLI ----

using plan_testing::run_cli;

std::vector<std::string> plan_on(const std::string& gpu, std::vector<std::string> more) {
  std::vector<std::string> a{"plan",   "--model", "llama3-8b", "--context", "128K",
                             "--gpus", "64",      "--gpu",     gpu};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(PlanUncertaintyCli, ExplainNamesTheAssumptionsLargestFirst) {
  const auto r = run_cli(plan_on("mi300x", {"--explain"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto at = r.out.find("Uncertainty: which assumption moves the step time most");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mi300x attention_efficiency", at), std::string::npos);
  EXPECT_NE(r.out.find("roce-400g latency", at), std::string::npos);
  // Without --explain the text has no uncertainty block.
  const auto plain = run_cli(plan_on("mi300x", {}));
  EXPECT_EQ(plain.out.find("Uncertainty:"), std::string::npos);
}

TEST(PlanUncertaintyCli, JsonOnTheFirstConfigSortedBySwing) {
  const auto r = run_cli(plan_on("h100-sxm", {"--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& u = j.at("configs").at(0).at("uncertainty");
  ASSERT_EQ(u.size(), 2u);
  double last = INFINITY;
  for (const auto& x : u) {
    for (const char* k : {"assumption", "field", "value", "low", "high", "step_time_s_low",
                          "step_time_s_high", "source"})
      EXPECT_TRUE(x.contains(k)) << k;
    EXPECT_EQ(x["field"], "latency");
    EXPECT_EQ(x["source"].get<std::string>().rfind("assumption:", 0), 0u);
    const double swing =
        std::abs(x["step_time_s_high"].get<double>() - x["step_time_s_low"].get<double>());
    EXPECT_LE(swing, last);
    last = swing;
  }
  EXPECT_FALSE(j.at("configs").at(1).contains("uncertainty"));
}

TEST(PlanUncertaintyCli, NoAssumptionSaysSo) {
  // --latency replaces both link latencies (5 us is neither catalog value): H100 has no
  // assumed number left.
  const auto r = run_cli(plan_on("h100-sxm", {"--latency", "5e-6", "--explain"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no catalog assumption applies"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ringsim
