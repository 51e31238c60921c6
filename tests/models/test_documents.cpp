// Packed documents (models/core/documents.hpp): parsing --documents (cu_seqlens
// .npy files included), packing
// lengths into the sequence, each layout's token map in both pack modes, and
// the pairs the document mask keeps, against brute force.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <set>

#include "helpers.hpp"
#include "models/core/calls.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/npy.hpp"
#include "models/core/work.hpp"

using namespace ringsim;

namespace {

std::uint64_t brute_pairs(const std::vector<std::int64_t>& q, const std::vector<std::int64_t>& k,
                          const std::vector<std::int64_t>& lengths) {
  const auto starts = document_starts(lengths);
  std::uint64_t n = 0;
  for (auto a : q)
    for (auto b : k) n += b <= a && document_of(starts, a) == document_of(starts, b);
  return n;
}

std::int64_t sum(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}

}  // namespace

TEST(Documents, ParsesEveryForm) {
  auto s = parse_documents("--documents", "8K,2K,512");
  EXPECT_EQ(s.kind, DocumentSpec::Kind::Lengths);
  EXPECT_EQ(s.lengths, (std::vector<std::int64_t>{8192, 2048, 512}));
  EXPECT_EQ(parse_documents("--documents", "fixed:4K").lo, 4096);
  s = parse_documents("--documents", "uniform:100..1K");
  EXPECT_EQ(s.kind, DocumentSpec::Kind::Uniform);
  EXPECT_EQ(s.lo, 100);
  EXPECT_EQ(s.hi, 1024);
  s = parse_documents("--documents", "lognormal:2K,0.5");
  EXPECT_EQ(s.kind, DocumentSpec::Kind::Lognormal);
  EXPECT_DOUBLE_EQ(s.mean, 2048);
  EXPECT_DOUBLE_EQ(s.sigma, 0.5);
  const auto path = ::testing::TempDir() + "ringsim_documents.txt";
  std::ofstream(path) << "# lengths\n16\n\n 8 \n4K # a comment\n";
  s = parse_documents("--documents", path);
  EXPECT_EQ(s.lengths, (std::vector<std::int64_t>{16, 8, 4096}));
}

// A file is a file whatever its name holds: ':' and ',' would otherwise read
// as a distribution or a list.
TEST(Documents, FileNamesWithColonsAndCommasAreFiles) {
  for (const char* name : {"ringsim_documents_a:b.txt", "ringsim_documents_8,2.txt", "fixed:4K"}) {
    const auto path = ::testing::TempDir() + name;
    std::ofstream(path) << "16\n8\n";
    const auto s = parse_documents("--documents", path);
    EXPECT_EQ(s.kind, DocumentSpec::Kind::Lengths) << path;
    EXPECT_EQ(s.lengths, (std::vector<std::int64_t>{16, 8})) << path;
    std::filesystem::remove(path);
  }
  // Not a file: still the form it spells.
  EXPECT_EQ(parse_documents("--documents", "fixed:4K").kind, DocumentSpec::Kind::Fixed);
}

