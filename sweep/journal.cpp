#include "sweep/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"

namespace ringsim::sweep {

namespace {

constexpr std::string_view kPrefix = "{\"check\":\"";
constexpr std::size_t kCheckDigits = 16;

std::string check_of(std::string_view object_text) {
  return sha256_hex(object_text).substr(0, kCheckDigits);
}

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("--out {}: {}", path, what));
}

std::string kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a directory";
  return "not a regular file";
}

// "rows.jsonl" -> "rows.1.jsonl", the first such name that is free.
std::string free_sibling(const std::string& path) {
  const std::string ext = ".jsonl";
  const bool has_ext = path.size() > ext.size() && path.ends_with(ext);
  const auto stem = has_ext ? path.substr(0, path.size() - ext.size()) : path;
  for (int n = 1;; ++n) {
    const auto p = fmt::format("{}.{}{}", stem, n, has_ext ? ext : "");
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(p, ec))) return p;
  }
}

void write_all(int fd, std::string_view s, const std::string& path) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) refuse(path, fmt::format("cannot append to the journal: {}", std::strerror(errno)));
    s.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::fdatasync(fd) != 0 && errno != EINVAL)
    refuse(path, fmt::format("cannot commit the journal to disk: {}", std::strerror(errno)));
}

std::string read_all(int fd, const std::string& path) {
  std::string text;
  char buf[1 << 16];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(path, fmt::format("cannot read the journal: {}", std::strerror(errno)));
    if (n == 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
}

}  // namespace

std::string frame(const nlohmann::json& j) {
  const auto body = j.dump();  // "{...}"
  std::string line(kPrefix);
  line.append(check_of(body)).append("\",").append(body, 1).append("\n");
  return line;
}

