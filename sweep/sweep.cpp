#include "sweep/sweep.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "models/analytic/report.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/input_file.hpp"
#include "models/core/parse.hpp"
#include "proc/child.hpp"
#include "proc/resolve.hpp"
#include "proc/run_spec.hpp"
#include "sim/progress.hpp"
#include "sweep/journal.hpp"

namespace ringsim::sweep {

namespace {

constexpr std::size_t kMaxValues = 10000;

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// Where each sweepable flag's text lives in the run flags.
std::string* field(proc::RunFlags& f, const std::string& flag) {
  static const std::vector<std::pair<std::string, std::string proc::WorkloadFlags::*>> w{
      {"--devices", &proc::WorkloadFlags::devices},
      {"--block", &proc::WorkloadFlags::block},
      {"--layout", &proc::WorkloadFlags::layout},
      {"--pass", &proc::WorkloadFlags::pass},
      {"--dtype", &proc::WorkloadFlags::dtype},
      {"--model", &proc::WorkloadFlags::model},
      {"--d-model", &proc::WorkloadFlags::d_model},
      {"--layers", &proc::WorkloadFlags::layers},
      {"--heads", &proc::WorkloadFlags::heads},
      {"--kv-heads", &proc::WorkloadFlags::kv_heads},
      {"--head-dim", &proc::WorkloadFlags::head_dim},
      {"--ffn", &proc::WorkloadFlags::ffn},
      {"--ulysses-degree", &proc::WorkloadFlags::ulysses_degree},
      {"--scope", &proc::WorkloadFlags::scope},
      {"--tp", &proc::WorkloadFlags::tp},
      {"--sequence-parallel", &proc::WorkloadFlags::sequence_parallel},
      {"--ep", &proc::WorkloadFlags::ep},
      {"--routing-seed", &proc::WorkloadFlags::routing_seed},
      {"--documents", &proc::WorkloadFlags::documents},
      {"--pack", &proc::WorkloadFlags::pack}};
  static const std::vector<std::pair<std::string, std::string proc::HardwareFlags::*>> h{
      {"--gpu", &proc::HardwareFlags::gpu},
      {"--platform", &proc::HardwareFlags::platform},
      {"--gpus-per-node", &proc::HardwareFlags::gpus_per_node},
      {"--intra", &proc::HardwareFlags::intra},
      {"--inter", &proc::HardwareFlags::inter},
      {"--cluster", &proc::HardwareFlags::cluster},
      {"--flops", &proc::HardwareFlags::flops},
      {"--efficiency", &proc::HardwareFlags::efficiency},
      {"--bandwidth", &proc::HardwareFlags::bandwidth},
      {"--latency", &proc::HardwareFlags::latency},
      {"--kernel", &proc::HardwareFlags::kernel},
      {"--query-chunk-size", &proc::HardwareFlags::query_chunk},
      {"--key-chunk-size", &proc::HardwareFlags::key_chunk}};
  static const std::vector<std::pair<std::string, std::string proc::SimFlags::*>> s{
      {"--engine", &proc::SimFlags::engine},
      {"--network-model", &proc::SimFlags::network_model},
      {"--inter-topology", &proc::SimFlags::inter_topology},
      {"--jitter", &proc::SimFlags::jitter},
      {"--seed", &proc::SimFlags::seed},
      {"--symmetry", &proc::SimFlags::symmetry},
      {"--recurrence", &proc::SimFlags::recurrence},
      {"--overlap", &proc::SimFlags::overlap}};
  for (const auto& [name, m] : w)
    if (name == flag) return &(f.w.*m);
  for (const auto& [name, m] : h)
    if (name == flag) return &(f.hw.*m);
  for (const auto& [name, m] : s)
    if (name == flag) return &(f.sim.*m);
  return nullptr;
}

// Sets one swept flag; the list-valued fault flags take one fault per value
// ("none": no fault), and --causal takes on/off.
void set_flag(proc::RunFlags& f, const std::string& flag, const std::string& value) {
  if (is_set_axis(flag)) {
    // "--set KEY": this point's value of the key, in place of the list.
    const auto key = flag.substr(6);
    std::erase_if(f.hw.sets, [&](const std::string& kv) { return kv.rfind(key + "=", 0) == 0; });
    f.hw.sets.push_back(key + "=" + value);
  } else if (auto* p = field(f, flag)) {
    *p = value;
  } else if (flag == "--straggler" || flag == "--degrade") {
    auto& v = flag == "--straggler" ? f.sim.stragglers : f.sim.degrades;
    v.clear();
    if (value != "none") v.push_back(value);
  } else if (flag == "--causal") {
    f.w.causal = parse_choice("--causal", value, {"on", "off"}) == "on";
  }
}

// The first checks a point's child would make (names against the catalog,
// shape rules, flags the platform lacks), made here so that a point they
// refuse is a failed row without a child, and a grid they refuse whole (a
// bad base flag) is refused before anything runs. The same functions as
// `ringsim run`'s, so nothing the child would accept is refused here.
void refuse_unresolvable(std::vector<Point>& pts) {
  std::optional<Catalog> cat;
  std::string cat_error;
  for (auto& p : pts) {
    if (!p.spec) continue;
    try {
      if (!cat && cat_error.empty()) {
        try {
          cat = proc::load_catalog(p.spec->hardware);  // not sweepable: one for every point
        } catch (const InputError& e) {
          cat_error = e.what();
        }
      }
      if (!cat) throw InputError(cat_error);
      const auto hw = proc::resolve_hardware(p.spec->hardware, *cat, p.spec->workload.dtype);
      proc::refuse_flags_not_on(p.spec->hardware, hw.platform);
      (void)proc::resolve_workload(p.spec->workload, hw);
    } catch (const InputError& e) {
      p.spec.reset();
      p.error = e.what();
    }
  }
}

// Each point's input files, hashed once, now, at the sweep's start: the
// children are held to these bytes (RunSpec::inputs_sha256), so a file
// replaced mid-sweep fails the points left rather than mixing its rows in.
void hash_inputs(std::vector<Point>& pts) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::string> seen;
  for (auto& p : pts) {
    if (!p.spec) continue;
    const auto& s = *p.spec;
    const auto key = std::make_tuple(s.hardware.catalog, s.calibration, s.workload.documents,
                                     s.hardware.profile);
    auto it = seen.find(key);
    if (it == seen.end()) it = seen.emplace(key, inputs_hash(s)).first;
    p.spec->inputs_sha256 = it->second;
  }
}

}  // namespace

