#pragma once
// The data behind an experiment: named columns, one row per point, written as
// RFC 4180 CSV. Cells are kept as text (numbers with 6 significant digits) so
// the CSV is byte-stable across runs; empty cells mean "not applicable".
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::exp {

class Table {
 public:
  explicit Table(std::vector<std::string> columns = {}) : columns_(std::move(columns)) {}
  void set_columns(std::vector<std::string> columns) { columns_ = std::move(columns); }

  // A row being filled; unknown column names throw std::logic_error (a bug in
  // the experiment, not bad input).
  class Row {
   public:
    Row& set(const std::string& column, double v);
    Row& set(const std::string& column, std::int64_t v);
    Row& set(const std::string& column, int v) { return set(column, static_cast<std::int64_t>(v)); }
    Row& set(const std::string& column, const std::string& v);
    Row& set(const std::string& column, const char* v) { return set(column, std::string(v)); }
    Row& set(const std::string& column, bool v) { return set(column, std::string(v ? "1" : "0")); }

   private:
    friend class Table;
    Row(Table* t, std::size_t i) : table_(t), index_(i) {}
    Table* table_;
    std::size_t index_;
  };
  Row add_row();

  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  std::size_t column(const std::string& name) const;  // throws std::logic_error
  std::string csv() const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// 6 significant digits, no trailing noise ("0.000123457", "1.5e+06").
std::string format_number(double v);
// Splits one CSV document into rows of cells (quotes, doubled quotes, CRLF);
// used by the tests and by nothing that parses outside input.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

}  // namespace ringsim::exp
