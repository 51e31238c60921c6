// The display-free part of ringsim-gui: reader, summary, zoom, lane layout and
// level of detail. Malformed input must end in ringsim::InputError with one
// line, never a crash or another exception.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <random>

#include "gui/lane_layout.hpp"
#include "gui/lod.hpp"
#include "gui/time_view.hpp"
#include "gui/trace_summary.hpp"
#include "models/core/errors.hpp"
#include "tests/gui/trace_fixtures.hpp"

using namespace ringsim::gui;
using ringsim::InputError;
using test::RingSpec;

namespace {

// Parses `text`; returns the error message, or "" if it parsed.
QString parse_error_of(const std::string& text) {
  try {
    parse_trace(text, "t.json");
  } catch (const InputError& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

std::string minimal(const std::string& event_body) {
  return R"({"traceEvents":[{"name":"partial","ph":"X","tid":0,"ts":0,"dur":1,"args":{"device":0,"step":0}},)" +
         event_body + "]}";
}

}  // namespace

class TraceReaderTest : public QObject {
  Q_OBJECT

 private slots:
  void one_lane_per_device() {
    RingSpec spec;
    spec.devices = 8;
    const Trace t = parse_trace(test::ring_trace_json(spec), "ring8");
    QCOMPARE(t.lanes.size(), std::size_t{8});
    for (int d = 0; d < 8; ++d) {
      QCOMPARE(t.lanes[static_cast<std::size_t>(d)].device, d);
      QCOMPARE(t.lanes[static_cast<std::size_t>(d)].name, "device " + std::to_string(d));
      QCOMPARE(t.lane_of_device(d), d);
      // 8 partials, 7 sends, 7 recvs; compute 100 > transfer 60, so no waits.
      QCOMPARE(t.lanes[static_cast<std::size_t>(d)].rows[0].events.size(), std::size_t{8});
      QCOMPARE(t.lanes[static_cast<std::size_t>(d)].rows[1].events.size(), std::size_t{7});
      QCOMPARE(t.lanes[static_cast<std::size_t>(d)].rows[2].events.size(), std::size_t{7});
      QCOMPARE(t.lanes[static_cast<std::size_t>(d)].step_starts.size(), std::size_t{8});
    }
    QCOMPARE(t.max_step, 7);
    QVERIFY(t.run.present);
    QCOMPARE(t.run.devices, 8);
    QCOMPARE(t.run.layout, std::string("ring"));
  }

  void fields_and_relative_time() {
    RingSpec spec;
    spec.devices = 2;
    spec.ts_offset = 5000;  // the model shifts times so the first event starts at 0
    const Trace t = parse_trace(test::ring_trace_json(spec));
    QCOMPARE(t.origin_us, 5000.0);
    // Device 1, step 1: computes on its own block... (1 - 1) mod 2 = 0, from t = 100.
    const Lane& lane = t.lanes[1];
    const Event& e = t.events[lane.rows[0].events[1]];
    QCOMPARE(e.phase, Phase::Partial);
    QCOMPARE(e.device, 1);
    QCOMPARE(e.step, 1);
    QCOMPARE(e.kv_block, 0);
    QCOMPARE(e.start, 100.0);
    QCOMPARE(e.dur, 100.0);
    QCOMPARE(e.pass, PassKind::Fwd);
    const Event& s = t.events[lane.rows[1].events[0]];
    QCOMPARE(s.phase, Phase::Send);
    QCOMPARE(s.bytes, std::int64_t{16777216});
    QCOMPARE(s.peer, 0);
    QCOMPARE(t.end_us, 200.0);
  }

  void described_devices_get_lanes() {
    // otherData says 6 devices; events only on 0..3: devices 4 and 5 are idle lanes.
    RingSpec spec;
    spec.devices = 4;
    std::string text = test::ring_trace_json(spec);
    text.replace(text.find("\"devices\":4"), 11, "\"devices\":6");
    const Trace t = parse_trace(text);
    QCOMPARE(t.lanes.size(), std::size_t{6});
    QCOMPARE(t.lanes[5].device, 5);
    QVERIFY(t.lanes[5].rows[0].events.empty());
  }

  void other_writers_accepted() {
    // Bare-array form, no otherData, no args (device from tid), other phases skipped.
    const std::string text = R"([
      {"name":"partial","ph":"X","pid":1,"tid":3,"ts":10,"dur":5},
      {"name":"kernel","ph":"B","pid":1,"tid":3,"ts":10},
      {"name":"counter","ph":"C","pid":1,"ts":11,"args":{"x":1}},
      {"name":"send","ph":"X","pid":1,"tid":2,"ts":12.5,"dur":1e1,"extra":{"deep":[1,[2,{"a":null}]]}}
    ])";
    const Trace t = parse_trace(text);
    QCOMPARE(t.events.size(), std::size_t{2});
    QCOMPARE(t.skipped_events, std::size_t{2});
    QCOMPARE(t.lanes.size(), std::size_t{2});
    QCOMPARE(t.lanes[0].device, 2);
    QCOMPARE(t.lanes[1].device, 3);
    QVERIFY(!t.run.present);
    QCOMPARE(t.events[1].step, -1);
    QCOMPARE(t.end_us, 12.5);  // 2.5 + 10 after the first event at ts 10
  }

