// PyTorch profiler (Kineto) trace reader: see kineto_trace.hpp.
#include "models/core/kineto_trace.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

namespace ringsim {
namespace {

bool starts_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 2> magic{};
  in.read(reinterpret_cast<char*>(magic.data()), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

std::string inflate_file(const std::string& path, const std::string& where,
                         std::uint64_t max_bytes) {
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzopen(path.c_str(), "rb"), gzclose);
  if (!gz) throw InputError(fmt::format("{}: cannot open", where));
  std::string out;
  std::array<char, 1 << 16> buf{};
  while (true) {
    const int n = gzread(gz.get(), buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int code = 0;
      throw InputError(
          fmt::format("{}: corrupt gzip stream ({})", where, one_line(gzerror(gz.get(), &code))));
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
    if (out.size() > max_bytes)
      throw InputError(fmt::format(
          "{}: inflates to more than {}; cut the trace to a few steps (torch.profiler's "
          "schedule(wait, warmup, active)) and pass that",
          where, human_bytes(static_cast<double>(max_bytes))));
  }
  // gzread returns what it has at a cut-off stream; zlib then reports
  // Z_BUF_ERROR ("the input ended in the middle of a gzip stream").
  int code = 0;
  gzerror(gz.get(), &code);
  if (code == Z_BUF_ERROR || !gzeof(gz.get()))
    throw InputError(fmt::format("{}: truncated gzip stream", where));
  if (code != Z_OK) throw InputError(fmt::format("{}: corrupt gzip stream", where));
  return out;
}

}  // namespace

std::string read_trace_text(const std::string& path, const std::string& flag,
                            std::uint64_t max_bytes) {
  const std::string where = fmt::format("{} {}", flag, one_line(path));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(where + ": no such file");
  if (!S_ISREG(st.st_mode)) throw InputError(where + ": not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw InputError(
        fmt::format("{}: {} is over the {} a trace may have; cut the trace to a few steps "
                    "(torch.profiler's schedule(wait, warmup, active)) and pass that",
                    where, human_bytes(static_cast<double>(st.st_size)),
                    human_bytes(static_cast<double>(max_bytes))));
  if (starts_gzip(path)) return inflate_file(path, where, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(where + ": cannot open");
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

namespace {

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&s](const char* n) { return s == n; });
}

// pid and tid are numbers, or strings in some exporters: a string maps to a
// stable id of its own, far from real thread ids.
// A JSON number as an integer id: a fraction is cut, a value beyond int64
// (which no id is) is `fallback` rather than an undefined conversion.
std::int64_t integral(const nlohmann::json& v, std::int64_t fallback) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  const double x = v.get<double>();
  return std::isfinite(x) && std::abs(x) < 9e18 ? static_cast<std::int64_t>(x) : fallback;
}

std::int64_t id_of(const nlohmann::json& v) {
  if (v.is_number()) return integral(v, 0);
  if (v.is_string())
    return -1 - static_cast<std::int64_t>(std::hash<std::string>{}(v.get<std::string>()) >> 2);
  return 0;
}

std::int64_t int_arg(const nlohmann::json& args, const char* key, std::int64_t fallback) {
  const auto it = args.find(key);
  if (it == args.end()) return fallback;
  if (it->is_number()) return integral(*it, fallback);
  return fallback;
}

// What the attribution needs from one event; false: not kept.
bool keep_event(const nlohmann::json& e, KinetoTrace& t) {
  const auto cat = e.value("cat", std::string());
  const bool kernel = one_of(cat, {"kernel", "Kernel"});
  const bool launch = one_of(cat, {"cuda_runtime", "cuda_driver", "Runtime", "Driver"});
  const bool op = one_of(cat, {"cpu_op", "Operator", "user_annotation"});
  if (!kernel && !launch && !op) return false;
  const auto name = e.find("name");
  const auto ts = e.find("ts");
  const auto dur = e.find("dur");
  if (name == e.end() || !name->is_string() || ts == e.end() || !ts->is_number() ||
      (dur != e.end() && !dur->is_number())) {
    ++t.malformed;
    return false;
  }
  const double d = dur == e.end() ? 0.0 : dur->get<double>();
  static const nlohmann::json kNoArgs = nlohmann::json::object();
  const auto a = e.find("args");
  const auto& args = a != e.end() && a->is_object() ? *a : kNoArgs;
  if (d < 0) {
    ++t.malformed;
    return false;
  }
  if (kernel) {
    t.kernels.push_back({name->get<std::string>(), ts->get<double>(), d, int_arg(args, "device", 0),
                         int_arg(args, "stream", 0), int_arg(args, "correlation", -1), args});
  } else if (launch) {
    const auto corr = int_arg(args, "correlation", -1);
    if (corr >= 0)
      t.launches.push_back({ts->get<double>(), id_of(e.value("pid", nlohmann::json())),
                            id_of(e.value("tid", nlohmann::json())), corr});
  } else {
    t.ops.push_back({name->get<std::string>(), ts->get<double>(), d,
                     id_of(e.value("pid", nlohmann::json())),
                     id_of(e.value("tid", nlohmann::json())), args});
  }
  return true;
}

std::string version_text(const nlohmann::json& v) {
  if (v.is_number_integer()) {
    const auto n = v.get<std::int64_t>();  // CUDA's 12040 = 12.4
    return fmt::format("{}.{}", n / 1000, (n % 1000) / 10);
  }
  return v.is_string() ? one_line(v.get<std::string>()) : std::string();
}

void read_header(const nlohmann::json& doc, KinetoTrace& t) {
  if (!doc.is_object()) return;
  const auto props = doc.find("deviceProperties");
  if (props != doc.end() && props->is_array() && !props->empty() && (*props)[0].is_object()) {
    const auto& p = (*props)[0];
    if (p.contains("name") && p["name"].is_string())
      t.device_name = one_line(p["name"].get<std::string>());
    if (p.contains("numSms") && p["numSms"].is_number_integer())
      t.sm_count = p["numSms"].get<int>();
    if (p.contains("totalGlobalMem") && p["totalGlobalMem"].is_number_unsigned())
      t.device_memory = p["totalGlobalMem"].get<std::uint64_t>();
  }
  if (doc.contains("cuda_runtime_version")) t.runtime = version_text(doc["cuda_runtime_version"]);
  if (doc.contains("cuda_driver_version")) t.driver = version_text(doc["cuda_driver_version"]);
  const auto base = doc.find("baseTimeNanoseconds");
  if (base != doc.end() && base->is_number_integer()) t.base_time_ns = base->get<std::int64_t>();
  const auto shapes = doc.find("record_shapes");
  t.record_shapes = shapes != doc.end() && shapes->is_number() && shapes->get<double>() != 0;
}

}  // namespace

