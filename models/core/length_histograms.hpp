#pragma once
// Published document-length histograms (models/data/document_lengths.json,
// embedded): `--documents dataset:NAME` draws lengths from one. Each bin is
// [lo, hi) tokens with the number of documents its source counts there; a
// draw picks a bin with probability count / total, then a length uniform
// within it (the assumption each entry states in its `assumptions`).
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim {

struct LengthBin {
  std::int64_t lo = 1, hi = 2;  // [lo, hi) tokens
  std::int64_t documents = 0;   // as the source counts them
};

struct LengthHistogram {
  std::string name, description, source, url, assumptions;
  std::vector<LengthBin> bins;  // ascending, not overlapping
  std::int64_t total = 0;       // sum of the bins' documents

  // Mean document length in tokens under the histogram (uniform within bins).
  double mean() const;
};

// The embedded histograms, read and checked once.
const std::vector<LengthHistogram>& length_histograms();

// The histogram called `name`; throws InputError naming `flag` and listing
// the known names otherwise.
const LengthHistogram& find_length_histogram(const std::string& flag, const std::string& name);

// Parses and checks a document_lengths.json text; `origin` names it in errors.
std::vector<LengthHistogram> parse_length_histograms(const std::string& text,
                                                     const std::string& origin);

// One length from `h`, given two uniforms in [0, 1): the first picks the bin
// (by cumulative count), the second the length within it.
std::int64_t histogram_length(const LengthHistogram& h, double u_bin, double u_len);

}  // namespace ringsim
