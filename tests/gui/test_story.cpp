// The timeline's story of a run: the device x step heatmap of waits, the
// critical device and path, range statistics, the filter, fault and node
// naming from the run's metadata, the header's verdict, the Perfetto export,
// and a 256-device trace opening on the heatmap. The plain-C++ parts run on
// hand-built traces whose expected values are worked out in the comments.
#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>

#include "gui/critical_path.hpp"
#include "gui/event_filter.hpp"
#include "gui/header_text.hpp"
#include "gui/main_window.hpp"
#include "gui/perfetto_export.hpp"
#include "gui/range_stats.hpp"
#include "gui/run_facts.hpp"
#include "gui/timeline_scene.hpp"
#include "gui/timeline_widget.hpp"
#include "gui/wait_heatmap.hpp"
#include "models/core/errors.hpp"
#include "tests/gui/trace_fixtures.hpp"

using namespace ringsim::gui;

namespace {

// One complete event; peer < 0 and step < -1 are left out of args.
std::string ev(const char* name, int device, double ts, double dur, int step, int peer = -1,
               const char* pass = "fwd", int layer = -1) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                R"({"name":"%s","ph":"X","pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,)"
                R"("args":{"device":%d,"step":%d,"pass":"%s"%s%s}})",
                name, device, ts, dur, device, step, pass,
                peer >= 0 ? (",\"peer\":" + std::to_string(peer)).c_str() : "",
                layer >= 0 ? (",\"layer\":" + std::to_string(layer)).c_str() : "");
  return buf;
}

Trace make(const std::vector<std::string>& events, const std::string& ringsim = "") {
  std::string json = "{\"traceEvents\":[";
  for (std::size_t i = 0; i < events.size(); ++i) json += (i ? "," : "") + events[i];
  json += "]";
  if (!ringsim.empty()) json += ",\"otherData\":{\"ringsim\":" + ringsim + "}";
  return parse_trace(json + "}");
}

// A fault run's metadata as `ringsim run --straggler 5:1.5 --degrade 7-8:3`
// writes it on 2 nodes of 8 GPUs (sim/trace_writer.cpp, sim/sim_report.cpp).
const char* kFaultRun = R"({"format":"ringsim-trace-1","devices":16,"steps":2,"layout":"ring",
  "summary":{"platform":"2 node(s) x 8 GPUs on an NVLink switch, one NIC per GPU",
  "critical_device":5,"exposed_comm_s":0,
  "faults":{"straggler":[{"device":5,"factor":1.5}],"degrade":[{"link":"7-8","factor":3}]}}})";

}  // namespace

class StoryTest : public QObject {
  Q_OBJECT

 private slots:
  void heatmap_bins_waits_per_device_and_step() {
    // Two devices, forward steps 0-1 then backward step 0:
    //   device 0: fwd step 0 waits 10; fwd step 1 waits 5 + 7 = 12; bwd step 0 waits 4
    //   device 1: fwd step 1 waits 3
    // A wait outside the ring steps (step -1) has no column.
    const Trace t =
        make({ev("partial", 0, 0, 10, 0), ev("wait", 0, 10, 10, 0), ev("partial", 1, 0, 20, 0),
              ev("partial", 0, 20, 5, 1), ev("wait", 0, 25, 5, 1), ev("wait", 0, 30, 7, 1),
              ev("wait", 1, 34, 3, 1), ev("partial", 0, 40, 5, 0, -1, "bwd"),
              ev("wait", 0, 45, 4, 0, -1, "bwd"), ev("wait", 1, 50, 9, -1)});
    const WaitHeatmap h = bin_waits(t);
    QCOMPARE(h.rows, 2);
    QCOMPARE(h.columns.size(), std::size_t{3});  // fwd 0, fwd 1, bwd 0 in run order
    QCOMPARE(h.columns[0].step, 0);
    QCOMPARE(h.columns[1].step, 1);
    QVERIFY(h.columns[2].pass == PassKind::Bwd);
    QCOMPARE(h.at(0, 0), 10.0);
    QCOMPARE(h.at(0, 1), 12.0);  // 5 + 7
    QCOMPARE(h.at(0, 2), 4.0);
    QCOMPARE(h.at(1, 0), 0.0);
    QCOMPARE(h.at(1, 1), 3.0);
    QCOMPARE(h.max_us, 12.0);
    QCOMPARE(h.row_total_us[0], 26.0);  // 10 + 12 + 4
    QCOMPARE(h.row_total_us[1], 3.0);   // the step -1 wait is left out
    // Column 1 spans fwd step 1 on both devices: device 0's partial at 20 to device 1's wait
    // end 37.
    QCOMPARE(h.columns[1].t0, 20.0);
    QCOMPARE(h.columns[1].t1, 37.0);
    QCOMPARE(h.column_of(-1, PassKind::Bwd, 0), 2);
  }

