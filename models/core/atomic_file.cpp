#include "models/core/atomic_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "models/core/errors.hpp"

namespace ringsim {

namespace {
// The one shape of every output error: "--trace: cannot write 'x': why".
[[noreturn]] void cannot_write(const std::string& flag, const std::string& path,
                               const std::string& why) {
  throw InputError(fmt::format("{}: cannot write '{}': {}", flag, path, why));
}
}  // namespace

OutputTarget resolve_output(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  if (path == "-") return {OutputKind::Stdout, path};
  fs::path p(path);
  std::error_code ec;
  // Follow a chain of links by hand: a dangling link's target does not exist
  // yet, which canonical() refuses, but it is where the file must be created.
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops == 40) cannot_write(flag, path, "too many levels of symbolic links");
    const auto next = fs::read_symlink(p, ec);
    if (ec) cannot_write(flag, path, ec.message());
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  const auto st = fs::status(p, ec);
  if (fs::is_directory(st)) cannot_write(flag, path, "it is a directory");
  if (fs::exists(st) && !fs::is_regular_file(st)) return {OutputKind::Through, p.string()};
  return {OutputKind::Replace, p.string()};
}

AtomicFile::AtomicFile(const std::string& path, const std::string& flag)
    : target_(resolve_output(path, flag)), path_(path), flag_(flag) {
  if (target_.kind == OutputKind::Stdout) {
    f_ = stdout;
    return;
  }
  tmp_ = target_.kind == OutputKind::Replace
             ? fmt::format("{}.tmp{}", target_.path, static_cast<long>(getpid()))
             : target_.path;
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) cannot_write(flag_, path_, std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!f_ || target_.kind == OutputKind::Stdout) return;
  std::fclose(f_);
  // Only a temporary file is removed; a device or FIFO written through stays.
  if (target_.kind == OutputKind::Replace) std::remove(tmp_.c_str());
}

void AtomicFile::write(std::string_view s) {
  if (!failed_ && std::fwrite(s.data(), 1, s.size(), f_) != s.size()) {
    failed_ = true;
    write_errno_ = errno;  // e.g. ENOSPC from /dev/full, EPIPE from a closed pipe
  }
}

void AtomicFile::commit() {
  const int err_before = failed_ ? (write_errno_ ? write_errno_ : EIO) : 0;
  const bool ok = !failed_ && std::fflush(f_) == 0 && std::ferror(f_) == 0;
  const int e = ok ? 0 : (err_before ? err_before : errno);
  const auto fail = [&](int err) { cannot_write(flag_, path_, std::strerror(err ? err : EIO)); };
  if (target_.kind == OutputKind::Stdout) {
    f_ = nullptr;
    if (!ok) fail(e);
    return;
  }
  const bool closed = std::fclose(f_) == 0;
  const int close_err = closed ? 0 : errno;
  f_ = nullptr;
  if (target_.kind == OutputKind::Through) {
    if (!ok || !closed) fail(ok ? close_err : e);
    return;
  }
  if (!ok || !closed || std::rename(tmp_.c_str(), target_.path.c_str()) != 0) {
    const int err = !ok ? e : !closed ? close_err : errno;
    std::remove(tmp_.c_str());
    fail(err);
  }
}

}  // namespace ringsim
