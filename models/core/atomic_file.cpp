#include "models/core/atomic_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "models/core/errors.hpp"

namespace ringsim {

AtomicFile::AtomicFile(const std::string& path, const std::string& flag)
    : path_(path), tmp_(fmt::format("{}.tmp{}", path, static_cast<long>(getpid()))), flag_(flag) {
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_)
    throw InputError(fmt::format("{}: cannot write '{}': {}", flag_, path_, std::strerror(errno)));
}

AtomicFile::~AtomicFile() {
  if (f_) {
    std::fclose(f_);
    std::remove(tmp_.c_str());
  }
}

void AtomicFile::write(std::string_view s) {
  if (!failed_ && std::fwrite(s.data(), 1, s.size(), f_) != s.size()) failed_ = true;
}

void AtomicFile::commit() {
  const int err_before = failed_ ? EIO : 0;
  const bool ok = !failed_ && std::fflush(f_) == 0 && std::ferror(f_) == 0;
  const int e = ok ? 0 : (err_before ? err_before : errno);
  std::fclose(f_);
  f_ = nullptr;
  if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = ok ? errno : e;
    std::remove(tmp_.c_str());
    throw InputError(
        fmt::format("{}: cannot write '{}': {}", flag_, path_, std::strerror(err ? err : EIO)));
  }
}

}  // namespace ringsim