KinetoTrace parse_kineto_trace(const std::string& text, const std::string& origin) {
  KinetoTrace t;
  // Events are turned into structs as they finish parsing and dropped from
  // the document, so only the header stays in memory as JSON.
  const nlohmann::json::parser_callback_t keep =
      [&t](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event == nlohmann::json::parse_event_t::key && depth == 1)
          return !one_of(parsed.get<std::string>(), {"metadata", "distributedInfo"});
        if (event == nlohmann::json::parse_event_t::object_end && parsed.contains("ph") &&
            parsed.contains("ts")) {
          keep_event(parsed, t);
          return false;
        }
        return true;
      };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, keep);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a JSON trace ({})", origin, one_line(e.what())));
  }
  const bool events = doc.is_array() || (doc.is_object() && doc.contains("traceEvents") &&
                                         doc["traceEvents"].is_array());
  if (!events)
    throw InputError(
        fmt::format("{}: no traceEvents array; pass a trace written by torch.profiler "
                    "(prof.export_chrome_trace or tensorboard_trace_handler)",
                    origin));
  read_header(doc, t);
  if (t.kernels.empty())
    throw InputError(fmt::format(
        "{}: no GPU kernel in the trace; profile with activities=[ProfilerActivity.CPU, "
        "ProfilerActivity.CUDA]",
        origin));
  return t;
}