std::optional<nlohmann::json> unframe(std::string_view line) {
  const auto head = kPrefix.size() + kCheckDigits + 2;  // the prefix, the digits, `",`
  if (line.size() <= head || line.substr(0, kPrefix.size()) != kPrefix ||
      line.substr(kPrefix.size() + kCheckDigits, 2) != "\",")
    return std::nullopt;
  std::string body(1, '{');
  body.append(line.substr(head));
  if (check_of(body) != line.substr(kPrefix.size(), kCheckDigits)) return std::nullopt;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

JournalText parse_journal(std::string_view text) {
  JournalText t;
  std::size_t at = 0, bad_since_keep = 0;
  bool first = true;
  while (at < text.size()) {
    const auto nl = text.find('\n', at);
    if (nl == std::string_view::npos) {
      // No newline: never committed. A first line so cut is a torn header
      // only if it begins as every framed line does; other bytes are a file
      // this sweep did not write, refused whole, never cut.
      const auto cut = text.substr(at);
      if (first && !cut.starts_with(kPrefix) && !kPrefix.starts_with(cut)) t.foreign = true;
      break;
    }
    const auto j = unframe(text.substr(at, nl - at));
    at = nl + 1;
    if (first) {
      first = false;
      try {
        if (!j) throw std::runtime_error("unframed");
        t.header = header_from_json(*j);
      } catch (const std::exception&) {
        t.foreign = true;  // not ours: the caller refuses it whole
        return t;
      }
      t.keep = at;
      continue;
    }
    try {
      if (!j) throw std::runtime_error("unframed");
      auto r = row_from_json(*j);
      t.rows[r.key] = std::move(r);
      t.damaged += bad_since_keep;
      bad_since_keep = 0;
      t.keep = at;
    } catch (const std::exception&) {
      ++bad_since_keep;  // damaged if a good line follows, else part of the tail
    }
  }
  t.torn = text.size() - t.keep;
  return t;
}

Journal::Journal(const std::string& path, const JournalHeader& header, bool force_new,
                 bool aside_if_different)
    : path_(path), header_(header) {
  if (path.empty()) return;
  try {
    open(force_new, aside_if_different);
  } catch (...) {
    // A refused journal is not held: a long-lived process (Python) may retry.
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw;
  }
}

void Journal::open(bool force_new, bool aside_if_different) {
  open_locked();
  const auto text = read_all(fd_, path_);
  auto t = parse_journal(text);
  if (aside_if_different && !force_new)
    force_new = t.foreign || (t.header && !header_differences(*t.header, header_).empty());
  if (t.foreign && !force_new)
    refuse(path_,
           "is not a sweep journal of this ringsim (its first line is no journal header); give "
           "another --out, or add --force-new to keep it and start a new journal beside it");
  if (t.header && !force_new) {
    const auto d = header_differences(*t.header, header_);
    if (!d.empty())
      refuse(path_, fmt::format("its rows were computed under other settings ({}{}); rerun with "
                                "those, or add --force-new to keep it and start a new journal "
                                "beside it",
                                d.front(),
                                d.size() > 1 ? fmt::format(", and {} more", d.size() - 1) : ""));
  }
  if (force_new && !text.empty()) {
    const auto kept = free_sibling(path_);
    if (std::rename(path_.c_str(), kept.c_str()) != 0)
      refuse(path_, fmt::format("cannot move the old journal aside to {}: {}", kept,
                                std::strerror(errno)));
    notes_.push_back(fmt::format("--force-new: the old journal {} is kept as {}", path_, kept));
    ::close(fd_);  // its lock goes with it
    fd_ = -1;
    open_locked();
    start_new();
    return;
  }
  if (t.torn > 0) {
    if (::ftruncate(fd_, static_cast<off_t>(t.keep)) != 0)
      refuse(path_, fmt::format("cannot cut its torn tail: {}", std::strerror(errno)));
    notes_.push_back(fmt::format(
        "{}: cut {} byte(s) of a torn last line, left by an interrupted write; what it held "
        "is computed again",
        path_, t.torn));
  }
  if (t.damaged > 0)
    notes_.push_back(fmt::format(
        "{}: skipped {} damaged line(s) (their check does not match); their points run again",
        path_, t.damaged));
  if (!t.header) {
    start_new();
    return;
  }
  rows_ = std::move(t.rows);
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::open_locked() {
  // A finishing sweep renames its rewritten journal over the path; a lock
  // taken on the file it replaced would guard nothing, so check and retry.
  for (int attempt = 0; attempt < 10; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd_ < 0) refuse(path_, fmt::format("cannot open the journal: {}", std::strerror(errno)));
    struct stat held {};
    ::fstat(fd_, &held);
    if (!S_ISREG(held.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      refuse(path_, fmt::format("a journal must be a regular file, this is {}; give a file path",
                                kind_of(held.st_mode)));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        ::close(fd_);
        fd_ = -1;
        refuse(path_,
               "another sweep is writing this journal (it holds its lock); let it finish, or give "
               "another --out");
      }
      notes_.push_back(fmt::format("{}: cannot lock it ({}); make sure no other sweep uses it",
                                   path_, std::strerror(err)));
    }
    struct stat now {};
    if (::stat(path_.c_str(), &now) == 0 && now.st_ino == held.st_ino && now.st_dev == held.st_dev)
      return;
    ::close(fd_);
    fd_ = -1;
  }
  refuse(path_, "it keeps being replaced by another process; give another --out");
}

void Journal::start_new() {
  if (::ftruncate(fd_, 0) != 0)
    refuse(path_, fmt::format("cannot start the journal: {}", std::strerror(errno)));
  write_all(fd_, frame(to_json(header_)), path_);
  rows_.clear();
}

void Journal::append(const Row& r) {
  if (fd_ < 0) return;
  write_all(fd_, frame(to_json(r)), path_);
}

void Journal::rewrite(const std::vector<Row>& rows) {
  if (fd_ < 0) return;
  std::string text = frame(to_json(header_));
  for (const auto& r : rows) text += frame(to_json(r));
  AtomicFile f(path_, "--out");
  f.set_durable();
  f.write(text);
  commit_all({&f});
}

}  // namespace ringsim::sweep
