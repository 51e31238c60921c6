#include "trace/reader.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "models/core/errors.hpp"
#include "trace/phase.hpp"

namespace ringsim::trace {

namespace {

using Json = nlohmann::json;

// Caps on otherData.ringsim, which is kept as a small DOM: it is the one part
// of the file that is not streamed.
constexpr std::size_t kMaxRunValues = 1'000'000;
constexpr std::size_t kMaxRunDepth = 64;
constexpr std::size_t kMaxSummaryFields = 500;
constexpr std::size_t kMaxLaneName = 200;
// A summary's text (a verdict sentence runs to 600 characters at 64 devices):
// kept whole up to this, so the header can show all of it.
constexpr std::size_t kMaxSummaryText = 4000;

// Every message is one line whatever the file name or the offending bytes hold.
InputError trace_error(const std::string& origin, const std::string& msg) {
  std::string line = "trace " + origin + ": " + msg;
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return InputError(line);
}

// One JSON value of an event field, as read.
struct Value {
  enum class Kind { Absent, Null, Bool, Number, String, Object, Array } kind = Kind::Absent;
  double number = 0;
  bool exact_int = false;  // number came as an integer token within int64
  std::int64_t integer = 0;
  bool boolean = false;
  std::string text;
};

Value value_of(Value::Kind kind) {
  Value v;
  v.kind = kind;
  return v;
}

// The event fields the timeline uses; everything else is skipped unread.
enum Field {
  kName,
  kCat,
  kPh,
  kTid,
  kTs,
  kDur,
  kDevice,
  kStep,
  kKvBlock,
  kBytes,
  kPeer,
  kEntries,
  kPass,
  kLayer,
  kArgName,
  kExecuted,
  kFieldCount
};

int event_field(const std::string& key) {
  static const std::unordered_map<std::string, int> m = {
      {"name", kName}, {"cat", kCat}, {"ph", kPh}, {"tid", kTid}, {"ts", kTs}, {"dur", kDur}};
  const auto it = m.find(key);
  return it == m.end() ? -1 : it->second;
}

int args_field(const std::string& key) {
  static const std::unordered_map<std::string, int> m = {
      {"device", kDevice}, {"step", kStep},        {"kv_block", kKvBlock}, {"bytes", kBytes},
      {"peer", kPeer},     {"entries", kEntries},  {"pass", kPass},        {"layer", kLayer},
      {"name", kArgName},  {"executed", kExecuted}};
  const auto it = m.find(key);
  return it == m.end() ? -1 : it->second;
}

const char* field_label(int f) {
  static const std::array<const char*, kFieldCount> labels = {
      "name",         "cat",          "ph",        "tid",           "ts",
      "dur",          "args.device",  "args.step", "args.kv_block", "args.bytes",
      "args.peer",    "args.entries", "args.pass", "args.layer",    "args.name",
      "args.executed"};
  return labels[static_cast<std::size_t>(f)];
}

std::string describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Absent:
      return "nothing";
    case Value::Kind::Null:
      return "null";
    case Value::Kind::Bool:
      return v.boolean ? "true" : "false";
    case Value::Kind::Object:
      return "an object";
    case Value::Kind::Array:
      return "an array";
    case Value::Kind::String: {
      std::string s = v.text.substr(0, 24);
      for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';  // keep the message on one line
      return "\"" + s + (v.text.size() > 24 ? "...\"" : "\"");
    }
    case Value::Kind::Number: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.10g", v.number);
      return buf;
    }
  }
  return "?";
}

// Streams the file; builds events as each event object closes.
class Reader : public nlohmann::json_sax<Json> {
 public:
  explicit Reader(std::string origin) { trace_.origin = std::move(origin); }