std::vector<std::vector<std::size_t>> enclosing_ops(const KinetoTrace& trace) {
  std::vector<std::vector<std::size_t>> out(trace.kernels.size());
  std::map<std::int64_t, std::size_t> launch_of;  // correlation -> launch
  for (std::size_t i = 0; i < trace.launches.size(); ++i)
    launch_of.emplace(trace.launches[i].correlation, i);
  // Per thread: operators by start (longest first at a tie, so a parent
  // precedes its child) and the launches to place, by time.
  using Thread = std::pair<std::int64_t, std::int64_t>;
  std::map<Thread, std::vector<std::size_t>> ops, asks;
  for (std::size_t i = 0; i < trace.ops.size(); ++i)
    ops[{trace.ops[i].pid, trace.ops[i].tid}].push_back(i);
  std::vector<std::size_t> kernel_launch(trace.kernels.size(), SIZE_MAX);
  for (std::size_t k = 0; k < trace.kernels.size(); ++k) {
    const auto it = launch_of.find(trace.kernels[k].correlation);
    if (trace.kernels[k].correlation < 0 || it == launch_of.end()) continue;
    kernel_launch[k] = it->second;
    const auto& l = trace.launches[it->second];
    asks[{l.pid, l.tid}].push_back(k);
  }
  for (auto& [thread, kernels] : asks) {
    auto& list = ops[thread];
    std::sort(list.begin(), list.end(), [&trace](std::size_t a, std::size_t b) {
      const auto &x = trace.ops[a], &y = trace.ops[b];
      return x.ts != y.ts ? x.ts < y.ts : (x.dur != y.dur ? x.dur > y.dur : a < b);
    });
    const auto at = [&](std::size_t k) { return trace.launches[kernel_launch[k]].ts; };
    std::stable_sort(kernels.begin(), kernels.end(),
                     [&at](std::size_t a, std::size_t b) { return at(a) < at(b); });
    // One sweep: the stack holds the operators open at the launch's time.
    std::vector<std::size_t> stack;
    std::size_t next = 0;
    for (const auto k : kernels) {
      const double t = at(k);
      for (; next < list.size() && trace.ops[list[next]].ts <= t; ++next) {
        const auto& o = trace.ops[list[next]];
        while (!stack.empty() && trace.ops[stack.back()].ts + trace.ops[stack.back()].dur < o.ts)
          stack.pop_back();
        stack.push_back(list[next]);
      }
      for (const auto o : stack)
        if (trace.ops[o].ts + trace.ops[o].dur >= t) out[k].push_back(o);
    }
  }
  return out;
}

std::vector<bool> overlapped_kernels(const KinetoTrace& trace) {
  std::vector<std::size_t> order(trace.kernels.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto& ks = trace.kernels;
  std::sort(order.begin(), order.end(), [&ks](std::size_t a, std::size_t b) {
    return ks[a].device != ks[b].device ? ks[a].device < ks[b].device
                                        : (ks[a].ts != ks[b].ts ? ks[a].ts < ks[b].ts : a < b);
  });
  std::vector<bool> out(ks.size(), false);
  // The kernel that reaches furthest so far on this device: anything that
  // starts before it ends, on another stream, overlaps it.
  std::size_t reach = SIZE_MAX;
  for (const auto i : order) {
    if (reach != SIZE_MAX && ks[reach].device == ks[i].device &&
        ks[i].ts < ks[reach].ts + ks[reach].dur && ks[reach].stream != ks[i].stream)
      out[i] = out[reach] = true;
    if (reach == SIZE_MAX || ks[reach].device != ks[i].device ||
        ks[i].ts + ks[i].dur > ks[reach].ts + ks[reach].dur)
      reach = i;
  }
  return out;
}

}  // namespace ringsim