TEST(Documents, RefusesBadInputNamingTheFlag) {
  for (const char* bad : {"", "8,0", "8,-1", "8,,2", "fixed:0", "uniform:9..3", "uniform:3",
                          "lognormal:2K", "lognormal:2K,-1", "gauss:3", "no/such/file"}) {
    try {
      parse_documents("--documents", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--documents", 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(pack_documents("--documents", parse_documents("--documents", "fixed:1"),
                              kMaxDocuments + 1, 0),
               InputError);
}

namespace {

std::string npy_file(const std::string& name, const std::string& bytes) {
  const auto path = ::testing::TempDir() + "ringsim_documents_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string cu_file(const std::string& name, NpyDType dtype, const std::vector<std::int64_t>& cu) {
  return npy_file(name, encode_npy_ints({static_cast<std::int64_t>(cu.size())}, dtype, cu));
}

// The one-line message parse_documents throws for `path`, or "accepted".
std::string refusal(const std::string& path) {
  try {
    parse_documents("--documents", path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(Documents, ReadsCuSeqlensFromNpy) {
  for (const auto dtype : {NpyDType::I32, NpyDType::I64}) {
    const auto s = parse_documents("--documents", cu_file("cu.npy", dtype, {0, 8, 32, 35, 64}));
    EXPECT_EQ(s.kind, DocumentSpec::Kind::Lengths);
    EXPECT_EQ(s.lengths, (std::vector<std::int64_t>{8, 24, 3, 29}));
    // Packed like the list: repeated and the last one cut.
    EXPECT_EQ(pack_documents("--documents", s, 70, 0),
              (std::vector<std::int64_t>{8, 24, 3, 29, 6}));
  }
  // int64 beyond int32: one document of 2^33 tokens.
  EXPECT_EQ(
      parse_documents("--documents", cu_file("cu-big.npy", NpyDType::I64, {0, 1LL << 33})).lengths,
      (std::vector<std::int64_t>{1LL << 33}));
}

TEST(Documents, RefusesBadCuSeqlensNamingTheFile) {
  const auto two_d = npy_file("cu-2d.npy", encode_npy_ints({2, 2}, NpyDType::I32, {0, 1, 2, 3}));
  const auto floats = npy_file("cu-f8.npy", encode_npy({3}, NpyDType::F64, {0, 8, 16}));
  const auto empty = npy_file(
      "cu-empty.npy", encode_npy_ints({0}, NpyDType::I32, {}));  // numpy.save(np.array([], int32))
  const auto start = cu_file("cu-start.npy", NpyDType::I64, {1, 8, 16});
  const auto flat = cu_file("cu-flat.npy", NpyDType::I64, {0, 8, 8, 16});
  const auto down = cu_file("cu-down.npy", NpyDType::I32, {0, 8, 4});
  const auto only_zero = cu_file("cu-zero.npy", NpyDType::I32, {0});
  const auto huge = cu_file("cu-huge.npy", NpyDType::I64, {0, (1LL << 40) + 1});
  const std::vector<std::pair<std::string, std::string>> cases{
      {two_d, "expected a 1-d array, got shape (2, 2)"},
      {floats, "unsupported dtype '<f8'; use int32 or int64 (little-endian)"},
      {empty, "empty array (shape (0,))"},
      {start, "cu_seqlens must start at 0, got 1"},
      {flat, "cu_seqlens must increase strictly, but [2] = 8 follows [1] = 8"},
      {down, "cu_seqlens must increase strictly, but [2] = 4 follows [1] = 8"},
      {only_zero, "cu_seqlens [0] holds no documents"},
      {huge, "document 0 has 1099511627777 tokens, more than 1099511627776"}};
  for (const auto& [path, words] : cases) {
    const auto msg = refusal(path);
    EXPECT_EQ(msg.rfind("--documents " + path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(words), std::string::npos) << msg << "\nwanted: " << words;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// More than kMaxDocuments documents are refused from the header: the file is
// sparse (its data all zeros, never read), so the test costs no disk or time.
TEST(Documents, RefusesTooLongCuSeqlensFromTheHeader) {
  const auto n = kMaxDocuments + 2;
  auto head = encode_npy_ints({n}, NpyDType::I32, std::vector<std::int64_t>(n, 0));
  head.resize(head.size() -
              static_cast<std::size_t>(n) * 4);  // the header; resize_file adds the data
  const auto path = npy_file("cu-long.npy", head);
  std::filesystem::resize_file(path, head.size() + static_cast<std::uintmax_t>(n) * 4);
  EXPECT_EQ(refusal(path), fmt::format("--documents {}: shape ({},) has more than {} elements "
                                       "(cu_seqlens of at most {} documents)",
                                       path, n, kMaxDocuments + 1, kMaxDocuments));
}

TEST(Documents, PacksInOrderCuttingTheLast) {
  const auto list = parse_documents("--documents", "8,24,3");
  // Repeated until full, the last cut: 8+24+3+8+24+3 = 70, then 8 of the next 8... cut to 4.
  EXPECT_EQ(pack_documents("--documents", list, 74, 0),
            (std::vector<std::int64_t>{8, 24, 3, 8, 24, 3, 4}));
  EXPECT_EQ(pack_documents("--documents", parse_documents("--documents", "fixed:10"), 25, 0),
            (std::vector<std::int64_t>{10, 10, 5}));
  for (const char* d : {"uniform:1..50", "lognormal:20,1.2"}) {
    const auto spec = parse_documents("--documents", d);
    const auto a = pack_documents("--documents", spec, 1000, 7);
    EXPECT_EQ(sum(a), 1000) << d;
    EXPECT_EQ(a, pack_documents("--documents", spec, 1000, 7)) << d;  // deterministic
    EXPECT_NE(a, pack_documents("--documents", spec, 1000, 8)) << d;  // the seed matters
    for (auto L : a) EXPECT_GE(L, 1);
  }
  // The uniform draw stays in its range (all but the last, which may be cut).
  const auto u =
      pack_documents("--documents", parse_documents("--documents", "uniform:5..9"), 10000, 3);
  for (std::size_t i = 0; i + 1 < u.size(); ++i) {
    EXPECT_GE(u[i], 5);
    EXPECT_LE(u[i], 9);
  }
}

// The lognormal's mean is the requested mean length (within sampling error).
TEST(Documents, LognormalHasTheGivenMean) {
  const auto a = pack_documents("--documents", parse_documents("--documents", "lognormal:100,0.5"),
                                2000000, 1);
  const double mean = 2000000.0 / static_cast<double>(a.size());
  EXPECT_NEAR(mean, 100, 3);
}

// Every layout and pack mode gives every rank exactly c tokens, ascending, and
// together they cover the sequence once.
TEST(Documents, TokenMapsPartitionTheSequence) {
  const auto spec = parse_documents("--documents", "uniform:1..40");
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag})
    for (Pack p : {Pack::Sequence, Pack::Document})
      for (std::int64_t n : {1, 3, 4})
        for (std::uint64_t seed : {1, 2, 3}) {
          const std::int64_t c = 18;
          const auto docs = pack_documents("--documents", spec, n * c, seed);
          std::set<std::int64_t> all;
          for (std::int64_t i = 0; i < n; ++i) {
            const auto t = packed_tokens(l, p, docs, n, c, i);
            EXPECT_EQ(static_cast<std::int64_t>(t.size()), c) << to_string(l) << to_string(p);
            EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
            all.insert(t.begin(), t.end());
          }
          EXPECT_EQ(static_cast<std::int64_t>(all.size()), n * c);
          EXPECT_EQ(*all.rbegin(), n * c - 1);
        }
}

// Document mode, zigzag, lengths divisible by 2 x CP: rank i holds chunk i and
// chunk 2CP-1-i of every document (TransformerEngine's THD split).
TEST(Documents, ZigzagDocumentModeIsTheThdSplit) {
  const std::vector<std::int64_t> docs{8, 16, 8};  // 2 ranks: chunks of 2, 4, 2
  EXPECT_EQ(packed_tokens(Layout::Zigzag, Pack::Document, docs, 2, 16, 0),
            (std::vector<std::int64_t>{0, 1, 6, 7, 8, 9, 10, 11, 20, 21, 22, 23, 24, 25, 30, 31}));
  EXPECT_EQ(
      packed_tokens(Layout::Zigzag, Pack::Document, docs, 2, 16, 1),
      (std::vector<std::int64_t>{2, 3, 4, 5, 12, 13, 14, 15, 16, 17, 18, 19, 26, 27, 28, 29}));
  // Striped per document starts every document at rank 0: documents of 3
  // tokens on 2 ranks put their remainders on alternating ranks.
  EXPECT_EQ(packed_tokens(Layout::Striped, Pack::Document, {3, 3}, 2, 3, 0),
            (std::vector<std::int64_t>{0, 2, 3}));
  // One document: document mode is sequence mode.
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag})
    for (std::int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(packed_tokens(l, Pack::Document, {32}, 4, 8, i), device_tokens(l, 4, 8, i));
}

TEST(Documents, MaskedPairsMatchBruteForce) {
  const auto spec = parse_documents("--documents", "uniform:1..30");
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag})
    for (Pack p : {Pack::Sequence, Pack::Document})
      for (std::uint64_t seed : {4, 5}) {
        const std::int64_t n = 4, c = 14;
        const auto docs = pack_documents("--documents", spec, n * c, seed);
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            const auto q = packed_tokens(l, p, docs, n, c, i),
                       k = packed_tokens(l, p, docs, n, c, j);
            EXPECT_EQ(masked_pairs(q, k, document_starts(docs)), brute_pairs(q, k, docs))
                << to_string(l) << " " << to_string(p) << " " << i << " " << j;
          }
      }
}

// One document of the whole sequence counts exactly the causal closed forms.
TEST(Documents, OneDocumentIsTheCausalRun) {
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag, Layout::Ulysses,
                   Layout::Allgather, Layout::Hybrid})
    for (Pack p : {Pack::Sequence, Pack::Document}) {
      auto w = ringsim::testing::make_workload(8, 16, l, true);
      w.shape.heads = 8;
      w.shape.kv_heads = 8;
      w.ulysses_degree = l == Layout::Hybrid ? 2 : 0;
      auto d = w;
      d.documents = {w.seq_len()};
      d.pack = p;
      for (std::int64_t dev = 0; dev < w.devices; ++dev)
        for (std::int64_t s = 0; s < num_steps(w); ++s)
          EXPECT_EQ(step_entries(d, dev, s), step_entries(w, dev, s))
              << to_string(l) << " " << to_string(p) << " " << dev << " " << s;
    }
}

