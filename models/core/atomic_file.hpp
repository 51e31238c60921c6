#pragma once
// Every output file goes through here. What happens depends on what the path is:
// - a regular file, or nothing yet: written to a temporary name next to it and
//   renamed over it on commit(), so it appears complete or not at all; an
//   interrupted or failed run leaves the previous file untouched and no partial
//   file behind;
// - a symbolic link: the same, for the file the link (finally) points at; the
//   link itself stays;
// - a device, FIFO or socket (`/dev/null`, a pipe a reader waits on), or `-`
//   (standard output): written through, never renamed over, so no system file
//   is ever replaced by a regular one;
// - a directory: refused.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace ringsim {

// How an output path is written (see above).
enum class OutputKind { Replace, Through, Stdout };
struct OutputTarget {
  OutputKind kind = OutputKind::Replace;
  std::string path;  // where the bytes go: the symlink's final target, or the path itself
};
// Throws InputError naming `flag` for a directory or a symlink loop.
OutputTarget resolve_output(const std::string& path, const std::string& flag);

class AtomicFile {
 public:
  // Throws InputError naming `flag` and the path if the file cannot be created.
  AtomicFile(const std::string& path, const std::string& flag);
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view s);
  // Flushes, closes and renames; throws InputError on any I/O failure.
  void commit();

 private:
  OutputTarget target_;
  std::string path_, tmp_, flag_;
  std::FILE* f_ = nullptr;
  bool failed_ = false;
  int write_errno_ = 0;
};

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
