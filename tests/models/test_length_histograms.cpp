// Published document-length histograms (models/core/length_histograms.hpp,
// models/data/document_lengths.json) and `--documents dataset:NAME`: the
// embedded data is the source's table, the draws follow it, the seed fixes
// them, and bad data or an unknown name is one line.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/length_histograms.hpp"

using namespace ringsim;

namespace {

std::string refusal(const std::string& text) {
  try {
    parse_length_histograms(text, "h.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

std::string dataset(const std::string& bins, const std::string& name = "d") {
  return R"({"name": ")" + name +
         R"(", "description": "x", "source": "x", "url": "x", "assumptions": "x", "bins": )" +
         bins + "}";
}

}  // namespace

// The embedded table is the wikipedia_token card's 'Token count' table: eight
// bins from 1 to 128000 tokens, whose counts sum to the card's 6,458,670
// documents (the total of its 'Text count' table too).
TEST(LengthHistograms, EmbeddedWikipediaIsTheCardsTable) {
  const auto& h = find_length_histogram("--documents", "wikipedia");
  ASSERT_EQ(h.bins.size(), 8u);
  EXPECT_EQ(h.total, 6458670);
  EXPECT_EQ(h.bins.front().lo, 1);
  EXPECT_EQ(h.bins.back().hi, 128000);
  for (std::size_t i = 1; i < h.bins.size(); ++i) {
    EXPECT_EQ(h.bins[i].lo, h.bins[i - 1].hi) << i;  // contiguous
    EXPECT_LT(h.bins[i].documents, h.bins[i - 1].documents) << i;
  }
  EXPECT_NE(h.url.find("huggingface.co/datasets/seonglae/wikipedia_token"), std::string::npos);
  EXPECT_FALSE(h.assumptions.empty());
  // Uniform within bins: sum of count x (lo + hi - 1) / 2 over the total.
  double sum = 0;
  for (const auto& b : h.bins)
    sum += static_cast<double>(b.documents) * static_cast<double>(b.lo + b.hi - 1) / 2;
  EXPECT_DOUBLE_EQ(h.mean(), sum / 6458670.0);
}

// 100,000 documents drawn through --documents dataset:wikipedia land in each bin
// as often as its share says. A bin's count is Binomial(n, p): the test allows
// 5 standard deviations plus 1 (the chance that a correct draw falls outside
// is below 1e-6 per bin; a draw that ignored the shares, e.g. bins picked
// uniformly, would miss the first bin by hundreds of deviations). Within the
// first bin the lengths are uniform on 1..1023: mean 512, deviation of the mean
// about 295 / sqrt(82,000) = 1.03 tokens, so 6 tokens is about 6 deviations.
TEST(LengthHistograms, DrawsFollowTheHistogram) {
  const auto spec = parse_documents("--documents", "dataset:wikipedia");
  ASSERT_EQ(spec.kind, DocumentSpec::Kind::Dataset);
  const auto& h = *spec.histogram;
  // Enough tokens for more than 100,000 documents; the last (cut) one is dropped.
  const auto docs = pack_documents("--documents", spec, 110000 * 1100, 42);
  ASSERT_GT(docs.size(), 100001u);
  const std::size_t n = 100000;
  std::vector<double> counts(h.bins.size());
  double first_sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto L = docs[i];
    std::size_t b = 0;
    while (b < h.bins.size() && L >= h.bins[b].hi) ++b;
    ASSERT_LT(b, h.bins.size()) << L;
    ASSERT_GE(L, h.bins[b].lo) << L;
    counts[b] += 1;
    if (b == 0) first_sum += static_cast<double>(L);
  }
  for (std::size_t b = 0; b < h.bins.size(); ++b) {
    const double p = static_cast<double>(h.bins[b].documents) / static_cast<double>(h.total);
    const double want = p * static_cast<double>(n);
    const double sd = std::sqrt(want * (1 - p));
    EXPECT_NEAR(counts[b], want, 5 * sd + 1) << "bin " << h.bins[b].lo << ".." << h.bins[b].hi;
  }
  EXPECT_NEAR(first_sum / counts[0], 512.0, 6.0);
}

TEST(LengthHistograms, TheSeedFixesTheDraw) {
  const auto spec = parse_documents("--documents", "dataset:wikipedia");
  const auto a = pack_documents("--documents", spec, 1 << 20, 7);
  EXPECT_EQ(a, pack_documents("--documents", spec, 1 << 20, 7));
  EXPECT_NE(a, pack_documents("--documents", spec, 1 << 20, 8));
  std::int64_t sum = 0;
  for (const auto L : a) sum += L;
  EXPECT_EQ(sum, 1 << 20);
}

TEST(LengthHistograms, UnknownNameListsTheKnownOnes) {
  try {
    parse_documents("--documents", "dataset:pile");
    ADD_FAILURE() << "accepted an unknown dataset";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--documents: unknown dataset 'pile' in 'dataset:pile'; known: wikipedia");
  }
}

TEST(LengthHistograms, BadDataIsOneLineNamingTheEntry) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"[", "h.json: not valid JSON"},
      {R"({"datasets": []})", "'datasets' must be a non-empty array"},
      {R"({"datasets": [{"name": "d"}]})", "dataset 'd': missing key 'description'"},
      {R"({"datasets": [)" + dataset("[]") + "]}", "'bins' must be a non-empty array"},
      {R"({"datasets": [)" + dataset(R"([{"lo": 8, "hi": 8, "documents": 1}])") + "]}",
       "'hi' (8) must be above 'lo' (8)"},
      {R"({"datasets": [)" + dataset(R"([{"lo": 0, "hi": 8, "documents": 1}])") + "]}",
       "bins[0]: 'lo'"},
      {R"({"datasets": [)" +
           dataset(R"([{"lo": 1, "hi": 8, "documents": 1}, {"lo": 4, "hi": 9, "documents": 1}])") +
           "]}",
       "bins[1] starts at 4, inside bins[0]"},
      {R"({"datasets": [)" + dataset(R"([{"lo": 1, "hi": 8, "documents": 0}])") + "]}",
       "the bins hold no documents"},
      {R"({"datasets": [)" + dataset(R"([{"lo": 1, "hi": 8, "documents": 1.5}])") + "]}",
       "'documents' must be an integer"},
      {R"({"datasets": [)" + dataset(R"([{"lo": 1, "hi": 8, "documents": 1}])") + ", " +
           dataset(R"([{"lo": 1, "hi": 8, "documents": 1}])") + "]}",
       "dataset 'd' appears twice"}};
  for (const auto& [text, words] : cases) {
    const auto msg = refusal(text);
    EXPECT_EQ(msg.rfind("h.json: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(words), std::string::npos) << msg << "\nwanted: " << words;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}
