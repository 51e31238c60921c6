// Fuzz target: the sweep journal's reader (sweep::parse_journal, what a
// resume reads from --out FILE.jsonl). Any bytes must be read without an
// exception, and what is accepted must be usable:
// - the good prefix and the torn tail split the text exactly (keep + torn ==
//   size), and the prefix ends at a line end;
// - written back (header, then every row it kept, framed) and read again,
//   the same header and rows come back with nothing torn or damaged.
#include "sweep/journal.hpp"

#include <string>
#include <string_view>

#include "fuzz/target.hpp"

namespace ringsim::fuzz {

int journal(const std::uint8_t* data, std::size_t size) {
  if (size > 65536) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sweep::JournalText t;
  try {
    t = sweep::parse_journal(text);
  } catch (const std::exception& e) {
    finding(std::string("journal: the reader threw: ") + e.what());
  }
  if (t.foreign) return 0;  // refused whole by the caller, with one line
  if (t.keep + t.torn != size) finding("journal: keep + torn is not the size");
  if (t.keep > 0 && text[t.keep - 1] != '\n') finding("journal: the kept part ends mid-line");
  if (!t.header) {
    if (!t.rows.empty()) finding("journal: rows without a header");
    return 0;
  }
  std::string again = sweep::frame(sweep::to_json(*t.header));
  for (const auto& [key, row] : t.rows) {
    if (row.key != key) finding("journal: a row filed under another key");
    again += sweep::frame(sweep::to_json(row));
  }
  const auto back = sweep::parse_journal(again);
  if (!back.header || !(*back.header == *t.header))
    finding("journal: the header does not round-trip");
  if (back.torn != 0 || back.damaged != 0 || back.keep != again.size())
    finding("journal: its own writing reads back torn or damaged");
  if (back.rows.size() != t.rows.size()) finding("journal: rows lost on a round trip");
  for (const auto& [key, row] : t.rows) {
    const auto it = back.rows.find(key);
    if (it == back.rows.end() || sweep::to_json(it->second) != sweep::to_json(row))
      finding("journal: a row changed on a round trip: " + key);
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(journal)