TEST(Documents, ChecksTheWorkload) {
  auto w = ringsim::testing::make_workload(2, 8, Layout::Ring, true);
  w.documents = {8, 7};
  EXPECT_THROW(check_documents(w), InputError);
  w.documents = {8, 8};
  EXPECT_NO_THROW(check_documents(w));
  w.causal = false;
  EXPECT_THROW(check_documents(w), InputError);
}

// The varlen calls of each step see exactly the step's pairs, for every
// layout and pack mode, under random packings.
TEST(Documents, CallsCoverTheStepsPairs) {
  const auto spec = parse_documents("--documents", "uniform:1..40");
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag, Layout::Ulysses,
                   Layout::Allgather, Layout::Hybrid})
    for (Pack p : {Pack::Sequence, Pack::Document})
      for (std::uint64_t seed : {1, 2}) {
        auto w = ringsim::testing::make_workload(4, 12, l, true);
        w.shape.heads = 8;
        w.shape.kv_heads = 4;
        w.documents = pack_documents("--documents", spec, w.seq_len(), seed);
        w.pack = p;
        for (std::int64_t d = 0; d < w.devices; ++d)
          for (std::int64_t s = 0; s < num_steps(w); ++s) {
            std::uint64_t sum = 0;
            for (const auto& c : step_calls(w, d, s)) sum += call_pairs(c);
            EXPECT_EQ(sum, step_entries(w, d, s)) << to_string(l) << to_string(p) << d << " " << s;
          }
      }
}