  void rejects_malformed_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expect");  // a piece of the message
    auto row = [](const char* name, const std::string& text, const char* expect) {
      QTest::newRow(name) << QByteArray::fromStdString(text) << QString(expect);
    };
    row("empty", "", "is empty");
    row("blank", "  \n\t ", "is empty");
    row("not json", "hello", "invalid JSON");
    row("truncated", R"({"traceEvents":[{"name":"partial","ph":"X","ts":1)", "truncated");
    row("scalar top", "42", "top level");
    row("no events key", R"({"foo":1})", "no 'traceEvents'");
    row("events not array", R"({"traceEvents":{}})", "must be an array");
    row("events scalar", R"({"traceEvents":3})", "must be an array");
    row("no X events", R"({"traceEvents":[{"name":"a","ph":"i","ts":1}]})", "no complete events");
    row("empty events", R"({"traceEvents":[]})", "no complete events");
    row("event not object", R"({"traceEvents":[1]})", "must be an object");
    row("event array", R"({"traceEvents":[[]]})", "must be an object");
    row("ph missing", minimal(R"({"name":"x","ts":1,"dur":1,"tid":0})"), "'ph' must be a string");
    row("ts string", minimal(R"({"name":"x","ph":"X","ts":"1","dur":1,"tid":0})"), "'ts'");
    row("ts missing", minimal(R"({"name":"x","ph":"X","dur":1,"tid":0})"), "'ts'");
    row("dur negative", minimal(R"({"name":"x","ph":"X","ts":1,"dur":-1,"tid":0})"), "'dur'");
    row("dur huge", minimal(R"({"name":"x","ph":"X","ts":1,"dur":1e300,"tid":0})"), "'dur'");
    row("ts overflow", minimal(R"({"name":"x","ph":"X","ts":1e999,"dur":1,"tid":0})"),
        "invalid JSON");
    row("NaN literal", minimal(R"({"name":"x","ph":"X","ts":NaN,"dur":1,"tid":0})"),
        "invalid JSON");
    row("Infinity", minimal(R"({"name":"x","ph":"X","ts":1,"dur":Infinity,"tid":0})"),
        "invalid JSON");
    row("name number", minimal(R"({"name":5,"ph":"X","ts":1,"dur":1,"tid":0})"), "'name'");
    row("device string", minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"args":{"device":"3"}})"),
        "'args.device'");
    row("device fraction", minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"args":{"device":1.5}})"),
        "'args.device'");
    row("device negative", minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"args":{"device":-1}})"),
        "'args.device'");
    row("device huge",
        minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"args":{"device":99999999999999999999}})"),
        "'args.device'");
    row("no device", minimal(R"({"name":"x","ph":"X","ts":1,"dur":1})"), "needs 'args.device'");
    row("step huge",
        minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"tid":0,"args":{"step":1e12}})"),
        "'args.step'");
    row("step object",
        minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"tid":0,"args":{"step":{}}})"),
        "'args.step'");
    row("bytes negative",
        minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"tid":0,"args":{"bytes":-5}})"),
        "'args.bytes'");
    row("bytes huge",
        minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"tid":0,"args":{"bytes":1e30}})"),
        "'args.bytes'");
    row("pass number", minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"tid":0,"args":{"pass":1}})"),
        "'args.pass'");
    row("args array", minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"tid":0,"args":[]})"),
        "'args'");
    row("args scalar", minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"tid":0,"args":7})"),
        "'args'");
    row("trailing garbage", R"({"traceEvents":[{"name":"x","ph":"X","ts":1,"dur":1,"tid":0}]} x)",
        "invalid JSON");
    row("bad utf8", "{\"traceEvents\":[{\"name\":\"\xff\",\"ph\":\"X\"}]}", "invalid JSON");
    row("run devices string",
        R"({"traceEvents":[{"name":"x","ph":"X","ts":1,"dur":1,"tid":0}],"otherData":{"ringsim":{"devices":"8"}}})",
        "otherData.ringsim.devices");
    row("run devices huge",
        R"({"traceEvents":[{"name":"x","ph":"X","ts":1,"dur":1,"tid":0}],"otherData":{"ringsim":{"devices":1e40}}})",
        "otherData.ringsim.devices");
    row("run summary array",
        R"({"traceEvents":[{"name":"x","ph":"X","ts":1,"dur":1,"tid":0}],"otherData":{"ringsim":{"summary":[]}}})",
        "summary must be an object");
    row("run not object",
        R"({"traceEvents":[{"name":"x","ph":"X","ts":1,"dur":1,"tid":0}],"otherData":{"ringsim":3}})",
        "otherData.ringsim must be an object");
    row("run nested deep",
        R"({"traceEvents":[{"name":"x","ph":"X","ts":1,"dur":1,"tid":0}],"otherData":{"ringsim":)" +
            std::string(200, '[') + std::string(200, ']') + "}}",
        "otherData.ringsim");
  }

  void rejects_malformed() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expect);
    const QString msg = parse_error_of(text.toStdString());
    QVERIFY2(!msg.isEmpty(), "accepted a malformed trace");
    QVERIFY2(msg.startsWith("trace t.json: "), qPrintable(msg));
    QVERIFY2(msg.contains(expect), qPrintable(msg));
    QVERIFY2(!msg.contains('\n'), qPrintable(msg));
  }

  void deep_nesting_is_skipped_not_recursed() {
    // Unknown keys are skipped by depth counting; a million levels must not overflow a stack.
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    const Trace t =
        parse_trace(minimal(R"({"name":"x","ph":"X","ts":1,"dur":1,"tid":0,"junk":)" + deep + "}"));
    QCOMPARE(t.events.size(), std::size_t{2});
  }

  void every_truncation_is_rejected() {
    RingSpec spec;
    spec.devices = 2;
    spec.summary_json = R"({"time_s":0.0002,"efficiency":1.0})";
    const std::string full = test::ring_trace_json(spec);
    QVERIFY(parse_error_of(full).isEmpty());
    const std::size_t last = full.rfind('}');
    for (std::size_t n = 0; n <= last; ++n) {
      const QString msg = parse_error_of(full.substr(0, n));
      QVERIFY2(!msg.isEmpty(), qPrintable(QString("prefix of %1 bytes accepted").arg(n)));
      QVERIFY2(!msg.contains('\n'), qPrintable(msg));
    }
  }

  void mutations_never_crash() {
    // A poor man's fuzzer (the libFuzzer target goes further): random edits of
    // a valid trace either parse into a sane model or raise InputError.
    RingSpec spec;
    spec.devices = 3;
    spec.summary_json = R"({"time_s":0.0003,"nested":{"a":[1,2,3]}})";
    const std::string base = test::ring_trace_json(spec);
    std::mt19937 rng(12345);
    const char* tokens[] = {"1e999", "-1", "NaN", "null",  "{",   "}",       "[",    "]",
                            "\"",    ",",  ":",   "1e308", "0.5", "\\u0000", "true", "-0"};
    int parsed = 0, rejected = 0;
    for (int i = 0; i < 3000; ++i) {
      std::string s = base;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < edits; ++k) {
        const std::size_t pos = rng() % s.size();
        switch (rng() % 4) {
          case 0:
            s[pos] = static_cast<char>(rng() % 256);
            break;
          case 1:
            s.erase(pos, 1 + rng() % 8);
            break;
          case 2:
            s.insert(pos, tokens[rng() % std::size(tokens)]);
            break;
          case 3:
            s.replace(pos, std::min<std::size_t>(3, s.size() - pos),
                      tokens[rng() % std::size(tokens)]);
            break;
        }
        if (s.empty()) s.push_back(' ');
      }
      try {
        const Trace t = parse_trace(s, "m.json");
        ++parsed;
        QVERIFY(!t.lanes.empty());
        for (const Event& e : t.events) QVERIFY(std::isfinite(e.start) && e.dur >= 0);
        const Summary sum = summarize(t);
        QVERIFY(std::isfinite(sum.total_us.value));
      } catch (const InputError& e) {
        ++rejected;
        QVERIFY(!QString(e.what()).contains('\n'));
      }
    }
    qInfo("mutations: %d parsed, %d rejected", parsed, rejected);
    QVERIFY(rejected > 0);
  }

  void file_errors() {
    QTemporaryDir dir;
    auto message = [](const QString& path) {
      try {
        read_trace_file(path.toStdString());
      } catch (const InputError& e) {
        return QString::fromUtf8(e.what());
      }
      return QString();
    };
    QVERIFY(message(dir.filePath("missing.json")).contains("no such file"));
    QVERIFY(message(dir.path()).contains("not a regular file"));
    const QString empty = test::write_temp("", "empty.json");
    QVERIFY(message(empty).contains("is empty"));
    const QString good = test::write_temp(test::ring_trace_json({}), "good.json");
    QCOMPARE(read_trace_file(good.toStdString()).lanes.size(), std::size_t{4});
  }
};

