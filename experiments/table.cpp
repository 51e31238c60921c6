#include "experiments/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ringsim::exp {

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

std::size_t Table::column(const std::string& name) const {
  const auto it = std::find(columns_.begin(), columns_.end(), name);
  if (it == columns_.end()) throw std::logic_error("experiment table has no column '" + name + "'");
  return static_cast<std::size_t>(it - columns_.begin());
}

Table::Row Table::add_row() {
  rows_.emplace_back(columns_.size());
  return Row(this, rows_.size() - 1);
}

Table::Row& Table::Row::set(const std::string& column, double v) {
  return set(column, format_number(v));
}

Table::Row& Table::Row::set(const std::string& column, std::int64_t v) {
  return set(column, std::to_string(v));
}

Table::Row& Table::Row::set(const std::string& column, const std::string& v) {
  table_->rows_[index_][table_->column(column)] = v;
  return *this;
}

namespace {
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    line += csv_cell(cells[i]);
  }
  return line + "\n";
}
}  // namespace

std::string Table::csv() const {
  std::string out = csv_line(columns_);
  for (const auto& r : rows_) out += csv_line(r);
  return out;
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cell += ch;
      }
      continue;
    }
    any = true;
    if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      row.push_back(std::move(cell));
      cell.clear();
    } else if (ch == '\n' || ch == '\r') {
      if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(std::move(cell));
      cell.clear();
      rows.push_back(std::move(row));
      row.clear();
      any = false;
    } else {
      cell += ch;
    }
  }
  if (any || !cell.empty() || !row.empty()) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ringsim::exp
