// The sweep journal (sweep/journal.hpp) without children: framed lines, a
// journal cut at every byte resuming to the same file, the header refusing
// rows computed under other settings, the lock, --force-new, and the files a
// journal must not be.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "models/analytic/report.hpp"
#include "models/core/errors.hpp"
#include "sweep/journal.hpp"

namespace ringsim::sweep {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// In memory where the system has it (/dev/shm): each append is fsync'd,
// which costs milliseconds on a disk and nothing there; what is tested is
// what a journal's bytes become, not the disk.
std::string fresh(const std::string& name) {
  std::error_code ec;
  const std::string base =
      fs::is_directory("/dev/shm", ec) ? std::string("/dev/shm/") : ::testing::TempDir();
  const auto dir = base + "ringsim-journal-" + std::to_string(::getpid()) + "-" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir + "/rows.jsonl";
}

JournalHeader header(const std::string& gpu = "h100-sxm") {
  return make_header({{"--engine", "analytic"}, {"--gpu", gpu}}, "");
}

// Rows as a sweep writes them: summaries the run reader accepts, and one
// refused point.
std::vector<Row> rows() {
  std::vector<Row> out;
  for (int i = 0; i < 4; ++i) {
    Row r;
    r.index = static_cast<std::size_t>(i);
    r.key = "--devices=" + std::to_string(2 << i);
    r.params = {{"--devices", std::to_string(2 << i)}};
    if (i == 2) {
      r.error = "exit 2: --block: zigzag splits each block into two chunks";
    } else {
      RunSummary s;
      s.devices = 2 << i;
      s.block = 256;
      s.seq_len = s.devices * s.block;
      s.time_s = 1e-3 * (i + 1);
      r.ok = true;
      r.summary = s.to_json();
    }
    out.push_back(r);
  }
  return out;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(JournalFrame, RoundTripAndAnyChangedByteIsRefused) {
  const nlohmann::json j{{"key", "--devices=2"}, {"x", 1.5}};
  const auto line = frame(j);
  ASSERT_EQ(line.back(), '\n');
  const auto back = unframe(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, j);
  // The line is still one JSON object a reader of JSONL can load.
  EXPECT_TRUE(nlohmann::json::parse(line).is_object());
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    auto bad = line.substr(0, line.size() - 1);
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    EXPECT_FALSE(unframe(bad).has_value()) << "byte " << i << " flipped: " << bad;
  }
}

// A journal cut at any byte (a kill mid-write, a crash) opens with every row
// whose line was whole, the torn rest cut off with a note, and the resumed
// sweep's appends give exactly the file the uninterrupted sweep wrote.
TEST(JournalCut, EveryByteResumesWithEveryCompleteRowKept) {
  const auto path = fresh("cut");
  const auto all = rows();
  {
    Journal j(path, header(), false);
    for (const auto& r : all) j.append(r);
  }
  const auto full = slurp(path);
  std::vector<std::size_t> ends;  // the end of each line, header first
  for (std::size_t i = 0; i < full.size(); ++i)
    if (full[i] == '\n') ends.push_back(i + 1);
  ASSERT_EQ(ends.size(), all.size() + 1);
  for (std::size_t cut = 0; cut <= full.size(); ++cut) {
    put(path, full.substr(0, cut));
    std::size_t whole = 0;  // complete row lines in the cut
    for (std::size_t k = 1; k < ends.size(); ++k)
      if (ends[k] <= cut) whole = k;
    Journal j(path, header(), false);
    ASSERT_EQ(j.rows().size(), whole) << "cut at byte " << cut;
    // Through the last whole line (none while the header is torn: a new one).
    const auto whole_end = cut < ends[0] ? 0 : ends[whole];
    ASSERT_EQ(slurp(path), full.substr(0, std::max(whole_end, ends[0]))) << "cut at byte " << cut;
    ASSERT_EQ(j.notes().size(), cut != whole_end ? 1u : 0u) << "cut at byte " << cut;
    if (cut != whole_end) {
      EXPECT_NE(
          j.notes()[0].find(fmt::format("cut {} byte(s) of a torn last line", cut - whole_end)),
          std::string::npos)
          << j.notes()[0];
    }
    // Resuming appends the missing rows: the file becomes the full one. Each
    // append is fsync'd (milliseconds), so real appends run at the line ends
    // and next to them, and every 61st cut; the rest check the same bytes.
    std::string resumed = full.substr(0, std::max(whole_end, ends[0]));
    for (std::size_t k = whole; k < all.size(); ++k) resumed += frame(to_json(all[k]));
    ASSERT_EQ(resumed, full) << "cut at byte " << cut;
    if (cut % 61 == 0 || cut <= whole_end + 1 || std::count(ends.begin(), ends.end(), cut + 1)) {
      for (std::size_t k = whole; k < all.size(); ++k) j.append(all[k]);
      ASSERT_EQ(slurp(path), full) << "cut at byte " << cut;
    }
  }
  std::cout << "cut a " << full.size() << "-byte journal of " << all.size()
            << " rows at every byte\n";
}

TEST(JournalText, DamagedLineInTheMiddleIsSkippedNotTrusted) {
  const auto path = fresh("damaged");
  const auto all = rows();
  {
    Journal j(path, header(), false);
    for (const auto& r : all) j.append(r);
  }
  auto text = slurp(path);
  // One digit of row 1's summary changed: its check no longer matches.
  const auto at = text.find("\"time_s\":0.002");
  ASSERT_NE(at, std::string::npos);
  text[at + 13] = '9';
  put(path, text);
  Journal j(path, header(), false);
  EXPECT_EQ(j.rows().size(), all.size() - 1);
  EXPECT_EQ(j.rows().count(all[1].key), 0u);
  ASSERT_EQ(j.notes().size(), 1u);
  EXPECT_NE(j.notes()[0].find("skipped 1 damaged line"), std::string::npos) << j.notes()[0];
}

TEST(JournalHeader, ResumeUnderOtherSettingsIsRefusedNamingWhatDiffers) {
  const auto path = fresh("header");
  {
    Journal j(path, header(), false);
    j.append(rows()[0]);
  }
  const auto before = slurp(path);
  EXPECT_EQ(message_of([&] { Journal j(path, header("a100-80gb"), false); }),
            "--out " + path +
                ": its rows were computed under other settings (--gpu: h100-sxm in the journal, "
                "a100-80gb now); rerun with those, or add --force-new to keep it and start a new "
                "journal beside it");
  auto other_version = header();
  other_version.version = "0.0.1";
  const auto version_message = message_of([&] { Journal j(path, other_version, false); });
  EXPECT_NE(
      version_message.find("ringsim " + header().version + " wrote it, this is ringsim 0.0.1"),
      std::string::npos)
      << version_message;
  auto other_catalog = header();
  other_catalog.catalog = sha256_hex("another catalog");
  EXPECT_NE(message_of([&] {
              Journal j(path, other_catalog, false);
            }).find("the catalog (built-in data and --catalog file) differs"),
            std::string::npos);
  // A flag given now that the journal did not have.
  auto more = header();
  more.base["--layout"] = "zigzag";
  EXPECT_NE(message_of([&] {
              Journal j(path, more, false);
            }).find("--layout: not given in the journal, zigzag now"),
            std::string::npos);
  EXPECT_EQ(slurp(path), before);  // refused: nothing touched
  // The same settings resume.
  Journal same(path, header(), false);
  EXPECT_EQ(same.rows().size(), 1u);
}

TEST(JournalHeader, FilesAreKnownByTheirContents) {
  const auto dir = fs::path(fresh("files")).parent_path();
  const auto cat = (dir / "c.json").string(), cfg = (dir / "c.toml").string();
  put(cat, "{}");
  put(cfg, "devices = 8\n");
  const auto a = make_header({{"--catalog", cat}}, cfg);
  put(cat, "{ }");
  const auto b = make_header({{"--catalog", cat}}, cfg);
  put(cfg, "devices = 16\n");
  const auto c = make_header({{"--catalog", cat}}, cfg);
  EXPECT_NE(a.catalog, b.catalog);
  EXPECT_EQ(a.config, b.config);
  EXPECT_NE(b.config, c.config);
  EXPECT_EQ(header_differences(a, a).size(), 0u);
  ASSERT_EQ(header_differences(a, c).size(), 2u);
  EXPECT_EQ(header_differences(a, c)[1].rfind("the --config file differs", 0), 0u);
  // A file that is gone is refused by name, as its reader would.
  fs::remove(cat);
  EXPECT_EQ(message_of([&] {
              make_header({{"--catalog", cat}}, "");
            }),
            "--catalog: cannot open '" + cat + "'");
}

// The files a sweep's rows are drawn from besides the catalog: a
// --calibration file (each row's error band) and a --documents file of
// lengths. A change to either makes the journal's data differ; a --documents
// list or distribution is in the flags already.
TEST(JournalHeader, CalibrationAndDocumentsFilesAreData) {
  const auto dir = fs::path(fresh("data-files")).parent_path();
  const auto cal = (dir / "cal.json").string(), docs = (dir / "lengths.txt").string();
  put(cal, "{}");
  put(docs, "512\n256\n");
  const auto a = make_header({{"--calibration", cal}, {"--documents", docs}}, "");
  put(docs, "512\n512\n");
  const auto b = make_header({{"--calibration", cal}, {"--documents", docs}}, "");
  put(cal, "{ }");
  const auto c = make_header({{"--calibration", cal}, {"--documents", docs}}, "");
  EXPECT_NE(a.catalog, b.catalog);
  EXPECT_NE(b.catalog, c.catalog);
  const auto list = make_header({{"--documents", "512,256"}}, "");
  EXPECT_EQ(list.catalog, make_header({}, "").catalog);
}

TEST(JournalFile, SecondSweepOnOneJournalIsRefusedByTheLock) {
  const auto path = fresh("lock");
  Journal first(path, header(), false);
  EXPECT_EQ(message_of([&] { Journal second(path, header(), false); }),
            "--out " + path +
                ": another sweep is writing this journal (it holds its lock); let it finish, or "
                "give another --out");
  first.append(rows()[0]);
}

TEST(JournalFile, ForceNewKeepsTheOldJournalBesideTheNewOne) {
  const auto path = fresh("force");
  {
    Journal j(path, header(), false);
    j.append(rows()[0]);
  }
  const auto old = slurp(path);
  fs::create_directories(fs::path(path).parent_path());
  put(fs::path(path).replace_filename("rows.1.jsonl").string(), "taken");
  Journal j(path, header("a100-80gb"), true);
  EXPECT_EQ(j.rows().size(), 0u);
  const auto kept = fs::path(path).replace_filename("rows.2.jsonl").string();
  EXPECT_EQ(slurp(kept), old);
  ASSERT_EQ(j.notes().size(), 1u);
  EXPECT_EQ(j.notes()[0], "--force-new: the old journal " + path + " is kept as " + kept);
  EXPECT_EQ(slurp(path), frame(to_json(header("a100-80gb"))));
}

TEST(JournalFile, NotAJournalIsRefusedWhole) {
  const auto path = fresh("foreign");
  // A journal of an older ringsim: rows, no header.
  put(path, "{\"index\":0,\"key\":\"--devices=2\",\"params\":{},\"status\":\"failed\"}\n");
  EXPECT_NE(message_of([&] {
              Journal j(path, header(), false);
            }).find("is not a sweep journal of this ringsim"),
            std::string::npos);
  // A file without a final newline is not a torn journal unless it begins as
  // a framed line does: its bytes are kept, the sweep refused.
  for (const std::string text : {"my precious data", "{\"a\":1}", "{\"checksum\""}) {
    put(path, text);
    EXPECT_NE(message_of([&] {
                Journal j(path, header(), false);
              }).find("is not a sweep journal of this ringsim"),
              std::string::npos)
        << text;
    EXPECT_EQ(slurp(path), text);
  }
  const auto fifo = fs::path(path).replace_filename("fifo.jsonl").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(
      message_of([&] { Journal j(fifo, header(), false); }),
      "--out " + fifo + ": a journal must be a regular file, this is a FIFO; give a file path");
  const auto dir = fs::path(path).replace_filename("dir.jsonl").string();
  fs::create_directories(dir);
  EXPECT_NE(message_of([&] { Journal j(dir, header(), false); }).find("cannot open the journal"),
            std::string::npos);
}

}  // namespace
}  // namespace ringsim::sweep