// 8 devices x 8192 tokens holding eight documents of 8192, zigzag, one head.
// Sequence mode: device i's chunks i and 15-i (4096 tokens each) lie in
// documents i/2 and (15-i)/2, so it shares documents only with device i^1:
// its own step sees two causal chunks, h(h+1) with h = 4096, and the step that
// brings device i^1's block one full h x h chunk; every other step nothing.
// Document mode: each document is its own zigzag of 2 x 8 chunks of 512, so
// every step sees 8 x 2h^2 (h = 512), and the own step 8h more.
TEST(Documents, HandCountedZigzagSequenceAgainstDocument) {
  auto w = ringsim::testing::make_workload(8, 8192, Layout::Zigzag, true);
  w.shape.heads = 1;
  w.documents.assign(8, 8192);
  const std::uint64_t H = 4096, h = 512;
  for (std::int64_t i = 0; i < 8; ++i)
    for (std::int64_t s = 0; s < 8; ++s) {
      w.pack = Pack::Sequence;
      const std::int64_t mate_step = i % 2 ? 1 : 7;
      EXPECT_EQ(step_entries(w, i, s), s == 0           ? H * (H + 1)
                                       : s == mate_step ? H * H
                                                        : 0)
          << i << " " << s;
      w.pack = Pack::Document;
      EXPECT_EQ(step_entries(w, i, s), s == 0 ? 8 * (2 * h * h + h) : 8 * 2 * h * h)
          << i << " " << s;
    }
  // Both see every pair once: 8 documents of 8192(8193)/2.
  w.pack = Pack::Sequence;
  const auto seq = total_entries(w);
  w.pack = Pack::Document;
  EXPECT_EQ(seq, total_entries(w));
  EXPECT_EQ(seq, 8u * 8192 * 8193 / 2);
}

