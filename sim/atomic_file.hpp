#pragma once
// A file that appears complete or not at all: written to a temporary name next
// to the target and renamed over it on commit(). An interrupted or failed run
// leaves the previous file (if any) untouched and no partial file behind.
#include <cstdio>
#include <string>
#include <string_view>

namespace ringsim::sim {

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

}  // namespace ringsim::sim
