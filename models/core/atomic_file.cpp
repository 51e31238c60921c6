#include "models/core/atomic_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
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

// The descriptor the data outputs on standard output write to, once
// check_outputs has moved the command's report to stderr (-1: not moved).
int g_data_stdout = -1;

// What identifies a file: device and inode when it exists, else its absolute,
// normalised path (where it would be created).
struct FileId {
  bool exists = false, char_device = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string where;
  bool same(const FileId& o) const {
    return exists == o.exists && (exists ? dev == o.dev && ino == o.ino : where == o.where);
  }
};
FileId id_of(const struct stat& st) {
  FileId id;
  id.exists = true;
  id.char_device = S_ISCHR(st.st_mode);
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  return id;
}
FileId file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return id_of(st);
  FileId id;
  std::error_code ec;
  id.where = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec).string();
  return id;
}
bool same_file_as_fd(const std::string& path, int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && file_id(path).same(id_of(st));
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}
}  // namespace

OutputTarget resolve_output(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  if (path == "-") return {OutputKind::Stdout, path};
  // A descriptor's own file (/dev/stdout, /dev/fd/3, /proc/self/fd/1): a
  // terminal, a pipe or the file a shell redirected into. Written through
  // the path, never replaced (replacing would unlink the shell's file), and
  // standard output itself is standard output.
  if (path == "/dev/stdout" || path == "/dev/stderr" || starts_with(path, "/dev/fd/") ||
      starts_with(path, "/proc/self/fd/")) {
    if (same_file_as_fd(path, STDOUT_FILENO)) return {OutputKind::Stdout, path};
    std::error_code ec;
    if (!fs::exists(fs::status(path, ec))) cannot_write(flag, path, std::strerror(EBADF));
    return {OutputKind::Through, path};
  }
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
  // The very file standard output goes to (`> out.csv` and `--csv out.csv`).
  // (Not a device: /dev/null may be both, and takes any number of writers.)
  if (fs::exists(st) && !fs::is_character_file(st) && same_file_as_fd(p.string(), STDOUT_FILENO))
    return {OutputKind::Stdout, path};
  if (fs::exists(st) && !fs::is_regular_file(st)) return {OutputKind::Through, p.string()};
  return {OutputKind::Replace, p.string()};
}

// The inputs their readers registered (register_input), in this process.
std::vector<PathArg>& registered_inputs() {
  static std::vector<PathArg> inputs;
  return inputs;
}

void register_input(const std::string& flag, const std::string& path) {
  if (path.empty() || path == "-") return;
  for (const auto& in : registered_inputs())
    if (in.flag == flag && in.path == path) return;
  registered_inputs().push_back({flag, path});
}