class SummaryTest : public QObject {
  Q_OBJECT

 private slots:
  void full_mask_ring_overlaps() {
    // 4 devices, 100 us compute > 60 us transfer: every transfer hides under
    // compute, so total = 4 x 100, efficiency 1, nothing exposed or idle.
    RingSpec spec;
    const Summary s = compute_summary(parse_trace(test::ring_trace_json(spec)));
    QCOMPARE(s.devices, 4);
    QCOMPARE(s.steps, 4);
    QCOMPARE(s.total_us.value, 400.0);
    QCOMPARE(s.ideal_us.value, 400.0);
    QCOMPARE(s.efficiency.value, 1.0);
    QCOMPARE(s.exposed_comm_us.value, 0.0);
    QCOMPARE(s.idle_fraction.value, 0.0);
    QCOMPARE(s.per_step.size(), std::size_t{4});
    QCOMPARE(s.per_step[0].compute_max_us, 100.0);
    QCOMPARE(s.per_step[0].transfer_max_us, 60.0);
    QCOMPARE(s.per_step[0].bytes, 4.0 * 16777216);
    QCOMPARE(s.per_step[3].transfer_max_us, 0.0);  // the last block is not passed on
  }

  void full_mask_ring_comm_bound() {
    // Transfer 150 > compute 100: three steps of 150 and a last one of 100:
    // total 550; per device 450 us of link time, 300 of it under compute.
    RingSpec spec;
    spec.transfer_us = 150;
    const Summary s = compute_summary(parse_trace(test::ring_trace_json(spec)));
    QCOMPARE(s.total_us.value, 550.0);
    QCOMPARE(s.ideal_us.value, 400.0);
    QCOMPARE(s.efficiency.value, 400.0 / 550.0);
    QCOMPARE(s.exposed_comm_us.value, 150.0);
    QCOMPARE(s.idle_fraction.value, 0.0);
  }

