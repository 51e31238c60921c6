#pragma once
// Reads an experiment's data.csv by column name, for the tests.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/table.hpp"

namespace ringsim::exp::test {

struct CsvView {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  static CsvView load(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    CsvView v;
    auto all = parse_csv(ss.str());
    if (all.empty()) return v;
    v.header = all.front();
    v.rows.assign(all.begin() + 1, all.end());
    return v;
  }
  int col(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    ADD_FAILURE() << "data.csv has no column " << name;
    return -1;
  }
  const std::string& str(std::size_t row, const std::string& name) const {
    static const std::string none;
    const int c = col(name);
    return c < 0 || static_cast<std::size_t>(c) >= rows[row].size()
               ? none
               : rows[row][static_cast<std::size_t>(c)];
  }
  double num(std::size_t row, const std::string& name) const {
    const auto& s = str(row, name);
    return s.empty() ? 0.0 : std::stod(s);
  }
};

}  // namespace ringsim::exp::test