bool is_set_axis(const std::string& flag) {
  return flag.size() > 6 && flag.rfind("--set ", 0) == 0;
}

// Whether `run` parses `flag` as an integer (its CLI11 type name INT, or a
// token count): a range of such a flag must step by integers.
bool integer_flag(const std::string& flag) {
  static const std::set<std::string> names = [] {
    CLI::App app;
    proc::RunFlags f;
    proc::add_run_flags(&app, f);
    std::set<std::string> n;
    for (const auto* o : app.get_options())
      if (const auto t = o->get_type_name();
          t == flag_type::kInt || t == flag_type::kIntOrAuto || t == flag_type::kTokens)
        for (const auto& l : o->get_lnames()) n.insert("--" + l);
    return n;
  }();
  return names.count(flag) > 0;
}

bool sweepable(const std::string& flag) {
  const auto& f = sweepable_flags();
  return is_set_axis(flag) || std::find(f.begin(), f.end(), flag) != f.end();
}

const std::vector<std::string>& sweepable_flags() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"--devices",
                               "--block",
                               "--layout",
                               "--pass",
                               "--dtype",
                               "--model",
                               "--d-model",
                               "--layers",
                               "--heads",
                               "--kv-heads",
                               "--head-dim",
                               "--ffn",
                               "--ulysses-degree",
                               "--scope",
                               "--layer-kind",
                               "--gpu",
                               "--platform",
                               "--gpus-per-node",
                               "--intra",
                               "--inter",
                               "--cluster",
                               "--flops",
                               "--efficiency",
                               "--bandwidth",
                               "--latency",
                               "--kernel",
                               "--query-chunk-size",
                               "--key-chunk-size",
                               "--engine",
                               "--network-model",
                               "--inter-topology",
                               "--jitter",
                               "--seed",
                               "--symmetry",
                               "--recurrence",
                               "--overlap",
                               "--straggler",
                               "--degrade",
                               "--causal",
                               "--tp",
                               "--sequence-parallel",
                               "--documents",
                               "--pack",
                               "--ep",
                               "--routing-seed"};
    return n;
  }();
  return names;
}