// Tiles of 4 x 4 over one device's 8 tokens: a boundary on a tile edge skips
// the tile below the diagonal that causal alone would run; a boundary inside
// a tile leaves it charged whole.
TEST(Documents, TileEntriesChargeCutTilesWhole) {
  auto w = ringsim::testing::make_workload(1, 8, Layout::Ring, true);
  w.shape.heads = 1;
  w.documents = {4, 4};
  EXPECT_EQ(step_tile_entries(w, 0, 0, 4, 4), 32u);  // tiles (0,0) and (1,1)
  EXPECT_EQ(step_entries(w, 0, 0), 20u);
  w.documents = {2, 6};
  EXPECT_EQ(step_tile_entries(w, 0, 0, 4, 4), 48u);  // tile (1,0) is cut: 8 pairs, charged 16
  EXPECT_EQ(step_entries(w, 0, 0), 24u);
  w.documents = {8};
  EXPECT_EQ(step_tile_entries(w, 0, 0, 4, 4), 48u);  // the causal triangle's three tiles
}

// The verdict's words for the hand case above: at step 1 the odd devices
// each compute one full 4096 x 4096 chunk of their document (the even ones
// nothing), so device 1 holds a quarter of the step's pairs, all in document 0.
TEST(Documents, ImbalanceNamesTheBusiestDevicesDocuments) {
  auto w = ringsim::testing::make_workload(8, 8192, Layout::Zigzag, true);
  w.documents.assign(8, 8192);
  EXPECT_EQ(documents_imbalance(w, 1),
            "packed documents: at step 1 device 1 computes 25% of all devices' pairs, from "
            "document 0 (8192 tokens); --pack document splits every document over all devices");
}

// document_calls walks stretches of consecutive positions in pieces; it must
// give the calls of document_calls_by_row, the one-row-at-a-time definition,
// call for call: on every layout x pack mode's step tokens under random
// packings, and on random position sets with runs, gaps and lone tokens, or
// evenly spaced with a few missing.
TEST(Documents, FastCallsEqualTheRowByRowCalls) {
  const auto spec = parse_documents("--documents", "uniform:1..30");
  int compared = 0;
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag, Layout::Ulysses,
                   Layout::Allgather, Layout::Hybrid})
    for (Pack p : {Pack::Sequence, Pack::Document})
      for (std::int64_t n : {2, 4})
        for (std::uint64_t seed : {1, 2, 3}) {
          auto w = ringsim::testing::make_workload(n, 24, l, true);
          w.shape.heads = 4;
          w.shape.kv_heads = 4;
          w.documents = pack_documents("--documents", spec, w.seq_len(), seed);
          w.pack = p;
          const auto starts = document_starts(w.documents);
          for (std::int64_t d = 0; d < n; ++d)
            for (std::int64_t s = 0; s < num_steps(w); ++s) {
              const auto t = step_tokens(w, d, s);
              ASSERT_EQ(document_calls(t.q, t.k, starts, t.heads),
                        document_calls_by_row(t.q, t.k, starts, t.heads))
                  << to_string(l) << " " << to_string(p) << " n=" << n << " seed " << seed
                  << " device " << d << " step " << s;
              ++compared;
            }
        }
  EXPECT_GT(compared, 200);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    // Positions 0..199 kept in runs of random length, each run kept or not.
    const auto pick = [&](int keep_percent) {
      std::vector<std::int64_t> v;
      for (std::int64_t p = 0; p < 200;) {
        const auto len = 1 + static_cast<std::int64_t>(rng() % 12);
        const bool keep = static_cast<int>(rng() % 100) < keep_percent;
        for (std::int64_t i = 0; i < len && p < 200; ++i, ++p)
          if (keep) v.push_back(p);
      }
      return v;
    };
    // Or every s-th position from an offset (striped's pattern), a few dropped.
    const auto strided = [&](std::int64_t stride) {
      std::vector<std::int64_t> v;
      for (auto p = static_cast<std::int64_t>(rng() % 3); p < 200; p += stride)
        if (rng() % 10 != 0) v.push_back(p);
      return v;
    };
    const auto stride = 2 + static_cast<std::int64_t>(rng() % 4);
    const auto q = trial % 2 ? pick(50) : strided(stride);
    const auto k = trial % 3 ? pick(60) : strided(trial % 4 ? stride : stride + 1);
    std::vector<std::int64_t> lengths;
    for (std::int64_t left = 200; left > 0;) {
      const auto L = std::min<std::int64_t>(left, 1 + static_cast<std::int64_t>(rng() % 40));
      lengths.push_back(L);
      left -= L;
    }
    const auto starts = trial % 5 == 0 ? std::vector<std::int64_t>{} : document_starts(lengths);
    ASSERT_EQ(document_calls(q, k, starts, 3), document_calls_by_row(q, k, starts, 3))
        << "trial " << trial;
  }
}