  void critical_device_and_path_by_hand() {
    // Device 0 computes step 0 in [0, 10] while sending its block to device 1
    // over [0, 10]; device 1 computes only [0, 4], waits [4, 10] for it, then
    // computes step 1 over [10, 30]. Device 0's step 1 ends at 20.
    // The run ends at 30 on device 1, so device 1 is critical; its path walks
    // back: partial [10, 30] <- wait [4, 10] (ends when it starts) <- the send
    // from device 0 that ends at 10, which starts at 0: the chain's start.
    const Trace t =
        make({ev("partial", 0, 0, 10, 0), ev("send", 0, 0, 10, 0, 1), ev("partial", 0, 10, 10, 1),
              ev("partial", 1, 0, 4, 0), ev("recv", 1, 0, 10, 0, 0), ev("wait", 1, 4, 6, 0, 0),
              ev("partial", 1, 10, 20, 1)});
    QCOMPARE(critical_device(t), 1);
    const CriticalPath cp = critical_path(t);
    QCOMPARE(cp.device, 1);
    QCOMPARE(cp.end_us, 30.0);
    QCOMPARE(cp.device_wait_us, 6.0);
    QCOMPARE(cp.events.size(), std::size_t{3});
    const Event& a = t.events[cp.events[0]];
    const Event& b = t.events[cp.events[1]];
    const Event& c = t.events[cp.events[2]];
    QVERIFY(a.phase == Phase::Send && a.device == 0);
    QVERIFY(b.phase == Phase::Wait && b.device == 1);
    QVERIFY(c.phase == Phase::Partial && c.device == 1 && c.step == 1);
  }

  void critical_device_tie_goes_to_the_one_that_waits_least() {
    // Both end at 20; device 0 waited 8 of it, device 1 computed throughout:
    // device 1 is the one the others wait for.
    const Trace t =
        make({ev("partial", 0, 0, 12, 0), ev("wait", 0, 12, 8, 0), ev("partial", 1, 0, 20, 0)});
    QCOMPARE(critical_device(t), 1);
  }

  void range_statistics_by_hand() {
    // Over [5, 20] (15 us) with three devices:
    //   device 0: partial [0, 10], wait [10, 20], send [0, 15]
    //     compute [5, 10] = 5; wait [10, 20] = 10; send inside compute or wait: comm 0; idle 0
    //   device 1: partial [5, 25]: compute 15
    //   device 2: send [0, 8]: comm [5, 8] = 3; idle 15 - 3 = 12
    // Sums: compute 20, wait 10, comm 3, idle 12 = 45 = 3 devices x 15.
    // Per phase: partial 5 + 15 = 20, wait 10, send [5, 15] 10 + [5, 8] 3 = 13.
    const Trace t =
        make({ev("partial", 0, 0, 10, 0), ev("wait", 0, 10, 10, 0), ev("send", 0, 0, 15, 0, 1),
              ev("partial", 1, 5, 20, 0), ev("send", 2, 0, 8, 0, 0)});
    const RangeStats s = range_stats(t, 20, 5);  // reversed ends are accepted
    QCOMPARE(s.t0, 5.0);
    QCOMPARE(s.devices, 3);
    QCOMPARE(s.compute_us, 20.0);
    QCOMPARE(s.wait_us, 10.0);
    QCOMPARE(s.comm_us, 3.0);
    QCOMPARE(s.idle_us, 12.0);
    QCOMPARE(s.device_us(), 45.0);
    QCOMPARE(s.phase_us[static_cast<int>(Phase::Partial)], 20.0);
    QCOMPARE(s.phase_us[static_cast<int>(Phase::Wait)], 10.0);
    QCOMPARE(s.phase_us[static_cast<int>(Phase::Send)], 13.0);
    // Only lane 1: compute 15 of 15.
    const RangeStats one = range_stats(t, 5, 20, 1, 2);
    QCOMPARE(one.devices, 1);
    QCOMPARE(one.compute_us, 15.0);
    QCOMPARE(one.idle_us, 0.0);
    QVERIFY(range_text(s).contains("compute 44.4%"));  // 20 / 45
  }