  void causal_ring_by_hand() {
    // 2 devices, causal, compute 100 (half for the diagonal block), transfer 60.
    // device 0: step 0 half block 0..50, link 0..60; step 1 block 1 is masked: ends at 60.
    // device 1: step 0 half block 0..50, link 0..60; step 1 full block 60..160.
    RingSpec spec;
    spec.devices = 2;
    spec.causal = true;
    const Summary s = compute_summary(parse_trace(test::ring_trace_json(spec)));
    QCOMPARE(s.total_us.value, 160.0);
    QCOMPARE(s.ideal_us.value, (50.0 + 150.0) / 2);  // 100
    QCOMPARE(s.efficiency.value, 100.0 / 160.0);
    QCOMPARE(s.exposed_comm_us.value, 10.0);                   // 50..60 on both
    QCOMPARE(s.idle_fraction.value, (100.0 + 0.0) / 2 / 160);  // device 0 idles 60..160
    QCOMPARE(s.per_step.size(), std::size_t{2});
    QCOMPARE(s.per_step[0].compute_max_us, 50.0);
    QCOMPARE(s.per_step[1].compute_max_us, 100.0);
    QCOMPARE(s.per_step[1].devices, 1);
    QCOMPARE(s.per_step[1].compute_mean_us, 100.0);
  }

