#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"

using namespace ringsim;

TEST(Catalog, EmbeddedHasTheRequiredDevicesAndInterconnects) {
  const auto c = Catalog::embedded();
  for (const char* d : {"a100-80gb", "h100-sxm", "h200", "b200", "mi300x", "tpu-v3", "tpu-v4",
                        "tpu-v5e", "tpu-v5p"})
    EXPECT_NO_THROW(c.device(d)) << d;
  for (const char* n : {"nvlink3", "nvlink4", "nvlink5", "pcie4", "pcie5", "ib-hdr", "ib-ndr",
                        "ib-xdr", "roce-400g", "ici-v3", "ici-v4", "ici-v5e", "ici-v5p"})
    EXPECT_NO_THROW(c.interconnect(n)) << n;
  for (const char* k : {"dgx-a100", "dgx-h100", "tpu-v4-pod"}) EXPECT_NO_THROW(c.cluster(k)) << k;
}

TEST(Catalog, EveryNumberHasASource) {
  const auto c = Catalog::embedded();
  for (const auto& d : c.devices()) {
    EXPECT_FALSE(d.source.empty()) << d.name;
    EXPECT_FALSE(d.efficiency_source.empty()) << d.name;
  }
  for (const auto& n : c.interconnects()) {
    EXPECT_FALSE(n.source.empty()) << n.name;
    EXPECT_FALSE(n.latency_source.empty()) << n.name;
  }
  EXPECT_FALSE(c.paper_table2_source().empty());
  EXPECT_EQ(c.paper_table2().size(), 5u);
}

TEST(Catalog, PublishedFiguresAsCited) {
  const auto c = Catalog::embedded();
  EXPECT_DOUBLE_EQ(c.device("h100-sxm").peak_bf16, 989e12);
  EXPECT_DOUBLE_EQ(c.device("a100-80gb").peak_bf16, 312e12);
  // NVLink 4: 900 GB/s bidirectional total -> 450 GB/s per direction.
  EXPECT_DOUBLE_EQ(c.interconnect("nvlink4").bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(c.interconnect("ib-ndr").bandwidth, 50e9);
}

TEST(Catalog, UnknownNameListsChoices) {
  const auto c = Catalog::embedded();
  try {
    c.device("h900");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--gpu: unknown device 'h900'"), std::string::npos);
    EXPECT_NE(m.find("h100-sxm"), std::string::npos);
  }
}

TEST(Catalog, MergeAddsAndReplacesByName) {
  auto c = Catalog::embedded();
  c.merge_json_text(
      R"({"interconnects":[{"name":"nvlink4","bandwidth":1e9,"latency":0,"source":"test","latency_source":"test"},
                                          {"name":"mylink","bandwidth":2e9,"latency":1e-6,"source":"t","latency_source":"t"}]})",
      "test");
  EXPECT_DOUBLE_EQ(c.interconnect("nvlink4").bandwidth, 1e9);
  EXPECT_DOUBLE_EQ(c.interconnect("mylink").bandwidth, 2e9);
}

TEST(Catalog, MalformedInputIsRejectedAndLeavesCatalogUnchanged) {
  auto c = Catalog::embedded();
  const char* bad[] = {
      "{",
      "[]",
      R"({"devices": 3})",
      R"({"devices":[{"name":"x"}]})",
      R"({"interconnects":[{"name":"l","bandwidth":-1,"latency":0,"source":"s","latency_source":"s"}]})",
      R"({"interconnects":[{"name":"l","bandwidth":"fast","latency":0,"source":"s","latency_source":"s"}]})",
      R"({"interconnects":[{"name":"l","bandwidth":1e9,"latency":0}]})",
      R"({"clusters":[{"name":"k","gpu":"nope","platform":"nodes","gpus_per_node":8,"intra":"nvlink4","inter":"ib-ndr","source":"s"}]})",
  };
  for (const char* b : bad) EXPECT_THROW(c.merge_json_text(b, "--catalog f.json"), InputError) << b;
  EXPECT_DOUBLE_EQ(c.interconnect("nvlink4").bandwidth, 450e9);
}

TEST(Catalog, MissingFileNamesIt) {
  auto c = Catalog::embedded();
  try {
    c.merge_file("/nonexistent/x.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.json"), std::string::npos);
  }
}

// Moving an assumption (docs/models.md): --set and patch entries.
TEST(Catalog, SetMovesOneFieldAndKeepsTheRest) {
  auto c = Catalog::embedded();
  const auto before = c.device("h100-sxm");
  c.set("devices.h100-sxm.gemm_efficiency", "0.5");
  EXPECT_DOUBLE_EQ(c.device("h100-sxm").gemm_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(c.device("h100-sxm").hbm_bytes, before.hbm_bytes);
  EXPECT_TRUE(c.moved("devices.h100-sxm.gemm_efficiency"));
  EXPECT_FALSE(c.moved("devices.h100-sxm.hbm_bytes"));
  // Nested fields and named array elements.
  c.set("devices.h100-sxm.peak_flops.bf16", "5e14");
  EXPECT_DOUBLE_EQ(c.device("h100-sxm").peak_bf16, 5e14);
  c.set("kernels.fa2.ops.merge-out.bytes", "20");
  for (const auto& op : c.kernel("fa2").ops)
    if (op.name == "merge-out") EXPECT_DOUBLE_EQ(op.bytes, 20);
  // An optional field the entry does not spell out.
  c.set("kernels.fa3.rate_scale", "0.8");
  EXPECT_DOUBLE_EQ(c.kernel("fa3").rate_scale, 0.8);
  EXPECT_DOUBLE_EQ(Catalog::embedded().kernel("fa3").rate_scale, 1.0);
}

TEST(Catalog, SetOutsideAnAssumedRangeDropsTheRange) {
  auto c = Catalog::embedded();
  const auto n = c.interconnect("nvlink4");
  ASSERT_FALSE(n.assumptions.empty());  // latency carries a range
  c.set("interconnects.nvlink4.latency", "1e-3");
  EXPECT_DOUBLE_EQ(c.interconnect("nvlink4").latency, 1e-3);
  EXPECT_TRUE(c.interconnect("nvlink4").assumptions.empty());
}

TEST(Catalog, SetRefusesWhatIsNotThere) {
  auto c = Catalog::embedded();
  for (const auto& [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"devices.h100-sxm.nope", "1"},
                                                        {"devices.h100-sxm.gemm_efficiency", "x"},
                                                        {"gadgets.h100-sxm.x", "1"},
                                                        {"kernels.fa2.ops.99.bytes", "1"},
                                                        {"devices.h100-sxm.name.x", "1"},
                                                        {"devices.h100-sxm.name", "h100b"}})
    EXPECT_THROW(c.set(k, v), InputError) << k;
  EXPECT_FALSE(c.moved("devices.h100-sxm.nope"));
}

TEST(Catalog, PatchEntryMergesIntoTheNamedEntry) {
  auto c = Catalog::embedded();
  c.merge_json_text(R"({"devices": [{"name": "h100-sxm", "patch": true, "hbm_efficiency": 0.7}]})",
                    "test");
  EXPECT_DOUBLE_EQ(c.device("h100-sxm").hbm_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(c.device("h100-sxm").peak_bf16,
                   Catalog::embedded().device("h100-sxm").peak_bf16);
  EXPECT_THROW(c.merge_json_text(R"({"devices": [{"name": "zz", "patch": true}]})", "test"),
               InputError);
}