  void filter_by_phase_device_step_pass() {
    EventFilter f;
    std::string err;
    QVERIFY(parse_filter("wait device=1-2 step=0 bwd", &f, &err));
    QVERIFY(f.any());
    Event e;
    e.phase = Phase::Wait;
    e.device = 2;
    e.step = 0;
    e.pass = PassKind::Bwd;
    QVERIFY(f.matches(e));
    e.device = 3;
    QVERIFY(!f.matches(e));  // outside device=1-2
    e.device = 1;
    e.pass = PassKind::Fwd;
    QVERIFY(!f.matches(e));  // wrong pass
    e.pass = PassKind::Bwd;
    e.phase = Phase::Send;
    QVERIFY(!f.matches(e));  // wrong phase
    QVERIFY(parse_filter("phase=send,recv", &f, &err));
    QVERIFY(f.matches(e));

    QVERIFY(!parse_filter("device=3-1", &f, &err));
    QVERIFY2(err.rfind("filter: 'device=3-1': ", 0) == 0, err.c_str());
    QVERIFY(!parse_filter("waits", &f, &err));
    QVERIFY2(err.find("wait") != std::string::npos, err.c_str());  // lists the phases
    QVERIFY(parse_filter("  ", &f, &err));
    QVERIFY(!f.any());

    // The filtered trace: device 0's two waits in step 0 and 1 -> step=1 keeps one,
    // and with no device term every lane stays (idle ones included).
    const Trace t = make({ev("partial", 0, 0, 10, 0), ev("wait", 0, 10, 10, 0),
                          ev("wait", 0, 25, 5, 1), ev("partial", 1, 0, 20, 0)});
    QVERIFY(parse_filter("wait step=1", &f, &err));
    const Trace w = filter_trace(t, f);
    QCOMPARE(w.events.size(), std::size_t{1});
    QCOMPARE(w.lanes.size(), std::size_t{2});
    QCOMPARE(w.events[0].start, 25.0);  // the same time axis as the whole trace
    QCOMPARE(w.end_us, t.end_us);
    QVERIFY(parse_filter("device=1", &f, &err));
    const Trace d = filter_trace(t, f);
    QCOMPARE(d.lanes.size(), std::size_t{1});
    QCOMPARE(d.lanes[0].device, 1);
  }