void check_outputs(const std::vector<PathArg>& outputs, const std::vector<PathArg>& inputs) {
  std::vector<std::pair<const PathArg*, FileId>> seen, read;
  const std::vector<PathArg>& registered = registered_inputs();
  for (const std::vector<PathArg>* list : {&inputs, &registered})
    for (const auto& in : *list)
      if (!in.path.empty() && in.path != "-") read.emplace_back(&in, file_id(in.path));
  bool stdout_taken = false;
  const PathArg* stdout_by = nullptr;
  for (const auto& o : outputs) {
    if (o.path.empty()) continue;
    const auto t = resolve_output(o.path, o.flag);
    if (t.kind == OutputKind::Stdout) {
      if (stdout_taken)
        throw InputError(
            fmt::format("{}: '{}' (standard output) is also the {} output; give each "
                        "output its own file",
                        o.flag, o.path, stdout_by->flag));
      stdout_taken = true;
      stdout_by = &o;
      continue;
    }
    if (t.kind == OutputKind::Replace) {
      auto dir = std::filesystem::path(t.path).parent_path();
      if (dir.empty()) dir = ".";
      std::error_code ec;
      const auto st = std::filesystem::status(dir, ec);
      if (!std::filesystem::exists(st)) cannot_write(o.flag, o.path, std::strerror(ENOENT));
      if (!std::filesystem::is_directory(st)) cannot_write(o.flag, o.path, std::strerror(ENOTDIR));
      if (::access(dir.c_str(), W_OK | X_OK) != 0)
        cannot_write(o.flag, o.path, std::strerror(errno));
    } else if (::access(t.path.c_str(), W_OK) != 0) {
      cannot_write(o.flag, o.path, std::strerror(errno));
    }
    const auto id = file_id(t.path);
    for (const auto& [prev, pid] : seen)
      if (pid.same(id) && !id.char_device)
        throw InputError(
            fmt::format("{}: '{}' is also the {} output; give each output its own file", o.flag,
                        o.path, prev->flag));
    for (const auto& [in, iid] : read)
      if (iid.exists && iid.same(id))
        throw InputError(fmt::format(
            "{}: '{}' is the {} input; writing it would replace what is read, so give another "
            "path",
            o.flag, o.path, in->flag));
    seen.emplace_back(&o, id);
  }
  // Data on standard output: the command's report (its table or JSON) moves
  // to stderr, so the data stream is the data alone.
  if (stdout_taken && g_data_stdout < 0) {
    std::fflush(stdout);
    g_data_stdout = ::dup(STDOUT_FILENO);
    if (g_data_stdout >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
}

AtomicFile::AtomicFile(const std::string& path, const std::string& flag)
    : target_(resolve_output(path, flag)), path_(path), flag_(flag) {
  if (target_.kind == OutputKind::Stdout) {
    std::fflush(stdout);
    if (g_data_stdout >= 0) {
      f_ = ::fdopen(::dup(g_data_stdout), "wb");
      owns_ = f_ != nullptr;
    }
    if (!f_) f_ = stdout;
    return;
  }
  tmp_ = target_.kind == OutputKind::Replace
             ? fmt::format("{}.tmp{}", target_.path, static_cast<long>(getpid()))
             : target_.path;
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) cannot_write(flag_, path_, std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (finished_) {  // finished but never published: the previous file stays
    std::remove(tmp_.c_str());
    return;
  }
  if (!f_ || (target_.kind == OutputKind::Stdout && !owns_)) return;
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
  finish();
  publish();
}

void AtomicFile::publish() {
  if (target_.kind != OutputKind::Replace || !finished_) return;
  finished_ = false;
  if (std::rename(tmp_.c_str(), target_.path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp_.c_str());
    cannot_write(flag_, path_, std::strerror(err));
  }
}

void commit_all(const std::vector<AtomicFile*>& files) {
  for (auto* f : files) f->finish();
  for (auto* f : files) f->publish();
}

void AtomicFile::finish() {
  if (!f_) return;  // already finished
  const int err_before = failed_ ? (write_errno_ ? write_errno_ : EIO) : 0;
  const bool ok = !failed_ && std::fflush(f_) == 0 && std::ferror(f_) == 0 &&
                  (!durable_ || target_.kind != OutputKind::Replace || ::fsync(::fileno(f_)) == 0);
  const int e = ok ? 0 : (err_before ? err_before : errno);
  const auto fail = [&](int err) { cannot_write(flag_, path_, std::strerror(err ? err : EIO)); };
  if (target_.kind == OutputKind::Stdout) {
    const bool closed = !owns_ || std::fclose(f_) == 0;
    f_ = nullptr;
    if (!ok || !closed) fail(ok ? errno : e);
    return;
  }
  const bool closed = std::fclose(f_) == 0;
  const int close_err = closed ? 0 : errno;
  f_ = nullptr;
  if (target_.kind == OutputKind::Through) {
    if (!ok || !closed) fail(ok ? close_err : e);
    return;
  }
  if (!ok || !closed) {
    std::remove(tmp_.c_str());
    fail(!ok ? e : close_err);
  }
  finished_ = true;
}

void check_folder_parent(const std::string& flag, const std::string& dir) {
  if (dir.empty()) return;
  const std::filesystem::path d(dir);
  const auto parent = d.has_parent_path() ? d.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(parent, ec))
    throw InputError(
        fmt::format("{}: the parent folder '{}' of '{}' does not exist; create it first", flag,
                    parent.string(), dir));
}

}  // namespace ringsim