char list_separator(const std::string& flag) {
  return flag == "--documents" ? '|' : ',';
}

bool axis_number(const std::string& value, double& x) {
  if (read_decimal(value, x)) return true;
  try {
    x = static_cast<double>(parse_count("--plot-x", value, 0, std::int64_t{1} << 62));
    return true;
  } catch (const InputError&) {
    return false;
  }
}

namespace {

// The items of a list: split at `sep`, except, for a --set value, inside
// brackets, so an array value ([0,13312]) is one item.
std::vector<std::string> split_items(const std::string& flag, const std::string& text, char sep) {
  const bool arrays = flag == "--set" || is_set_axis(flag);
  if (text.empty()) return {};
  std::vector<std::string> items(1);
  int depth = 0;
  for (char c : text) {
    if (arrays && c == '[') ++depth;
    if (arrays && c == ']' && depth > 0) --depth;
    if (c == sep && depth == 0)
      items.emplace_back();
    else
      items.back() += c;
  }
  return items;
}

}  // namespace

bool is_list(const std::string& flag, const std::string& text) {
  if (flag == "--documents") return text.find('|') != std::string::npos;
  return split_items(flag, text, ',').size() > 1 || text.find("..") != std::string::npos;
}

namespace {

// An integer text (with the K/M/G/T suffixes parse_count takes): ranges of
// integers step exactly; anything else is a decimal range.
bool integer_text(const std::string& t) {
  return !t.empty() && t.find_first_of(".eE") == std::string::npos;
}

// A decimal range (0.25..1:x2, 0.1..0.5:+0.1): each value is lo x k^i or
// lo + i x k, computed from lo (no running sum to drift) and printed with 15
// significant digits, so 0.1..0.3:+0.1 gives 0.1, 0.2, 0.3.
std::vector<std::string> decimal_range(const std::string& flag, const std::string& text,
                                       const std::string& a, const std::string& b,
                                       const std::string& step) {
  double lo = 0, hi = 0, k = 0;
  if (!read_decimal(a, lo) || !read_decimal(b, hi) || !read_decimal(step.substr(1), k) ||
      !std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(k) || lo < 0)
    throw InputError(
        fmt::format("{}: range '{}' needs non-negative numbers, as in 0.25..1:x2 or 0.1..0.5:+0.1",
                    flag, text));
  const bool mul = step[0] == 'x';
  if (hi < lo)
    throw InputError(
        fmt::format("{}: range '{}' runs backwards (from {} to {})", flag, text, a, b));
  if (mul ? (k <= 1 || lo == 0) : k <= 0)
    throw InputError(fmt::format(
        "{}: range '{}' never ends: a geometric step needs K > 1 and a start above 0, an "
        "arithmetic one K > 0",
        flag, text));
  std::vector<std::string> out;
  const double edge = hi * (1 + 1e-12);  // the last value may round a hair past hi
  for (std::size_t i = 0;; ++i) {
    const double v =
        mul ? lo * std::pow(k, static_cast<double>(i)) : lo + k * static_cast<double>(i);
    if (v > edge) break;
    out.push_back(fmt::format("{:.15g}", v));
    if (out.size() > kMaxValues)
      throw InputError(
          fmt::format("{}: range '{}' has more than {} values", flag, text, kMaxValues));
  }
  return out;
}

std::vector<std::string> integer_range(const std::string& flag, const std::string& text,
                                       const std::string& a, const std::string& b,
                                       const std::string& step) {
  // The ends and the step in the widest integer range: each value is then
  // judged by the flag's own parser, in its own words, when its point runs.
  auto read = [&](const std::string& t, std::int64_t min, const char* what) {
    try {
      return parse_count(flag, t, min, INT64_MAX);
    } catch (const InputError&) {
      throw InputError(
          fmt::format("{}: range '{}': {} '{}' must be an integer from {} to {} "
                      "(binary suffix K/M/G/T allowed)",
                      flag, text, what, t, min, INT64_MAX));
    }
  };
  const auto lo = read(a, 0, "its start");
  const auto hi = read(b, 0, "its end");
  if (hi < lo)
    throw InputError(
        fmt::format("{}: range '{}' runs backwards (from {} to {})", flag, text, lo, hi));
  const bool mul = step[0] == 'x';
  const auto k = read(step.substr(1), mul ? 2 : 1, mul ? "the factor of its step" : "its step");
  if (mul && lo == 0)
    throw InputError(fmt::format("{}: a geometric range cannot start at 0", flag));
  std::vector<std::string> out;
  for (std::int64_t v = lo; v <= hi;) {
    out.push_back(std::to_string(v));
    if (out.size() > kMaxValues)
      throw InputError(
          fmt::format("{}: range '{}' has more than {} values", flag, text, kMaxValues));
    if (mul ? v > hi / k : v > hi - k) break;
    v = mul ? v * k : v + k;
  }
  return out;
}

// A range: A..B, A..B:xK (geometric) or A..B:+K (arithmetic), of integers or decimals.
std::vector<std::string> expand_range(const std::string& flag, const std::string& text,
                                      std::size_t dots) {
  std::string rest = text.substr(dots + 2), step = "+1";
  if (const auto colon = rest.find(':'); colon != std::string::npos) {
    step = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+'))
    throw InputError(fmt::format(
        "{}: range step '{}' must be xK (multiply by K) or +K (add K), as in 2K..32K:x2", flag,
        step));
  const auto a = trim(text.substr(0, dots)), b = trim(rest);
  if (integer_text(a) && integer_text(b) && integer_text(step.substr(1)))
    return integer_range(flag, text, a, b, step);
  // An integer flag's range steps by integers: refused here, once, rather
  // than as a failed row per fractional value.
  if (integer_flag(flag))
    throw InputError(fmt::format(
        "{}: range '{}': {} takes integers; give integer ends and step, as in 1..8:x2 or 1..8:+1",
        flag, text, flag));
  return decimal_range(flag, text, a, b, step);
}

// What a list item means, so that two spellings of one value (4K and 4096,
// 0.5 and .50) count as the same point: a count with binary units, else a
// decimal, else the text itself (a layout, a cluster name).
std::string list_value(const std::string& item) {
  try {
    return "count:" + std::to_string(parse_count("", item, 0, kMaxTokens));
  } catch (const InputError&) {
  }
  try {
    return fmt::format("real:{}", parse_real("", item, -1e300, 1e300));
  } catch (const InputError&) {
  }
  return "text:" + item;
}

}  // namespace

std::vector<std::string> expand(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  const char sep = list_separator(flag);
  // --documents' own values hold ',' (8K,2K) and '..' (uniform:A..B): its
  // list is '|'-separated and has no ranges.
  const auto dots = sep == ',' ? text.find("..") : std::string::npos;
  const auto items = split_items(flag, text, sep);
  if (dots != std::string::npos && items.size() > 1)
    throw InputError(fmt::format(
        "{}: '{}' mixes a range with a list; give one range (2K..32K:x2) or list every value", flag,
        text));
  if (dots != std::string::npos) return expand_range(flag, text, dots);
  std::vector<std::string> values;  // list_value of each item, in order
  for (auto item : items) {
    item = trim(item);
    if (item.empty()) throw InputError(fmt::format("{}: empty value in the list '{}'", flag, text));
    // The same value twice, however spelt, would run the same point twice
    // under two rows.
    const auto value = list_value(item);
    if (const auto at = std::find(values.begin(), values.end(), value); at != values.end()) {
      const auto& first = out[static_cast<std::size_t>(at - values.begin())];
      throw InputError(
          first == item
              ? fmt::format("{}: '{}' is in the list '{}' twice; give each value once", flag, item,
                            text)
              : fmt::format("{}: '{}' and '{}' are the same value in the list '{}'; give each "
                            "value once",
                            flag, first, item, text));
    }
    values.push_back(value);
    out.push_back(item);
  }
  if (out.empty()) throw InputError(fmt::format("{}: no values to sweep", flag));
  if (out.size() > kMaxValues)
    throw InputError(fmt::format("{}: more than {} values", flag, kMaxValues));
  return out;
}

Grid read_grid_file(const std::string& path, const std::string& flag, const proc::RunFlags& base,
                    const std::vector<std::string>& given) {
  return parse_grid(read_input_file(flag, path, 1 << 20), path, flag, base, given);
}

Grid parse_grid(const std::string& text, const std::string& path, const std::string& flag,
                const proc::RunFlags& base, const std::vector<std::string>& given) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{} {}: not JSON ({})", flag, path, one_line(e.what())));
  }
  if (!j.is_object() || !j.contains("axes") || !j["axes"].is_object())
    throw InputError(fmt::format(
        "{} {}: expected {{\"base\": {{\"--flag\": \"value\", ...}}, \"axes\": {{\"--flag\": "
        "\"v1,v2\" or [\"v1\", \"v2\"], ...}}}}",
        flag, path));
  Grid g;
  g.base = base;
  auto text_of = [&](const nlohmann::json& v, const std::string& key) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    if (v.is_number()) return fmt::format("{}", v.get<double>());
    if (v.is_boolean()) return std::string(v.get<bool>() ? "on" : "off");
    throw InputError(fmt::format("{} {}: '{}' must be a string or a number", flag, path, key));
  };
  // A value's own error, said of the file it is in.
  auto in_file = [&](const auto& f) {
    try {
      return f();
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} {}: {}", flag, path, e.what()));
    }
  };
  auto known = [&](const std::string& key) {
    if (!sweepable(key))
      throw InputError(
          fmt::format("{} {}: '{}' is not a flag a sweep can set (one of: {}, or \"--set KEY\")",
                      flag, path, key, join(sweepable_flags(), ", ")));
  };
  if (j.contains("base")) {
    if (!j["base"].is_object())
      throw InputError(fmt::format("{} {}: 'base' must be an object of flags", flag, path));
    // Plain names, not structured bindings: lambdas capture them (clang 14).
    for (const auto& item : j["base"].items()) {
      const std::string k = item.key();
      known(k);
      if (std::find(given.begin(), given.end(), k) != given.end()) continue;
      const auto value = text_of(item.value(), k);
      in_file([&] { set_flag(g.base, k, value); });
      g.file_base[k] = value;
    }
  }
  // nlohmann's object is sorted by key; the axes' order is the file's.
  const auto ordered = nlohmann::ordered_json::parse(text);
  for (const auto& item : ordered["axes"].items()) {
    const std::string k = item.key();
    const auto& v = item.value();
    known(k);
    Axis a{k, {}};
    if (v.is_array()) {
      for (const auto& x : v) a.values.push_back(text_of(nlohmann::json(x), k));
      if (a.values.empty())
        throw InputError(fmt::format("{} {}: axis '{}' is empty", flag, path, k));
    } else {
      const auto value = text_of(nlohmann::json(v), k);
      a.values = in_file([&] { return expand(k, value); });
    }
    g.axes.push_back(std::move(a));
  }
  return g;
}