  void job_rings_are_named() {
    // A job-mode summary (ringsim run --dp): 2 rings of 2 ranks; device 3 is
    // ring 1's rank 1, and the header names the slowest ring and why.
    const Trace t = make({ev("partial", 0, 0, 10, 0), ev("partial", 3, 0, 12, 0)},
                         R"J({"summary":{"job":{"rings":2,"ranks_per_ring":2,"slowest_ring":1,
                           "why":"device 3 (rank 1) computes 2x slower (--straggler)"}}})J");
    const RunFacts f = run_facts(t.run);
    QCOMPARE(f.rings, 2);
    QCOMPARE(f.ranks_per_ring, 2);
    QCOMPARE(ring_of(f, 3), 1);
    QCOMPARE(ring_of(f, 1), 0);
    QCOMPARE(job_line(f), std::string("job: 2 rings x 2 ranks; slowest ring 1: device 3 (rank 1) "
                                      "computes 2x slower (--straggler)"));
    QVERIFY(header_story(f, -1, 0).find("slowest ring 1") != std::string::npos);
    const LoadedTrace lt = make_loaded(std::make_shared<Trace>(t), "job");
    QCOMPARE(lane_label(lt, t.lane_of_device(3)), QString::fromUtf8("ring 1 \u00b7 rank 1"));
    QVERIFY(band_title(lt).contains("2 rings x 2 ranks"));
    // One ring (no job, or a damaged job.rings): no ring facts, lanes keep their names.
    const Trace one =
        make({ev("partial", 0, 0, 1, 0)}, R"({"summary":{"job":{"rings":1,"ranks_per_ring":8}}})");
    QCOMPARE(run_facts(one.run).rings, 0);
    QCOMPARE(job_line(run_facts(one.run)), std::string());
  }

  void faults_and_nodes_are_named() {
    const Trace t =
        make({ev("partial", 5, 0, 30, 0), ev("send", 7, 0, 30, 0, 8), ev("partial", 8, 0, 10, 0)},
             kFaultRun);
    const RunFacts f = run_facts(t.run);
    QCOMPARE(f.gpus_per_node, 8);  // "2 node(s) x 8 GPUs"
    QCOMPARE(f.critical_device, 5);
    QCOMPARE(f.faults.size(), std::size_t{2});
    QCOMPARE(f.faults[0].text, std::string("device 5 computes x1.5"));
    QCOMPARE(f.faults[1].text, std::string("link 7-8 bandwidth /3"));
    QVERIFY(straggler_of(f, 5) && !straggler_of(f, 4));
    QVERIFY(degraded_link(f, 8, 7) != nullptr);  // either direction of the route
    QVERIFY(degraded_link(f, 6, 7) == nullptr);
    QVERIFY(crosses_node(f, 7, 8));   // node 0 -> node 1: the hop that paces the ring
    QVERIFY(!crosses_node(f, 6, 7));  // inside node 0
    QCOMPARE(faults_line(f), std::string("faults: device 5 computes x1.5; link 7-8 bandwidth /3"));
    const std::string story = header_story(f, 5, 0);
    QVERIFY2(story.find("critical device 5") != std::string::npos &&
                 story.find("link 7-8 bandwidth /3") != std::string::npos,
             story.c_str());
    // The band header paints it: the scene's loaded trace carries the same facts.
    const LoadedTrace lt = make_loaded(std::make_shared<Trace>(t), "fault");
    QCOMPARE(lane_label(lt, t.lane_of_device(5)), QString("x1.5 device 5"));
    QCOMPARE(static_cast<int>(lt.internode_sender[static_cast<std::size_t>(t.lane_of_device(7))]),
             1);
    // A flat ring: one node, nothing crosses.
    const Trace flat = make({ev("partial", 0, 0, 1, 0)},
                            R"({"summary":{"platform":"flat ring of 8 point-to-point links"}})");
    QCOMPARE(run_facts(flat.run).gpus_per_node, 0);
  }

  void header_uses_the_verdict() {
    // The simulator's summary says exposed_comm_s 0 (the old definition) but
    // its verdict says 3.8 ms exposed: the header shows the verdict's numbers.
    const Trace t = make({ev("partial", 0, 0, 10, 0), ev("wait", 0, 10, 10, 0)},
                         R"J({"summary":{"time_s":2e-5,"exposed_comm_s":0,
                           "verdict":{"hidden":false,"exposed_comm_s":0.0038,
                                      "text":"communication hidden: no (3.8 ms exposed)"}}})J");
    const RunFacts f = run_facts(t.run);
    QVERIFY(f.has_verdict);
    QCOMPARE(f.verdict_hidden, std::string("false"));
    QCOMPARE(f.verdict_exposed_us, 3800.0);  // 0.0038 s
    const std::string line = header_numbers(summarize(t), f);
    QVERIFY2(line.find("exposed comm 3.8 ms") != std::string::npos, line.c_str());
    QCOMPARE(header_verdict(f), std::string("communication hidden: no (3.8 ms exposed)"));
    QVERIFY2(line.find("communication hidden") == std::string::npos, line.c_str());
    QVERIFY2(line.find("exposed comm 0 us") == std::string::npos, line.c_str());

    // No summary (an MPI trace): measured from the events, and said so.
    // Exposed = the wait [10, 20] that no compute overlaps = 10 us.
    const Trace m = make({ev("partial", 0, 0, 10, 0), ev("wait", 0, 10, 10, 0)});
    const std::string measured = header_numbers(summarize(m), run_facts(m.run));
    QVERIFY2(measured.find("exposed comm 10 us") != std::string::npos &&
                 measured.find("(measured from the trace)") != std::string::npos,
             measured.c_str());
  }

  void infer_header_names_what_infer_prints() {
    // An infer trace: the ring's transfers hidden, the TP all-reduces not;
    // the header says so in infer's words instead of one "exposed comm".
    const Trace t = make({ev("partial", 0, 0, 10, 0), ev("alltoall", 0, 10, 10, 0)},
                         R"J({"summary":{"analytic":{"ttft_s":0.85,"attention_exposed_comm_s":0,
                           "tp_comm_s":0.169}}})J");
    const std::string line = header_numbers(summarize(t), run_facts(t.run));
    QVERIFY2(line.find("TTFT 850") != std::string::npos, line.c_str());
    QVERIFY2(line.find("ring transfers exposed 0 us") != std::string::npos, line.c_str());
    QVERIFY2(line.find("TP all-reduces 169") != std::string::npos, line.c_str());
    QVERIFY2(line.find("exposed comm") == std::string::npos, line.c_str());
  }

  void perfetto_export_round_trips() {
    const Trace t = make({ev("partial", 5, 0, 30, 0), ev("send", 7, 0, 30, 0, 8),
                          ev("recv", 8, 0, 30, 0, 7), ev("partial", 8, 0, 10, 0)},
                         kFaultRun);
    QTemporaryDir dir;
    const std::string path = dir.filePath("perfetto.json").toStdString();
    export_perfetto(t, run_facts(t.run), path);
    const Trace back = read_trace_file(path);
    QCOMPARE(back.events.size(), t.events.size());
    QCOMPARE(back.lanes.size(), t.lanes.size());
    // The faults survive the flatten / unflatten through the writer's metadata.
    QCOMPARE(faults_line(run_facts(back.run)), faults_line(run_facts(t.run)));
    // Nowhere to write: one line naming the flag.
    try {
      export_perfetto(t, run_facts(t.run), "/nonexistent/dir/x.json");
      QFAIL("expected an InputError");
    } catch (const ringsim::InputError& e) {
      QVERIFY2(std::string(e.what()).find("Export for Perfetto") != std::string::npos, e.what());
    }
  }

  void trace_of_256_devices_opens_on_the_heatmap() {
    test::RingSpec spec;
    spec.devices = 256;
    spec.steps = 8;
    spec.causal = true;
    spec.transfer_us = 120;  // waits where a device computes less than a transfer
    const QString path = test::write_temp(test::ring_trace_json(spec), "ring256s8.json");
    const LoadedTrace lt = load_trace(path);
    QCOMPARE(lt.heatmap->rows, 256);
    QCOMPARE(lt.heatmap->columns.size(), std::size_t{8});
    // Causal contiguous ring: device 0 computes half a block at step 0 (50 us)
    // against a 120 us transfer, then nothing: waits 70 us at step 0, 120 after.
    QCOMPARE(lt.heatmap->at(0, 0), 70.0);
    QCOMPARE(lt.heatmap->at(0, 1), 120.0);
    QCOMPARE(lt.heatmap->at(255, 1), 20.0);  // device 255 computes a full block, 100 of 120
    QCOMPARE(lt.heatmap->max_us, 120.0);
    TimelineWidget w;
    w.resize(1400, 900);
    w.set_traces({lt});
    QVERIFY(w.scene().mode() == ViewMode::Heatmap);
    QImage img(1400, 900, QImage::Format_ARGB32_Premultiplied);
    {
      QPainter p(&img);
      w.scene().paint(p, w.view());
    }
    // Device 0's row at step 1 is the scale's darkest red.
    int trace = -1, row = -1, col = -1;
    const auto& band = w.scene().bands()[0];
    const auto& g0 = band.layout.groups[0];
    const QPointF cell(band.lanes.left() + band.lanes.width() * 1.5 / 8, g0.y + g0.h / 2);
    QVERIFY(w.scene().heat_cell(cell, &trace, &row, &col));
    QCOMPARE(row, 0);
    QCOMPARE(col, 1);
    QVERIFY(w.tooltip_at(cell).contains("waited 120 us"));
    // Drill down: the lanes around device 0 at step 1.
    QVERIFY(w.drill_down(0, 100, 1));
    QVERIFY(w.scene().mode() == ViewMode::Lanes);
    QCOMPARE(w.scene().lane_window_first(), 84);  // 100 - 32 / 2
    QCOMPARE(w.scene().bands()[0].layout.groups.front().first, 84);
    QCOMPARE(w.scene().bands()[0].layout.groups.size(), std::size_t{32});
    const HeatColumn& c1 = lt.heatmap->columns[1];
    QVERIFY(w.view().t0() < c1.t0 && w.view().t1() > c1.t1 &&
            w.view().span() < 1.2 * (c1.t1 - c1.t0));
    {
      QPainter p(&img);
      w.scene().paint(p, w.view());
    }
    // A 16-device trace stays on the lanes.
    test::RingSpec small;
    small.devices = 16;
    w.set_traces({load_trace(test::write_temp(test::ring_trace_json(small), "r16.json"))});
    QVERIFY(w.scene().mode() == ViewMode::Lanes);
  }

  void window_filter_and_perfetto_export() {
    test::RingSpec spec;
    spec.devices = 4;
    spec.transfer_us = 150;  // waits of 50 us in steps 0-2
    MainWindow w;
    w.set_error_sink([](const QString&, const QString&) {});
    QVERIFY(w.open_trace(test::write_temp(test::ring_trace_json(spec), "r4w.json")));
    const std::size_t all = w.traces().front().trace->events.size();
    QVERIFY(w.apply_filter("wait step=1"));
    // One wait per device in step 1.
    QCOMPARE(w.traces().front().trace->events.size(), std::size_t{4});
    for (const Event& e : w.traces().front().trace->events) QVERIFY(e.phase == Phase::Wait);
    QVERIFY(!w.apply_filter("bogus=1"));  // a bad filter changes nothing
    QCOMPARE(w.traces().front().trace->events.size(), std::size_t{4});
    QTemporaryDir dir;
    const QString out = dir.filePath("filtered.json");
    QVERIFY(w.export_perfetto_to(out));
    QCOMPARE(read_trace_file(out.toStdString()).events.size(), std::size_t{4});
    QVERIFY(w.apply_filter(""));
    QCOMPARE(w.traces().front().trace->events.size(), all);
  }

  void range_selection_in_the_widget() {
    test::RingSpec spec;
    spec.devices = 4;
    spec.transfer_us = 150;  // each step: partial 100, wait 50 (the last step has no transfer)
    TimelineWidget w;
    w.resize(1200, 600);
    w.set_traces({load_trace(test::write_temp(test::ring_trace_json(spec), "r4.json"))});
    QSignalSpy spy(&w, &TimelineWidget::range_selected);
    // [0, 150]: every device computes 100 and waits 50 of its step 0.
    w.select_range(150, 0);
    QVERIFY(w.has_range());
    QCOMPARE(w.range().devices, 4);
    QCOMPARE(w.range().compute_us, 400.0);
    QCOMPARE(w.range().wait_us, 200.0);
    QCOMPARE(spy.count(), 1);
    QVERIFY(spy.takeFirst().at(0).toString().contains("wait 33.3%"));  // 200 / 600
    w.select_range(0, 0);
    QVERIFY(!w.has_range());
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  StoryTest t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_story.moc"