  void trace_summary_takes_precedence() {
    RingSpec spec;
    spec.summary_json =
        R"({"time_s":0.0005,"ideal_time_s":0.00039,"efficiency":0.78,"exposed_comm_s":2e-5,)"
        R"("compute_s_per_step":1e-4,"layout":"ring","causal":false})";
    const Summary s = summarize(parse_trace(test::ring_trace_json(spec)));
    QVERIFY(s.total_us.from_trace);
    QVERIFY(std::abs(s.total_us.value - 500.0) < 1e-9);
    QVERIFY(std::abs(s.ideal_us.value - 390.0) < 1e-9);
    QCOMPARE(s.efficiency.value, 0.78);
    QVERIFY(std::abs(s.exposed_comm_us.value - 20.0) < 1e-9);
    QVERIFY(!s.idle_fraction.from_trace);  // not in the summary: computed
    QCOMPARE(s.idle_fraction.value, 0.0);
    bool per_step_kept = false;
    for (const auto& f : s.other) per_step_kept |= f.key == "compute_s_per_step";
    QVERIFY(per_step_kept);
  }

  void out_of_range_summary_values_are_not_drawn_as_numbers() {
    // A negative time or an efficiency of 7 in another writer's summary is
    // never a headline: the events' own values stand, and the field is
    // listed, marked. Every headline stays finite and in range.
    RingSpec spec;
    spec.summary_json = R"({"time_s":-5,"ideal_time_s":1e300,"efficiency":7,"idle_fraction":-0.5})";
    const Summary s = summarize(parse_trace(test::ring_trace_json(spec)));
    QVERIFY(!s.total_us.from_trace);
    QCOMPARE(s.total_us.value, 400.0);
    QVERIFY(!s.efficiency.from_trace);
    QCOMPARE(s.efficiency.value, 1.0);
    QVERIFY(!s.idle_fraction.from_trace);
    QVERIFY(s.ideal_us.from_trace);  // huge but a valid time: shown as given
    int marked = 0;
    for (const auto& f : s.other)
      if (!f.is_number && f.text.find("out of range") != std::string::npos) ++marked;
    QCOMPARE(marked, 3);
  }

  void formats() {
    QCOMPARE(format_us(0), std::string("0 us"));
    QCOMPARE(format_us(12.5), std::string("12.5 us"));
    QCOMPARE(format_us(1500), std::string("1.5 ms"));
    QCOMPARE(format_us(2.5e6), std::string("2.5 s"));
    QCOMPARE(format_us(0.25), std::string("250 ns"));
    QCOMPARE(format_bytes(16777216), std::string("16.8 MB"));
    QCOMPARE(format_bytes(512), std::string("512 B"));
  }
};

class ViewLodTest : public QObject {
  Q_OBJECT

 private slots:
  void zoom_and_pan() {
    TimeView v;
    v.set_extent(0, 1000);
    v.fit();
    QVERIFY(v.t0() < 0 && v.t1() > 1000);
    const double span = v.span();
    v.zoom(2, 500);
    QVERIFY(std::abs(v.span() - span / 2) < 1e-9);
    QVERIFY(std::abs((v.t0() + v.t1()) / 2 - 500) < 1e-9);  // the anchor stayed put
    const double t0 = v.t0();
    v.pan(100);
    QVERIFY(std::abs(v.t0() - (t0 + 100)) < 1e-9);
    // Anchor at the left edge: the left edge stays.
    const double left = v.t0();
    v.zoom(4, left);
    QVERIFY(std::abs(v.t0() - left) < 1e-9);
    // Limits: no narrower than 1 ns, no wider than 4x the trace, never panned away.
    v.zoom(1e30, 10);
    QVERIFY(std::abs(v.span() - TimeView::kMinSpanUs) < 1e-12);
    v.zoom(1e-30, 10);
    QCOMPARE(v.span(), 4000.0);
    v.pan(1e12);
    QVERIFY(v.t0() < 1000);
    v.pan(-1e12);
    QVERIFY(v.t1() > 0);
    v.zoom(std::nan(""), 1);
    v.pan(std::nan(""));
    QVERIFY(std::isfinite(v.t0()) && std::isfinite(v.t1()));
    QCOMPARE(v.x_of(v.t0(), 100, 500), 100.0);
    QCOMPARE(v.t_of(600, 100, 500), v.t1());
  }