std::vector<Point> points(const Grid& g) {
  if (g.axes.empty())
    throw InputError(
        "sweep: nothing to sweep: every flag has one value; give a flag a list (8,64,512) or a "
        "range (2K..32K:x2)");
  std::set<std::string> seen;
  double total = 1;
  for (const auto& a : g.axes) {
    if (!sweepable(a.flag)) throw InputError(fmt::format("{}: not a flag a sweep can set", a.flag));
    if (!seen.insert(a.flag).second) throw InputError(fmt::format("{}: swept twice", a.flag));
    if (a.values.empty()) throw InputError(fmt::format("{}: no values to sweep", a.flag));
    total *= static_cast<double>(a.values.size());
  }
  if (total > 1e6)
    throw InputError(
        fmt::format("--devices/--block/...: the grid has {:.3g} points; at most 1M", total));
  std::vector<Point> pts;
  std::vector<std::size_t> at(g.axes.size(), 0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(total); ++i) {
    Point p;
    p.index = i;
    auto flags = g.base;
    for (std::size_t a = 0; a < g.axes.size(); ++a) {
      const auto& ax = g.axes[a];
      const auto& v = ax.values[at[a]];
      p.params.emplace_back(ax.flag, v);
      if (!p.key.empty()) p.key += ' ';
      p.key += ax.flag + "=" + v;
    }
    try {
      for (const auto& [flag, v] : p.params) set_flag(flags, flag, v);
      p.spec = proc::parse_run(flags);
    } catch (const InputError& e) {
      p.error = e.what();
    }
    pts.push_back(std::move(p));
    // Next combination: the last axis fastest.
    for (std::size_t a = g.axes.size(); a-- > 0;) {
      if (++at[a] < g.axes[a].values.size()) break;
      at[a] = 0;
    }
  }
  refuse_unresolvable(pts);
  hash_inputs(pts);
  // A sweep of nothing but refusals is bad input, not a table of failures:
  // the first point's line says why (a bad base flag refuses every point).
  if (std::none_of(pts.begin(), pts.end(), [](const Point& p) { return p.spec.has_value(); }))
    throw InputError(fmt::format("{} (every point of the sweep is refused)", pts.front().error));
  return pts;
}

