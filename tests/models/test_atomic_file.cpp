// How outputs are written (models/core/atomic_file): a regular file is replaced
// atomically; a symlink keeps pointing where it did and its target gets the
// bytes; a FIFO or device is written through, never replaced by a regular file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"

namespace ringsim {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const auto dir = fs::temp_directory_path() /
                   ("ringsim-atomic-" + std::to_string(static_cast<long>(getpid())) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_all(const std::string& path, const std::string& text) {
  AtomicFile f(path, "--out");
  f.write(text);
  f.commit();
}

int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, ReplacesARegularFileAndLeavesNoTemporary) {
  const auto dir = scratch("regular");
  const auto p = dir / "out.json";
  std::ofstream(p) << "old";
  write_all(p.string(), "new");
  EXPECT_EQ(slurp(p), "new");
  EXPECT_EQ(entries(dir), 1);
  {
    AtomicFile f(p.string(), "--out");
    f.write("never committed");
  }
  EXPECT_EQ(slurp(p), "new");  // an abandoned write leaves the old file
  EXPECT_EQ(entries(dir), 1);
}

TEST(AtomicFile, WritesThroughASymlinkAndKeepsIt) {
  const auto dir = scratch("symlink");
  const auto target = dir / "real.json", link = dir / "link.json", dangling = dir / "dangling.json";
  std::ofstream(target) << "old";
  fs::create_symlink("real.json", link);  // relative, as people make them
  write_all(link.string(), "through the link");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(slurp(target), "through the link");
  // A link whose target does not exist yet: the target is created, the link stays.
  fs::create_symlink(dir / "made.json", dangling);
  write_all(dangling.string(), "made");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dangling)));
  EXPECT_EQ(slurp(dir / "made.json"), "made");
  EXPECT_EQ(resolve_output(link.string(), "--out").kind, OutputKind::Replace);
}

TEST(AtomicFile, WritesThroughAFifoToItsReader) {
  const auto dir = scratch("fifo");
  const auto fifo = dir / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  write_all(fifo.string(), "to the reader");
  reader.join();
  EXPECT_EQ(got, "to the reader");
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));  // still a FIFO, not a regular file
}

TEST(AtomicFile, DevicesAndStdoutAreWrittenThrough) {
  EXPECT_EQ(resolve_output("/dev/null", "--trace").kind, OutputKind::Through);
  EXPECT_EQ(resolve_output("-", "--trace").kind, OutputKind::Stdout);
  EXPECT_EQ(resolve_output("/tmp/ringsim-not-there.json", "--trace").kind, OutputKind::Replace);
  write_all("/dev/null", "discarded");
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(AtomicFile, RefusesDirectoriesAndLinkLoops) {
  const auto dir = scratch("refuse");
  EXPECT_THROW(write_all(dir.string(), "x"), InputError);
  fs::create_symlink("b", dir / "a");
  fs::create_symlink("a", dir / "b");
  try {
    write_all((dir / "a").string(), "x");
    FAIL() << "a symlink loop was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic links"), std::string::npos) << e.what();
  }
  EXPECT_EQ(entries(dir), 2);
}

std::string refusal(const std::vector<PathArg>& out, const std::vector<PathArg>& in = {}) {
  try {
    check_outputs(out, in);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Judged before any work, touching nothing: a missing directory, two outputs
// on one file (by another name, or through a link), an output that is an
// input; a character device may take several outputs.
TEST(CheckOutputs, RefusesBeforeAnyWorkAndCreatesNothing) {
  const auto dir = scratch("check");
  const auto a = (dir / "a.json").string(), b = (dir / "b.csv").string();
  EXPECT_EQ(refusal({{"--trace", a}, {"--csv", b}, {"--unused", ""}}), "");
  EXPECT_EQ(entries(dir), 0) << "checking creates nothing";
  EXPECT_NE(refusal({{"--trace", (dir / "no" / "t.json").string()}}).find("No such file"),
            std::string::npos);
  EXPECT_NE(refusal({{"--trace", a}, {"--csv", (dir / "." / "a.json").string()}})
                .find("is also the --trace output"),
            std::string::npos);
  write_all(a, "{}");
  fs::create_symlink("a.json", dir / "link.json");
  EXPECT_NE(refusal({{"--trace", b}, {"--csv", (dir / "link.json").string()}}, {{"--catalog", a}})
                .find("is the --catalog input"),
            std::string::npos);
  EXPECT_NE(refusal({{"--trace", "-"}, {"--csv", "-"}}).find("standard output"), std::string::npos);
  EXPECT_EQ(refusal({{"--trace", "/dev/null"}, {"--csv", "/dev/null"}}), "");
  EXPECT_NE(refusal({{"--out", dir.string()}}).find("it is a directory"), std::string::npos);
}

// Several outputs: all or none. A failure while finishing any (here a full
// device) leaves every regular target as it was; commit_all after success
// replaces them all; dropped without commit, none.
TEST(CommitAll, AllOrNothing) {
  const auto dir = scratch("all");
  const auto a = (dir / "a.txt").string(), b = (dir / "b.txt").string();
  write_all(a, "old a");
  write_all(b, "old b");
  {
    AtomicFile fa(a, "--trace"), fb(b, "--csv");
    fa.write("new a");
    fb.write("new b");
  }  // interrupted: never committed
  EXPECT_EQ(slurp(a), "old a");
  EXPECT_EQ(slurp(b), "old b");
  {
    AtomicFile fa(a, "--trace"), full("/dev/full", "--csv");
    fa.write("new a");
    full.write(std::string(1 << 16, 'x'));
    EXPECT_THROW(commit_all({&fa, &full}), InputError);
  }
  EXPECT_EQ(slurp(a), "old a") << "a failed sibling must not let this one through";
  {
    AtomicFile fa(a, "--trace"), fb(b, "--csv");
    fa.write("new a");
    fb.write("new b");
    commit_all({&fa, &fb});
  }
  EXPECT_EQ(slurp(a), "new a");
  EXPECT_EQ(slurp(b), "new b");
  EXPECT_EQ(entries(dir), 2) << "no temporary file left";
}

}  // namespace
}  // namespace ringsim