  bool null() override { return scalar(value_of(Value::Kind::Null)); }
  bool boolean(bool b) override {
    Value v = value_of(Value::Kind::Bool);
    v.boolean = b;
    return scalar(std::move(v));
  }
  bool number_integer(number_integer_t i) override {
    Value v = value_of(Value::Kind::Number);
    v.number = static_cast<double>(i);
    v.exact_int = true;
    v.integer = i;
    return scalar(std::move(v));
  }
  bool number_unsigned(number_unsigned_t u) override {
    Value v = value_of(Value::Kind::Number);
    v.number = static_cast<double>(u);
    v.exact_int = u <= static_cast<std::uint64_t>(INT64_MAX);
    v.integer = v.exact_int ? static_cast<std::int64_t>(u) : 0;
    return scalar(std::move(v));
  }
  bool number_float(number_float_t d, const string_t&) override {
    Value v = value_of(Value::Kind::Number);
    v.number = d;
    return scalar(std::move(v));
  }
  bool string(string_t& s) override {
    Value v = value_of(Value::Kind::String);
    v.text = std::move(s);
    return scalar(std::move(v));
  }
  bool binary(binary_t&) override { return scalar(value_of(Value::Kind::Null)); }

  bool key(string_t& k) override {
    if (skip_ > 0) return true;
    key_ = std::move(k);
    return true;
  }