nlohmann::json to_json(const Row& r) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : r.params) params[k] = v;
  nlohmann::json j{
      {"index", r.index}, {"key", r.key}, {"params", params}, {"status", r.ok ? "ok" : "failed"}};
  if (!r.inputs_sha256.empty()) j["inputs_sha256"] = r.inputs_sha256;
  if (r.ok)
    j["summary"] = r.summary;
  else
    j["error"] = r.error;
  return j;
}

Row row_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("status") ||
      !j.contains("params") || !j["params"].is_object())
    throw std::runtime_error("not a sweep row");
  Row r;
  r.index = j.value("index", std::size_t{0});
  r.key = j["key"].get<std::string>();
  for (const auto& [k, v] : j["params"].items()) r.params.emplace_back(k, v.get<std::string>());
  r.ok = j["status"] == "ok";
  r.inputs_sha256 = j.value("inputs_sha256", std::string());
  if (r.ok) {
    r.summary = j.at("summary");
    RunSummary::from_json(r.summary, "sweep journal");  // a summary the reader accepts
  } else {
    r.error = j.value("error", std::string());
  }
  return r;
}

Row run_point(const Point& p, const std::string& ringsim, double timeout_s) {
  Row r;
  r.index = p.index;
  r.key = p.key;
  r.params = p.params;
  if (!p.spec) {
    r.error = p.error;
    return r;
  }
  auto spec = *p.spec;
  spec.json = true;
  r.inputs_sha256 = spec.inputs_sha256;
  proc::Command c;
  c.argv = proc::to_args(spec);
  c.argv.insert(c.argv.begin(), ringsim);
  c.timeout_s = timeout_s;
  const auto res = proc::run(c);
  r.wall_s = res.wall_s;
  if (!res.ok()) {
    r.error = res.failure();
    return r;
  }
  try {
    r.summary = nlohmann::json::parse(res.out);
    RunSummary::from_json(r.summary, "ringsim run --json");
    r.ok = true;
  } catch (const nlohmann::json::exception& e) {
    r.error = one_line(std::string("unreadable JSON: ") + e.what());
  } catch (const InputError& e) {
    r.error = e.what();
  }
  return r;
}

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