  void lanes_group_when_thin() {
    const BandLayout few = layout_lanes(8, 10, 400, 3);
    QCOMPARE(few.group_size, 1);
    QCOMPARE(few.groups.size(), std::size_t{8});
    QCOMPARE(few.groups[7].y, 10 + 7 * 50.0);
    const BandLayout many = layout_lanes(4096, 0, 800, 3);
    QVERIFY(many.group_size > 1);
    QVERIFY(many.groups.size() <= 800 / 3);
    QCOMPARE(many.groups.back().last, 4096);
    for (const auto& g : many.groups) QVERIFY(g.h >= 3);
    const int g400 = group_at(many, 400);
    QVERIFY(g400 >= 0);
    QVERIFY(many.groups[static_cast<std::size_t>(g400)].y <= 400 &&
            400 < many.groups[static_cast<std::size_t>(g400)].y +
                      many.groups[static_cast<std::size_t>(g400)].h);
    QCOMPARE(group_at(many, -1), -1);
    RowMask r = 0;
    QVERIFY(row_at(few.groups[0], 10 + 1, &r));
    QCOMPARE(r, mask_of(Row::Compute));
    // Thin lanes merge their rows rather than draw sub-pixel slivers.
    VisualRow strips[3];
    QCOMPARE(visual_rows(few.groups[0], strips), 3);
    LaneGroup thin{0, 1, 0, 6};
    QCOMPARE(visual_rows(thin, strips), 2);
    QCOMPARE(int(strips[1].rows), mask_of(Row::Send) | mask_of(Row::Recv));
    thin.h = 3;
    QCOMPARE(visual_rows(thin, strips), 1);
    QCOMPARE(strips[0].rows, kAllRows);
    for (const auto& g : many.groups) QCOMPARE(g.y, std::floor(g.y));  // whole pixels
  }

  void binning_is_bounded_by_columns() {
    RingSpec spec;
    spec.devices = 64;
    const Trace t = parse_trace(test::ring_trace_json(spec));
    Binner b;
    for (const int columns : {7, 100, 1000}) {
      const auto& runs = b.runs(t, 0, 64, mask_of(Row::Compute), 0, t.end_us, columns);
      QVERIFY(!runs.empty());
      QVERIFY(runs.size() <= static_cast<std::size_t>(columns));
      // Every device computes all the time: one run over all columns, fully busy.
      QCOMPARE(runs.size(), std::size_t{1});
      QCOMPARE(runs[0].x0, 0);
      QCOMPARE(runs[0].x1, columns);
      QCOMPARE(runs[0].phase, Phase::Partial);
      QCOMPARE(int(runs[0].level), kDensityLevels);
    }
    // The send row is busy 60 of every 100 us for 63 steps: about 60% busy.
    const auto cover = Binner::cover(t, 0, 64, mask_of(Row::Send), 0, 6300);
    QVERIFY(std::abs(cover[static_cast<int>(Phase::Send)] - 0.6) < 1e-9);
  }

  void hit_testing() {
    const Trace t = parse_trace(test::ring_trace_json({}));
    const long hit = hit_event(t, 2, mask_of(Row::Compute), 150, 0.5);
    QVERIFY(hit >= 0);
    QCOMPARE(t.events[static_cast<std::size_t>(hit)].step, 1);
    QCOMPARE(t.events[static_cast<std::size_t>(hit)].device, 2);
    QCOMPARE(hit_event(t, 2, mask_of(Row::Send), 80, 0.5), -1L);  // between sends
    QVERIFY(hit_event(t, 2, mask_of(Row::Send), 80, 25) >= 0);    // within tolerance
    QCOMPARE(hit_event(t, 99, mask_of(Row::Send), 80, 25), -1L);
    QCOMPARE(visible_count(t, 0, mask_of(Row::Compute), 150, 250), std::size_t{2});
  }
};

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  int status = 0;
  TraceReaderTest a;
  status |= QTest::qExec(&a, argc, argv);
  SummaryTest b;
  status |= QTest::qExec(&b, argc, argv);
  ViewLodTest c;
  status |= QTest::qExec(&c, argc, argv);
  return status;
}

#include "test_trace_data.moc"
