#pragma once
// Markdown pieces for report.md: tables and the "ours vs published" cells.
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::exp {

class MdTable {
 public:
  explicit MdTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// (ours - published) / published as "+1.9%"; "" when there is no published value.
std::string rel_diff(double ours, double published);
double rel_diff_value(double ours, double published);
// `digits` significant digits in fixed notation for everyday magnitudes:
// "1.45", "0.0312", "312", "24960"; exponent form below 1e-4 and from 1e6.
std::string sig(double v, int digits = 3);
// Token counts that are multiples of 1024 in the CLI's binary style ("256K",
// "1M", "768K"), others as they are; sequence lengths read as users type them.
std::string tokens_k(std::int64_t tokens);

}  // namespace ringsim::exp