std::vector<const Point*> pending(const std::vector<Point>& pts,
                                  const std::map<std::string, Row>& done) {
  std::vector<const Point*> out;
  for (const auto& p : pts)
    if (!done.count(p.key)) out.push_back(&p);
  return out;
}

Result run_local(const std::vector<Point>& pts, const Options& o) {
  Result res;
  std::string ringsim = o.ringsim;
  if (ringsim.empty()) {
    std::string why;
    ringsim = proc::ringsim_exe(&why);
    if (ringsim.empty()) throw InputError("ringsim sweep: cannot find the ringsim binary: " + why);
  }
  Journal journal(o.out, o.header, o.force_new, o.aside_if_different);
  for (const auto& note : journal.notes()) std::cerr << "ringsim sweep: " << note << "\n";
  auto done = journal.rows();
  const auto todo = pending(pts, done);
  res.skipped = pts.size() - todo.size();
  sim::Progress bar(o.progress, todo.size(), "ringsim: sweeping", 0.5);
  std::mutex mu;
  std::exception_ptr failure;  // a journal that cannot be written stops every worker
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < todo.size(); i = next++) {
      if (sim::interrupt_requested()) return;
      auto row = run_point(*todo[i], ringsim, o.timeout_s);
      std::lock_guard<std::mutex> lock(mu);
      if (failure) return;
      if (sim::interrupt_requested() && !row.ok) return;  // a child stopped by the same Ctrl-C
      try {
        journal.append(row);
      } catch (...) {
        failure = std::current_exception();
        next = todo.size();
        return;
      }
      ++res.ran;
      done[row.key] = std::move(row);
      bar.tick();
    }
  };
  const int n = std::max(1, std::min<int>(o.jobs, static_cast<int>(todo.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  bar.finish();
  if (failure) std::rethrow_exception(failure);
  res.interrupted = sim::interrupt_requested();
  finish_outputs(pts, done, o, journal, res);
  return res;
}

}  // namespace ringsim::sweep
