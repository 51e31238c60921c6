#include "models/core/nccl_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

namespace ringsim {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> tokens(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

bool number(const std::string& s, double& v) {
  return read_decimal(s, v);
}

// The names nccl-tests gives its binaries, each with the collective it times;
// the others (broadcast, reduce, gather, scatter, hypercube) are not read.
struct TestName {
  const char* binary;
  std::optional<MeasuredKind> kind;
};
const TestName kTests[] = {{"all_reduce_perf", MeasuredKind::AllReduce},
                           {"all_gather_perf", MeasuredKind::AllGather},
                           {"reduce_scatter_perf", MeasuredKind::ReduceScatter},
                           {"alltoall_perf", MeasuredKind::AllToAll},
                           {"sendrecv_perf", MeasuredKind::SendRecv},
                           {"broadcast_perf", std::nullopt},
                           {"reduce_perf", std::nullopt},
                           {"gather_perf", std::nullopt},
                           {"scatter_perf", std::nullopt},
                           {"hypercube_perf", std::nullopt}};

// `word` in `text` as a whole name (not the tail of a longer one:
// all_reduce_perf holds reduce_perf).
bool names(const std::string& text, const std::string& word) {
  for (auto p = text.find(word); p != std::string::npos; p = text.find(word, p + 1)) {
    const bool start =
        p == 0 || !(std::isalnum(static_cast<unsigned char>(text[p - 1])) || text[p - 1] == '_');
    if (start) return true;
  }
  return false;
}

struct Layout {
  std::size_t fields = 0;
  std::size_t time = 0, algbw = 0, busbw = 0;  // out-of-place
  std::size_t time_ip = 0;                     // in-place (0: none)
};

// The column header: "size count type [redop [root]] time algbw busbw
// #wrong|error time algbw busbw #wrong|error".
std::optional<Layout> header(const std::vector<std::string>& t) {
  if (t.size() < 6 || t[0] != "size" || t[1] != "count") return std::nullopt;
  Layout l;
  l.fields = t.size();
  for (std::size_t i = 0; i + 2 < t.size(); ++i)
    if (t[i] == "time" && t[i + 1] == "algbw" && t[i + 2] == "busbw") {
      if (l.time == 0) {
        l.time = i, l.algbw = i + 1, l.busbw = i + 2;
      } else if (l.time_ip == 0) {
        l.time_ip = i;
      }
    }
  if (l.time == 0) return std::nullopt;
  return l;
}

struct Ranks {
  std::set<std::pair<std::string, int>> gpus;  // (host, device)
  std::vector<std::string> names, hosts;
};

// "Rank 0 [Group 0] Pid 1234 on HOST device 0 [0x07] NVIDIA A100-SXM4-80GB",
// read by tokens (a regex over a pasted line of any length may recurse deep).
void rank_line(const std::string& body, const std::vector<std::string>& t, Ranks& r) {
  std::size_t i = 0;
  auto is = [&](const char* w) { return i < t.size() && t[i] == w; };
  if (!is("Rank")) return;
  i += 2;
  if (is("Group")) i += 2;
  if (!is("Pid")) return;
  i += 2;
  if (!is("on") || i + 4 >= t.size()) return;
  const std::string host = t[i + 1];
  i += 2;
  double device = 0;
  if (!is("device") || !number(t[i + 1], device) || device < 0 || device > 1e6 ||
      t[i + 2].front() != '[')
    return;
  const auto bracket = body.find(']', body.find(" device "));
  if (bracket == std::string::npos) return;
  const std::string name = trim(body.substr(bracket + 1));
  if (name.empty()) return;
  r.gpus.insert({host, static_cast<int>(device)});
  if (std::find(r.names.begin(), r.names.end(), name) == r.names.end()) r.names.push_back(name);
  if (std::find(r.hosts.begin(), r.hosts.end(), host) == r.hosts.end()) r.hosts.push_back(host);
}

NcclTestsRow row(const std::vector<std::string>& t, const Layout& l, const std::string& where) {
  if (t.size() != l.fields)
    throw InputError(
        fmt::format("{}: a row of {} fields where the header has {} (a truncated or "
                    "edited table?)",
                    where, t.size(), l.fields));
  NcclTestsRow r;
  double v = 0;
  if (!number(t[0], r.bytes) || r.bytes <= 0 || r.bytes != std::floor(r.bytes) || r.bytes > 1e15)
    throw InputError(
        fmt::format("{}: size '{}' is not a whole number of bytes", where, one_line(t[0])));
  const bool oop = number(t[l.time], v) && v > 0;
  r.time_us = oop ? v : 0;
  if (!oop && !(l.time_ip > 0 && number(t[l.time_ip], r.time_us) && r.time_us > 0))
    throw InputError(
        fmt::format("{}: no positive time in microseconds (got '{}')", where, one_line(t[l.time])));
  const std::size_t base = oop ? l.time : l.time_ip;
  if (!number(t[base + 1], r.algbw) || !number(t[base + 2], r.busbw) || r.algbw < 0 || r.busbw < 0)
    throw InputError(fmt::format("{}: algbw and busbw must be numbers in GB/s", where));
  // The #wrong column after busbw ("N/A" when nccl-tests ran with -c 0): a
  // row whose results were wrong timed a broken run, not the fabric.
  double wrong = 0;
  if (base + 3 < t.size() && number(t[base + 3], wrong) && wrong != 0)
    throw InputError(fmt::format(
        "{}: #wrong is {} at {} bytes: nccl-tests found wrong results, so the row times a broken "
        "run; rerun the test and import a clean log",
        where, one_line(t[base + 3]), one_line(t[0])));
  return r;
}

}  // namespace

std::optional<MeasuredKind> nccl_tests_kind(const std::string& text, const std::string& file) {
  std::set<std::string> found;
  std::optional<MeasuredKind> kind;
  for (const auto& t : kTests)
    if (names(text, t.binary)) {
      found.insert(t.binary);
      kind = t.kind;
    }
  if (found.size() == 1) return kind;
  if (!found.empty()) return std::nullopt;
  // No binary named inside: the file's own name (all_reduce.txt, allgather-16gpu.log).
  const auto base =
      file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
  std::string squeezed;
  for (const char c : base)
    if (c != '_' && c != '-')
      squeezed += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::set<MeasuredKind> kinds;
  const std::pair<const char*, MeasuredKind> stems[] = {
      {"allreduce", MeasuredKind::AllReduce},
      {"allgather", MeasuredKind::AllGather},
      {"reducescatter", MeasuredKind::ReduceScatter},
      {"alltoall", MeasuredKind::AllToAll},
      {"sendrecv", MeasuredKind::SendRecv}};
  for (const auto& [stem, k] : stems)
    if (squeezed.find(stem) != std::string::npos) kinds.insert(k);
  if (kinds.size() == 1) return *kinds.begin();
  return std::nullopt;
}

NcclTestsRun parse_nccl_tests(const std::string& text, const std::string& origin,
                              MeasuredKind kind) {
  NcclTestsRun run;
  run.kind = kind;
  Ranks ranks;
  std::optional<Layout> layout;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    std::string body = trim(line);
    const bool comment = !body.empty() && body[0] == '#';
    while (!body.empty() && body[0] == '#') body = trim(body.substr(1));
    if (body.empty()) continue;
    const auto t = tokens(body);
    rank_line(body, t, ranks);
    if (auto h = header(t)) {
      if (layout && layout->fields != h->fields)
        throw InputError(
            fmt::format("{}: line {}: a second results table with other columns "
                        "(one nccl-tests run per file)",
                        origin, n));
      layout = h;
      continue;
    }
    // A results row: its first field a number, or (a malformed size) the
    // header's field count with a number where the time goes; other lines
    // between the rows (NCCL_DEBUG's INFO lines) are not results.
    double first = 0, time = 0;
    const bool shaped = layout && t.size() == layout->fields && number(t[layout->time], time);
    if (comment || !layout || t.empty() || (!number(t[0], first) && !shaped)) continue;
    run.rows.push_back(row(t, *layout, fmt::format("{}: line {}", origin, n)));
  }
  if (!layout)
    throw InputError(
        fmt::format("{}: no nccl-tests results table (the header line 'size count "
                    "type ... time algbw busbw')",
                    origin));
  if (run.rows.size() < 2)
    throw InputError(
        fmt::format("{}: the results table has {} row(s); at least 2 message sizes "
                    "are needed",
                    origin, run.rows.size()));
  if (ranks.gpus.empty())
    throw InputError(
        fmt::format("{}: no '#  Rank N ... on HOST device D [..] GPU' lines: keep "
                    "what nccl-tests prints under '# Using devices' (the GPUs and "
                    "their hosts)",
                    origin));
  if (ranks.names.size() > 1)
    throw InputError(fmt::format("{}: mixed GPUs ('{}' and '{}'): one kind of GPU per file", origin,
                                 one_line(ranks.names[0]), one_line(ranks.names[1])));
  run.ranks = static_cast<int>(ranks.gpus.size());
  run.nodes = static_cast<int>(ranks.hosts.size());
  run.hosts = ranks.hosts;
  run.gpu = ranks.names.front();
  if (run.ranks < 2)
    throw InputError(fmt::format("{}: one GPU: a collective needs at least 2 ranks", origin));
  std::sort(run.rows.begin(), run.rows.end(),
            [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  for (std::size_t i = 1; i < run.rows.size(); ++i)
    if (run.rows[i].bytes == run.rows[i - 1].bytes)
      throw InputError(fmt::format("{}: size {} appears twice (one nccl-tests run per file)",
                                   origin, run.rows[i].bytes));
  // The table's own busbw/algbw says which collective over how many ranks
  // it timed: a mislabelled file is refused, not read as another collective.
  const double want = bus_factor(kind, run.ranks);
  for (const auto& r : run.rows)
    if (r.algbw >= 1.0 && std::abs(r.busbw / r.algbw / want - 1) > 0.03)
      throw InputError(fmt::format(
          "{}: busbw/algbw is {:.3f} at {} bytes, where {} over {} ranks gives {:.3f}: another "
          "collective or rank count (name the collective as KIND=FILE)",
          origin, r.busbw / r.algbw, r.bytes, to_string(kind), run.ranks, want));
  return run;
}

MeasuredCurve NcclTestsRun::curve(const std::string& source) const {
  MeasuredCurve c;
  c.kind = kind;
  c.ranks = ranks;
  c.nodes = nodes;
  c.gpu = gpu;
  c.source = source;
  for (const auto& r : rows) c.points.emplace_back(r.bytes, r.time_us * 1e-6);
  return c;
}

}  // namespace ringsim