  bool start_object(std::size_t) override { return open(Value::Kind::Object); }
  bool start_array(std::size_t) override { return open(Value::Kind::Array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
    if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    std::replace(what.begin(), what.end(), '\n', ' ');
    if (position + 1 >= size_) what += " (the file looks truncated)";
    fail("invalid JSON: " + what);
    return false;
  }

  void set_size(std::size_t n) { size_ = n; }
  Contents finish();

 private:
  enum class Ctx { Top, Events, Event, Args, Other, Dom };

  [[noreturn]] void fail(const std::string& msg) const { throw trace_error(trace_.origin, msg); }
  [[noreturn]] void fail_event(const std::string& msg) const {
    fail("event " + std::to_string(event_index_) + " (traceEvents[" + std::to_string(event_index_) +
         "]): " + msg);
  }

  bool scalar(Value v);
  bool open(Value::Kind kind);
  bool close();
  void dom_insert(Json value, bool container);
  void finish_event();

  std::int64_t get_int(int f, std::int64_t lo, std::int64_t hi) const;
  double get_real(int f, double lo, double hi) const;
  const std::string& get_string(int f) const;

  Contents trace_;
  std::size_t size_ = 0;
  std::vector<Ctx> stack_;
  int skip_ = 0;  // depth inside a value being skipped
  std::string key_;
  bool seen_root_ = false, seen_events_ = false;

  std::array<Value, kFieldCount> fields_;
  std::size_t event_index_ = 0;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::unordered_set<std::int32_t> named_devices_;  // lanes already named by a track

  Json run_;  // otherData.ringsim
  std::vector<Json*> dom_;
  std::size_t dom_values_ = 0;
};

bool Reader::scalar(Value v) {
  if (skip_ > 0) return true;
  if (stack_.empty()) fail("the top level must be a JSON object (or an array of events)");
  switch (stack_.back()) {
    case Ctx::Top:
      if (key_ == "traceEvents") fail("'traceEvents' must be an array, got " + describe(v));
      return true;
    case Ctx::Events:
      fail_event("must be an object, got " + describe(v));
    case Ctx::Event: {
      if (key_ == "args") fail_event("'args' must be an object, got " + describe(v));
      const int f = event_field(key_);
      if (f >= 0) fields_[static_cast<std::size_t>(f)] = std::move(v);
      return true;
    }
    case Ctx::Args: {
      const int f = args_field(key_);
      if (f >= 0) fields_[static_cast<std::size_t>(f)] = std::move(v);
      return true;
    }
    case Ctx::Other:
      if (key_ == "ringsim") fail("otherData.ringsim must be an object, got " + describe(v));
      return true;
    case Ctx::Dom: {
      Json j;
      switch (v.kind) {
        case Value::Kind::Bool:
          j = v.boolean;
          break;
        case Value::Kind::Number:
          j = v.exact_int ? Json(v.integer) : Json(v.number);
          break;
        case Value::Kind::String:
          j = std::move(v.text);
          break;
        default:
          break;
      }
      dom_insert(std::move(j), false);
      return true;
    }
  }
  return true;
}

bool Reader::open(Value::Kind kind) {
  if (skip_ > 0) {
    ++skip_;
    return true;
  }
  const bool object = kind == Value::Kind::Object;
  if (stack_.empty()) {
    if (seen_root_) fail("more than one top-level value");
    seen_root_ = true;
    if (object) {
      stack_.push_back(Ctx::Top);
    } else {
      seen_events_ = true;  // the bare-array form: the array is the event list
      stack_.push_back(Ctx::Events);
    }
    return true;
  }
  switch (stack_.back()) {
    case Ctx::Top:
      if (key_ == "traceEvents") {
        if (object) fail("'traceEvents' must be an array, got an object");
        if (seen_events_) fail("more than one 'traceEvents' array");
        seen_events_ = true;
        stack_.push_back(Ctx::Events);
      } else if (key_ == "otherData" && object) {
        stack_.push_back(Ctx::Other);
      } else {
        skip_ = 1;
      }
      return true;
    case Ctx::Events:
      if (!object) fail_event("must be an object, got an array");
      if (trace_.events.size() >= kMaxEvents)
        fail("more than " + std::to_string(kMaxEvents) + " events; split the trace");
      fields_ = {};
      stack_.push_back(Ctx::Event);
      return true;
    case Ctx::Event:
      if (key_ == "args") {
        if (!object) fail_event("'args' must be an object, got an array");
        stack_.push_back(Ctx::Args);
        return true;
      }
      [[fallthrough]];
    case Ctx::Args: {
      const int f = stack_.back() == Ctx::Event ? event_field(key_) : args_field(key_);
      if (f >= 0) fields_[static_cast<std::size_t>(f)] = value_of(kind);  // a type error if used
      skip_ = 1;
      return true;
    }
    case Ctx::Other:
      if (key_ != "ringsim") {
        skip_ = 1;
        return true;
      }
      if (!object) fail("otherData.ringsim must be an object, got an array");
      run_ = Json::object();
      dom_.push_back(&run_);
      stack_.push_back(Ctx::Dom);
      return true;
    case Ctx::Dom:
      if (dom_.size() >= kMaxRunDepth) fail("otherData.ringsim is nested too deeply");
      dom_insert(object ? Json::object() : Json::array(), true);
      stack_.push_back(Ctx::Dom);
      return true;
  }
  return true;
}

bool Reader::close() {
  if (skip_ > 0) {
    --skip_;
    return true;
  }
  const Ctx ctx = stack_.back();
  stack_.pop_back();
  if (ctx == Ctx::Event) {
    finish_event();
    ++event_index_;
  } else if (ctx == Ctx::Dom) {
    dom_.pop_back();
  }
  key_.clear();
  return true;
}

void Reader::dom_insert(Json value, bool container) {
  if (++dom_values_ > kMaxRunValues)
    fail("otherData.ringsim holds more than " + std::to_string(kMaxRunValues) + " values");
  Json& parent = *dom_.back();
  Json* slot = nullptr;
  if (parent.is_array()) {
    parent.push_back(std::move(value));
    slot = &parent.back();
  } else {
    slot = &(parent[key_] = std::move(value));
  }
  // Only the innermost open container grows, so pointers to its ancestors stay valid.
  if (container) dom_.push_back(slot);
}

std::int64_t Reader::get_int(int f, std::int64_t lo, std::int64_t hi) const {
  const Value& v = fields_[static_cast<std::size_t>(f)];
  const bool integral =
      v.kind == Value::Kind::Number &&
      (v.exact_int || (v.number == std::floor(v.number) && std::fabs(v.number) < 9.0e18));
  const std::int64_t i = !integral     ? 0
                         : v.exact_int ? v.integer
                                       : static_cast<std::int64_t>(v.number);
  if (!integral || i < lo || i > hi)
    fail_event("'" + std::string(field_label(f)) + "' must be an integer in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "], got " + describe(v));
  return i;
}

double Reader::get_real(int f, double lo, double hi) const {
  const Value& v = fields_[static_cast<std::size_t>(f)];
  // The parser rejects NaN and overflow, but check anyway: the model relies on it.
  if (v.kind != Value::Kind::Number || !std::isfinite(v.number) || v.number < lo || v.number > hi) {
    char range[80];
    std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
    fail_event("'" + std::string(field_label(f)) + "' must be a number in " + range + ", got " +
               describe(v));
  }
  return v.number;
}

const std::string& Reader::get_string(int f) const {
  const Value& v = fields_[static_cast<std::size_t>(f)];
  if (v.kind != Value::Kind::String)
    fail_event("'" + std::string(field_label(f)) + "' must be a string, got " + describe(v));
  return v.text;
}

bool present(const Value& v) {
  return v.kind != Value::Kind::Absent;
}

void Reader::finish_event() {
  const std::string& ph = get_string(kPh);
  if (ph == "M") {
    // Metadata: only device (thread) names matter to the timeline.
    if (present(fields_[kName]) && get_string(kName) == "thread_name" &&
        present(fields_[kArgName]) && present(fields_[kTid])) {
      if (present(fields_[kDevice])) {
        // One track per device and activity ("device 3 · send", args.device 3):
        // the device's lane is named once, by the part before " · ".
        const auto device = static_cast<std::int32_t>(get_int(kDevice, 0, kMaxDevices - 1));
        if (!named_devices_.insert(device).second) return;
        const std::string& name = get_string(kArgName);
        trace_.lane_names.emplace_back(
            device, name.substr(0, std::min(name.find(" \u00b7 "), kMaxLaneName)));
      } else {
        // Older traces and other tools: the thread is the device.
        const auto tid = static_cast<std::int32_t>(get_int(kTid, 0, kMaxDevices - 1));
        trace_.lane_names.emplace_back(tid, get_string(kArgName).substr(0, kMaxLaneName));
      }
    }
    return;
  }
  if (ph != "X") {
    // Flows only link complete events, and counters ringsim derives from them
    // (cat "derived"): nothing is lost by not drawing them.
    const bool derived =
        ph == "s" || ph == "t" || ph == "f" ||
        (ph == "C" && present(fields_[kCat]) && fields_[kCat].kind == Value::Kind::String &&
         fields_[kCat].text == "derived");
    // Begin/end pairs, instants, other counters: valid Chrome events the
    // timeline does not draw. Counted so the window can say they were left out.
    ++(derived ? trace_.derived_events : trace_.skipped_events);
    return;
  }

  Event e;
  const std::string& name = get_string(kName);
  // The category only matters for names the format does not list.
  const std::string& cat = present(fields_[kCat]) && fields_[kCat].kind == Value::Kind::String
                               ? fields_[kCat].text
                               : std::string();
  e.phase = phase_from_name(name, cat);
  e.start = get_real(kTs, -kMaxTimeUs, kMaxTimeUs);
  e.dur = get_real(kDur, 0, kMaxTimeUs);
  if (present(fields_[kDevice])) {
    e.device = static_cast<std::int32_t>(get_int(kDevice, 0, kMaxDevices - 1));
  } else if (present(fields_[kTid])) {
    e.device = static_cast<std::int32_t>(get_int(kTid, 0, kMaxDevices - 1));
  } else {
    fail_event("needs 'args.device' or 'tid' to place it on a device lane");
  }
  if (present(fields_[kStep])) e.step = static_cast<std::int32_t>(get_int(kStep, -1, kMaxSteps));
  if (present(fields_[kKvBlock]))
    e.kv_block = static_cast<std::int32_t>(get_int(kKvBlock, -1, kMaxSteps));
  if (present(fields_[kLayer])) e.layer = static_cast<std::int32_t>(get_int(kLayer, -1, kMaxSteps));
  if (present(fields_[kPeer]))
    e.peer = static_cast<std::int32_t>(get_int(kPeer, -1, kMaxDevices - 1));
  // 2^60 bytes is an exabyte: far beyond any transfer, well inside int64.
  if (present(fields_[kBytes]))
    e.bytes = static_cast<std::uint64_t>(get_real(kBytes, 0, 1152921504606846976.0));
  // 2^63 score entries: a 3-billion-token causal square, far past any run.
  if (present(fields_[kEntries]))
    e.entries = static_cast<std::uint64_t>(get_real(kEntries, 0, 9223372036854775808.0));
  if (present(fields_[kExecuted]))
    e.executed = static_cast<std::uint64_t>(get_real(kExecuted, 0, 9223372036854775808.0));
  if (present(fields_[kPass])) {
    const std::string& pass = get_string(kPass);
    e.pass = pass == "fwd" ? Pass::Fwd : pass == "bwd" ? Pass::Bwd : Pass::Unknown;
  }
  const auto [it, fresh] = name_ids_.emplace(name, static_cast<std::uint32_t>(trace_.names.size()));
  if (fresh) trace_.names.push_back(name);
  e.name_id = it->second;
  trace_.events.push_back(e);
}

// otherData.ringsim: optional, but when present its numbers must make sense.
RunInfo read_run_info(const Json& run, const std::string& origin) {
  RunInfo info;
  info.present = true;
  auto bad = [&](const std::string& what) {
    return trace_error(origin, "otherData.ringsim." + what);
  };
  auto text = [&](const char* key, std::string& out) {
    if (!run.contains(key)) return;
    if (!run[key].is_string()) throw bad(std::string(key) + " must be a string");
    out = run[key].get<std::string>().substr(0, kMaxLaneName);
  };
  auto count = [&](const char* key, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    if (!run.contains(key)) return;
    const Json& v = run[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi ||
        (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)))
      throw bad(std::string(key) + " must be an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
    out = v.get<std::int64_t>();
  };
  text("format", info.format);
  text("layout", info.layout);
  count("devices", 1, kMaxDevices, info.devices);
  count("steps", 0, kMaxSteps, info.steps);
  if (run.contains("summary")) {
    if (!run["summary"].is_object()) throw bad("summary must be an object");
    // Depth-first flatten; the DOM depth is capped, so the recursion is bounded.
    std::function<void(const Json&, const std::string&)> walk = [&](const Json& j,
                                                                    const std::string& key) {
      if (info.summary.size() >= kMaxSummaryFields) return;
      if (j.is_object()) {
        for (const auto& [k, v] : j.items()) walk(v, key.empty() ? k : key + "." + k);
      } else if (j.is_array() && !j.empty() && j.size() <= 64 &&
                 std::all_of(j.begin(), j.end(), [](const Json& x) { return x.is_object(); })) {
        // A short list of records (faults.straggler, faults.degrade): "key.0.field",
        // so the timeline can name each one. Long scalar lists stay one line below.
        for (std::size_t i = 0; i < j.size(); ++i) walk(j[i], key + "." + std::to_string(i));
      } else if (j.is_array()) {
        RunInfo::Field f;
        f.key = key;
        f.text = "[" + std::to_string(j.size()) + " values]";
        info.summary.push_back(std::move(f));
      } else if (j.is_number()) {
        RunInfo::Field f;
        f.key = key;
        f.is_number = true;
        f.number = j.get<double>();
        info.summary.push_back(std::move(f));
      } else if (j.is_boolean() || j.is_string()) {
        RunInfo::Field f;
        f.key = key;
        f.text = j.is_boolean() ? (j.get<bool>() ? "true" : "false")
                                : j.get<std::string>().substr(0, kMaxSummaryText);
        info.summary.push_back(std::move(f));
      }
    };
    walk(run["summary"], "");
  }
  return info;
}

Contents Reader::finish() {
  if (!seen_root_) fail("is empty");
  if (!seen_events_) fail("has no 'traceEvents' array");
  if (trace_.events.empty())
    fail("has no complete events (\"ph\": \"X\"); there is nothing to draw");
  if (!run_.is_null()) trace_.run = read_run_info(run_, trace_.origin);

  double first = trace_.events.front().start;
  for (const Event& e : trace_.events) first = std::min(first, e.start);
  trace_.origin_us = first;
  trace_.end_us = 0;
  for (Event& e : trace_.events) {
    e.start -= first;
    trace_.end_us = std::max(trace_.end_us, e.end());
    trace_.max_step = std::max(trace_.max_step, e.step);
  }
  return std::move(trace_);
}

}  // namespace

const RunInfo::Field* RunInfo::find(const std::string& key) const {
  for (const auto& f : summary)
    if (f.key == key) return &f;
  return nullptr;
}

Contents parse_trace(std::string_view json, const std::string& origin) {
  Reader reader(origin);
  reader.set_size(json.size());
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw trace_error(origin, "is empty");
  Json::sax_parse(json.data(), json.data() + json.size(), &reader);
  return reader.finish();
}

Contents read_trace_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw trace_error(path, "no such file");
  if (!std::filesystem::is_regular_file(path, ec)) throw trace_error(path, "not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw trace_error(path, "cannot read its size: " + ec.message());
  if (size > kMaxFileBytes)
    throw trace_error(path, "larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw trace_error(path, "cannot open for reading");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return parse_trace(text, path);
}

}  // namespace ringsim::trace
