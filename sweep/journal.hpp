#pragma once
// The sweep journal (--out FILE.jsonl): what makes a long sweep safe to stop
// and resume (docs/sweep.md, "Resuming").
//
// - Line 1 is the header (sweep/header.hpp); a resume under another header
//   is refused with one line naming what differs. --force-new keeps the old
//   journal under a new name beside it and starts a new one.
// - Every line is framed: {"check":"<16 hex digits>", ...} then a newline,
//   the check being the first 64 bits of the SHA-256 of the rest of the line
//   read as an object. A row is appended whole in one write and fsync'd
//   before its point counts as done, so a kill loses at most the rows being
//   written.
// - On opening, a torn tail (bytes after the last good line: a kill
//   mid-write, a crash) is cut off, with a note of how many bytes; a damaged
//   line before it is skipped with a note. Their points run again.
// - The file is locked (flock) while a sweep holds it, so a second sweep on
//   the same journal is refused instead of appending to it.
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sweep/header.hpp"
#include "sweep/sweep.hpp"

namespace ringsim::sweep {

// One framed line holding the object `j`, newline included.
std::string frame(const nlohmann::json& j);
// The object a framed line holds (`line` without its newline); none when it
// is not one: no frame, a check that does not match, or not a JSON object.
std::optional<nlohmann::json> unframe(std::string_view line);

// A journal's text read back.
struct JournalText {
  std::optional<JournalHeader> header;  // none: empty, or no complete first line
  bool foreign = false;                 // a complete first line that is no journal header
  std::map<std::string, Row> rows;      // by key (a later row of one key wins)
  std::size_t keep = 0;                 // bytes through the last good line
  std::size_t torn = 0;                 // bytes after it (a torn tail), to cut off
  std::size_t damaged = 0;              // bad complete lines before `keep`, skipped
};
JournalText parse_journal(std::string_view text);

class Journal {
 public:
  // Keeps nothing (a sweep without --out).
  Journal() = default;
  // Opens or creates the journal at `path` (--out) and locks it; cuts a torn
  // tail; checks its header against `header` (or, with `force_new`, moves an
  // existing journal aside) and writes the header into a new one. Throws
  // InputError naming --out: not a regular file, locked by another sweep,
  // another header, not a journal. With `aside_if_different` (and not
  // `force_new`), a journal of this header resumes and any other is moved
  // aside instead of refused (the experiments' journals: a rerun resumes, a
  // run of another mode or version starts anew beside the old one).
  Journal(const std::string& path, const JournalHeader& header, bool force_new,
          bool aside_if_different = false);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // The rows it held when opened.
  const std::map<std::string, Row>& rows() const { return rows_; }
  // What opening it did that the user should know (stderr lines).
  const std::vector<std::string>& notes() const { return notes_; }
  // Appends one framed row and fsyncs it; throws InputError naming --out.
  void append(const Row& r);
  // The whole journal again (header, then `rows` in their order), written
  // to a temporary file, fsync'd and renamed over it.
  void rewrite(const std::vector<Row>& rows);

 private:
  std::string path_;
  int fd_ = -1;
  JournalHeader header_;
  std::map<std::string, Row> rows_;
  std::vector<std::string> notes_;
  void open(bool force_new, bool aside_if_different);
  void open_locked();
  void start_new();
};

}  // namespace ringsim::sweep
