#pragma once
// A file that appears complete or not at all: written to a temporary name next
// to the target and renamed over it on commit(). An interrupted or failed run
// leaves the previous file (if any) untouched and no partial file behind.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace ringsim {

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
  std::string path_, tmp_, flag_;
  std::FILE* f_ = nullptr;
  bool failed_ = false;
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