// step_calls keeps the last packing's calls: asking about another workload
// and coming back gives the same calls as computing them afresh.
TEST(Documents, StepCallsCacheFollowsTheWorkload) {
  auto a = ringsim::testing::make_workload(4, 16, Layout::Zigzag, true);
  a.documents = {8, 24, 3, 29};
  auto b = a;
  b.pack = Pack::Document;
  auto c = a;
  c.documents = {32, 32};
  const auto fresh = [](const Workload& w, std::int64_t d, std::int64_t s) {
    const auto t = step_tokens(w, d, s);
    return document_calls_by_row(t.q, t.k, document_starts(w.documents), t.heads);
  };
  for (int round = 0; round < 2; ++round)
    for (const auto* w : {&a, &b, &c, &a})
      for (std::int64_t d = 0; d < 4; ++d)
        for (std::int64_t s = 0; s < 4; ++s)
          EXPECT_EQ(step_calls(*w, d, s), merge_shapes(fresh(*w, d, s)));
}

TEST(Documents, PinnedStepCallsMatchUnpinnedOnes) {
  // A scope trusts its workload's documents; inside it, and for another
  // workload asked about inside it, the calls are what they are without one.
  auto a = ringsim::testing::make_workload(4, 16, Layout::Zigzag, true);
  a.documents = {8, 24, 3, 29};
  auto c = a;
  c.documents = {32, 32};
  const DocumentCallsScope pin(a);
  for (const auto* w : {&a, &c, &a})
    for (std::int64_t d = 0; d < 4; ++d)
      for (std::int64_t s = 0; s < 4; ++s) {
        const auto t = step_tokens(*w, d, s);
        EXPECT_EQ(step_calls(*w, d, s), merge_shapes(document_calls_by_row(
                                            t.q, t.k, document_starts(w->documents), t.heads)));
      }
}

TEST(Documents, MergeShapesAddsHeadsOfEqualShapes) {
  // Sorted by shape (rows, keys, mask, shift); the two causal 2 x 2 calls add.
  const std::vector<KernelCall> calls{{2, 2, CallMask::Causal, 0, 8},
                                      {1, 3, CallMask::Full, 0, 8},
                                      {2, 2, CallMask::Causal, 0, 8},
                                      {2, 2, CallMask::Causal, -1, 8}};
  const std::vector<KernelCall> want{{1, 3, CallMask::Full, 0, 8},
                                     {2, 2, CallMask::Causal, -1, 8},
                                     {2, 2, CallMask::Causal, 0, 16}};
  EXPECT_EQ(merge_shapes(calls), want);
}
