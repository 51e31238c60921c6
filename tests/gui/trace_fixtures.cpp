#include "tests/gui/trace_fixtures.hpp"

#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

namespace ringsim::gui::test {

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string event(const char* name, const char* cat, int d, double ts, double dur, int step, int kv,
                  long long bytes, int peer) {
  std::string s = std::string("{\"name\":\"") + name + "\",\"cat\":\"" + cat +
                  "\",\"ph\":\"X\",\"pid\":0,\"tid\":" + std::to_string(d) + ",\"ts\":" + num(ts) +
                  ",\"dur\":" + num(dur) + ",\"args\":{\"device\":" + std::to_string(d) +
                  ",\"step\":" + std::to_string(step) + ",\"kv_block\":" + std::to_string(kv) +
                  ",\"bytes\":" + std::to_string(bytes);
  if (peer >= 0) s += ",\"peer\":" + std::to_string(peer);
  return s + ",\"pass\":\"fwd\"}}";
}

}  // namespace

std::string ring_trace_json(const RingSpec& spec) {
  const int n = spec.devices;
  const int steps = spec.steps < 0 ? n : spec.steps;
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto add = [&](const std::string& e) {
    if (!first) out += ",\n";
    out += e;
    first = false;
  };
  for (int d = 0; d < n; ++d)
    add("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" + std::to_string(d) +
        ",\"args\":{\"name\":\"device " + std::to_string(d) + "\"}}");
  for (int d = 0; d < n; ++d) {
    double t = spec.ts_offset;
    for (int s = 0; s < steps; ++s) {
      const int kv = ((d - s) % n + n) % n;
      double c = spec.compute_us;
      if (spec.causal && spec.layout == "striped") c = spec.compute_us / 2;
      if (spec.causal && spec.layout != "striped")
        c = kv < d ? spec.compute_us : kv == d ? spec.compute_us / 2 : 0;
      const bool sends = s < steps - 1;  // the last step's block is never passed on
      if (c > 0) add(event("partial", "compute", d, t, c, s, kv, 0, -1));
      if (sends) {
        add(event("send", "comm", d, t, spec.transfer_us, s, kv, spec.bytes, (d + 1) % n));
        add(event("recv", "comm", d, t, spec.transfer_us, s, (kv + n - 1) % n, spec.bytes,
                  (d + n - 1) % n));
        if (spec.transfer_us > c)
          add(event("wait", "comm", d, t + c, spec.transfer_us - c, s, -1, 0, -1));
      }
      t += std::max(c, sends ? spec.transfer_us : 0.0);
    }
  }
  out += "\n]";
  if (spec.run_info) {
    out += ",\"otherData\":{\"ringsim\":{\"format\":\"ringsim-trace-1\",\"devices\":" +
           std::to_string(n) + ",\"steps\":" + std::to_string(steps) + ",\"layout\":\"" +
           spec.layout + "\"";
    if (!spec.summary_json.empty()) out += ",\"summary\":" + spec.summary_json;
    out += "}}";
  }
  return out + "}\n";
}

QString write_temp(const std::string& text, const QString& name) {
  // One directory per test process, removed when the process ends.
  static const auto dir = std::make_unique<QTemporaryDir>();
  const QString path = dir->filePath(name);
  QFile f(path);
  if (f.open(QIODevice::WriteOnly | QIODevice::Truncate))
    f.write(text.data(), static_cast<qint64>(text.size()));
  return path;
}

}  // namespace ringsim::gui::test
