#pragma once
// Every output file goes through here. What happens depends on what the path is:
// - a regular file, or nothing yet: written to a temporary name next to it and
//   renamed over it on commit(), so it appears complete or not at all; an
//   interrupted or failed run leaves the previous file untouched and no partial
//   file behind;
// - a symbolic link: the same, for the file the link (finally) points at; the
//   link itself stays;
// - a device, FIFO or socket (`/dev/null`, a pipe a reader waits on), a
//   descriptor's file (`/dev/stdout`, `/dev/fd/N`), or `-` (standard output):
//   written through, never renamed over, so no system file is ever replaced
//   by a regular one; standard output (`-`, or whatever path is the file fd 1
//   writes to) takes the data alone: check_outputs moves the command's own
//   report to stderr;
// - a directory: refused.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim {

// How an output path is written (see above).
enum class OutputKind { Replace, Through, Stdout };
struct OutputTarget {
  OutputKind kind = OutputKind::Replace;
  std::string path;  // where the bytes go: the symlink's final target, or the path itself
};
// Throws InputError naming `flag` for a directory or a symlink loop.
OutputTarget resolve_output(const std::string& path, const std::string& flag);

// A path given on the command line, with the flag that gave it.
struct PathArg {
  std::string flag, path;
};

// Checks every output of a command before it does any work, without creating
// or touching anything: a directory, a link loop, a missing or read-only
// directory and an unwritable device are refused now, not after minutes of
// simulation. Two outputs on one file (except a character device such as
// /dev/null) and an output that is one of `inputs` are refused. Empty paths
// (flags not given) are skipped. Throws InputError naming the flag.
// Besides `inputs`, every file registered with register_input is protected.
void check_outputs(const std::vector<PathArg>& outputs, const std::vector<PathArg>& inputs = {});

// A folder a command will create (`experiment --out DIR`, `calibrate
// --workdir DIR`): its parent must exist, so a typo does not grow a tree
// of folders; one line naming `flag` otherwise.
void check_folder_parent(const std::string& flag, const std::string& dir);

// A file this process reads that no command lists among its own inputs: the
// --config file the flags came from, a --documents file of lengths or
// cu_seqlens. Its reader registers it once, and every later check_outputs
// refuses to write over it, so no command's output replaces what it read.
void register_input(const std::string& flag, const std::string& path);

class AtomicFile {
 public:
  // Throws InputError naming `flag` and the path if the file cannot be created.
  AtomicFile(const std::string& path, const std::string& flag);
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view s);
  // Forces the data to the disk before the rename (fsync), so a power cut
  // leaves the old file or the new one, never an empty one: for files that
  // hold work (a sweep journal), not for every trace.
  void set_durable() { durable_ = true; }
  // Flushes, closes and renames; throws InputError on any I/O failure.
  void commit();
  // commit() in two halves, for several files committed together
  // (commit_all): finish() flushes and closes (where a full disk shows),
  // publish() renames (which does not fail on a file finish() accepted).
  void finish();
  void publish();

 private:
  OutputTarget target_;
  std::string path_, tmp_, flag_;
  std::FILE* f_ = nullptr;
  bool failed_ = false, finished_ = false, owns_ = false, durable_ = false;
  int write_errno_ = 0;
};

// Commits several outputs together: every file is finished first, so a write
// error on any of them leaves all the previous files in place; only then are
// they renamed, one after the other with nothing in between that can fail.
void commit_all(const std::vector<AtomicFile*>& files);

// Formats into a buffer and hands the file large pieces (writers of traces
// and CSV files with millions of lines).
class FormattedOut {
 public:
  explicit FormattedOut(AtomicFile& f) : f_(f) {}
  ~FormattedOut() = default;
  template <typename... Args>
  void put(fmt::format_string<Args...> s, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), s, std::forward<Args>(args)...);
    if (buf_.size() > (1u << 20)) flush();
  }
  void flush() {
    f_.write(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
  }

 private:
  AtomicFile& f_;
  fmt::memory_buffer buf_;
};

}  // namespace ringsim
