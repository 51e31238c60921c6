#include "gui/timeline_scene.hpp"

#include <QFileInfo>
#include <QFontMetricsF>
#include <QPainterPath>
#include <QPolygonF>
#include <algorithm>
#include <cmath>

#include "gui/header_text.hpp"

namespace ringsim::gui {

QColor phase_color(Phase p) {
  const auto rgb = trace::phase_rgb(p);
  return QColor((rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff);
}

LoadedTrace make_loaded(std::shared_ptr<const Trace> trace, const QString& title) {
  LoadedTrace t;
  t.summary = summarize(*trace);
  t.facts = run_facts(trace->run);
  t.critical = critical_path(*trace);
  auto heat = std::make_shared<WaitHeatmap>(bin_waits(*trace));
  // Forward/backward and layer spans, from the heatmap's columns (in run order).
  for (std::size_t c = 0; c < heat->columns.size(); ++c) {
    const HeatColumn& col = heat->columns[c];
    if (t.passes.empty() || t.passes.back().layer != col.layer || t.passes.back().pass != col.pass)
      t.passes.push_back(
          {col.layer, col.pass, col.t0, col.t1, static_cast<int>(c), static_cast<int>(c)});
    PassSpan& ps = t.passes.back();
    ps.t0 = std::min(ps.t0, col.t0);
    ps.t1 = std::max(ps.t1, col.t1);
    ps.col1 = static_cast<int>(c) + 1;
  }
  t.heatmap = std::move(heat);
  t.internode_sender.assign(trace->lanes.size(), 0);
  if (t.facts.gpus_per_node > 0)
    for (const Event& e : trace->events)
      if (e.phase == Phase::Send && crosses_node(t.facts, e.device, e.peer))
        t.internode_sender[static_cast<std::size_t>(trace->lane_of_device(e.device))] = 1;
  t.trace = std::move(trace);
  t.title = title;
  return t;
}

LoadedTrace load_trace(const QString& path, const QString& title) {
  auto trace = std::make_shared<Trace>(read_trace_file(path.toStdString()));
  return make_loaded(std::move(trace), title.isEmpty() ? QFileInfo(path).fileName() : title);
}

namespace {

QString text_field(const RunInfo& run, const char* key) {
  const RunInfo::Field* f = run.find(key);
  return f && !f->is_number ? QString::fromStdString(f->text) : QString();
}

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

double natural_lanes_height(const Trace& t) {
  const double n = static_cast<double>(t.lanes.size());
  // Few lanes: tall enough that the thin link rows read; many: 480 px in all.
  const double lane_px = n <= 8    ? 32
                         : n <= 16 ? 26
                                   : std::clamp(480.0 / n, TimelineScene::kMinLanePx, 24.0);
  return std::min(n * lane_px, 720.0);
}

// 1-2-5 steps that put a labelled tick about every `target` pixels.
double tick_step(double span, double width, double target) {
  const double raw = span / std::max(1.0, width / target);
  const double p10 = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p10 >= raw) return m * p10;
  return 10 * p10;
}

QFont small_font(double pt) {
  QFont f;
  f.setPointSizeF(pt);
  return f;
}

}  // namespace

QString band_title(const LoadedTrace& t) {
  QStringList parts;
  const RunInfo& run = t.trace->run;
  QString layout = qs(run.layout);
  if (layout.isEmpty()) layout = text_field(run, "layout");
  if (!layout.isEmpty()) parts << layout;
  if (const RunInfo::Field* c = run.find("causal"); c && !c->is_number)
    parts << (c->text == "true" ? "causal" : "full mask");
  if (const QString pass = text_field(run, "pass"); !pass.isEmpty()) parts << pass;
  if (t.facts.rings > 1)
    parts << QString("%1 rings x %2 ranks").arg(t.facts.rings).arg(t.facts.ranks_per_ring);
  else
    parts << QString("%1 devices").arg(t.trace->lanes.size());
  if (const RunInfo::Field* b = run.find("block"); b && b->is_number)
    parts << QString("block %1").arg(b->number, 0, 'g', 12);
  if (const QString model = text_field(run, "model"); !model.isEmpty()) parts << model;
  return t.title + QString::fromUtf8("  \u2014  ") + parts.join(QString::fromUtf8(" \u00b7 "));
}

QString summary_line(const Summary& s) {
  return QString::fromUtf8(
             "total %1 \u00b7 ideal %2 \u00b7 efficiency %3% \u00b7 exposed comm %4 "
             "\u00b7 idle %5%")
      .arg(qs(format_us(s.total_us.value)), qs(format_us(s.ideal_us.value)))
      .arg(s.efficiency.value * 100, 0, 'f', 1)
      .arg(qs(format_us(s.exposed_comm_us.value)))
      .arg(s.idle_fraction.value * 100, 0, 'f', 1);
}

void TimelineScene::set_traces(std::vector<LoadedTrace> traces) {
  traces_ = std::move(traces);
  window_first_ = window_count_ = 0;
  mode_ = ViewMode::Lanes;
  for (const auto& t : traces_)
    if (static_cast<int>(t.trace->lanes.size()) >= kHeatmapMinDevices &&
        !t.heatmap->columns.empty())
      mode_ = ViewMode::Heatmap;
  present_.fill(false);
  for (const auto& t : traces_)
    for (const Event& e : t.trace->events) present_[static_cast<std::size_t>(e.phase)] = true;
  layout();
}

void TimelineScene::set_mode(ViewMode m) {
  mode_ = m;
  layout();
}

void TimelineScene::set_lane_window(int first, int count) {
  window_first_ = std::max(0, first);
  window_count_ = std::max(0, count);
  layout();
}

void TimelineScene::set_size(QSizeF size) {
  size_ = size;
  layout();
}

QRectF TimelineScene::plot_rect() const {
  const double top = 6, bottom = size_.height() - kAxis - kLegend;
  return QRectF(kGutter, top, std::max(10.0, size_.width() - kGutter - kRightMargin),
                std::max(10.0, bottom - top));
}

double TimelineScene::extent_end() const {
  double end = 0;
  for (const auto& t : traces_) end = std::max(end, t.trace->end_us);
  return end;
}

void TimelineScene::layout() {
  bands_.clear();
  if (traces_.empty()) return;
  const QRectF plot = plot_rect();
  const double gaps = kBandGap * static_cast<double>(traces_.size() - 1);
  const double lanes_total =
      std::max(10.0, plot.height() - gaps - kHeader * static_cast<double>(traces_.size()));
  double weight_sum = 0;
  std::vector<double> weights;
  for (const auto& t : traces_) {
    weights.push_back(natural_lanes_height(*t.trace));
    weight_sum += weights.back();
  }
  double y = plot.top();
  for (std::size_t i = 0; i < traces_.size(); ++i) {
    Band b;
    b.trace = static_cast<int>(i);
    b.header = QRectF(0, y, size_.width(), kHeader);
    y += kHeader;
    const double h = lanes_total * weights[i] / weight_sum;
    b.lanes = QRectF(plot.left(), y, plot.width(), h);
    const int n = static_cast<int>(traces_[i].trace->lanes.size());
    // Drill-down shows a window of lanes; the heatmap always shows every device.
    const int first = mode_ == ViewMode::Lanes ? std::min(window_first_, std::max(0, n - 1)) : 0;
    const int count = mode_ == ViewMode::Lanes && window_count_ > 0
                          ? std::min(window_count_, n - first)
                          : n - first;
    b.layout = layout_lanes(count, y, h, mode_ == ViewMode::Heatmap ? 1.0 : kMinLanePx);
    for (LaneGroup& g : b.layout.groups) {
      g.first += first;
      g.last += first;
    }
    y += h + kBandGap;
    bands_.push_back(std::move(b));
  }
}

int TimelineScene::natural_height(const std::vector<LoadedTrace>& traces) {
  double h = 6 + kAxis + kLegend + 8;
  for (const auto& t : traces) h += kHeader + natural_lanes_height(*t.trace);
  if (!traces.empty()) h += kBandGap * static_cast<double>(traces.size() - 1);
  return static_cast<int>(std::ceil(h));
}

TimelineScene::Hit TimelineScene::hit(QPointF p, const TimeView& view) const {
  Hit h;
  const QRectF plot = plot_rect();
  if (p.x() < plot.left() || p.x() >= plot.right()) return h;
  for (std::size_t b = 0; b < bands_.size(); ++b) {
    const Band& band = bands_[b];
    if (p.y() < band.lanes.top() || p.y() >= band.lanes.bottom()) continue;
    const int g = group_at(band.layout, p.y());
    if (g < 0) return h;
    const LaneGroup& group = band.layout.groups[static_cast<std::size_t>(g)];
    if (!row_at(group, p.y(), &h.rows)) return h;
    h.band = static_cast<int>(b);
    h.group = g;
    h.t = view.t_of(p.x(), plot.left(), plot.width());
    h.column_us = view.span() / plot.width();
    if (group.size() == 1 && mode_ == ViewMode::Lanes)
      h.event = hit_event(*traces_[static_cast<std::size_t>(band.trace)].trace, group.first, h.rows,
                          h.t, 2 * h.column_us);
    return h;
  }
  return h;
}

void TimelineScene::paint(QPainter& p, const TimeView& view, const Selection& sel) const {
  paint_base(p, view);
  paint_selection(p, view, sel);
}

void TimelineScene::paint_base(QPainter& p, const TimeView& view) const {
  p.save();
  p.setRenderHint(QPainter::Antialiasing, false);
  p.fillRect(QRectF(QPointF(0, 0), size_), Qt::white);
  if (traces_.empty()) {
    p.setPen(QColor(0x70, 0x70, 0x70));
    p.drawText(QRectF(QPointF(0, 0), size_), Qt::AlignCenter,
               "Open a trace (File > Open, or drop a file here) or run a simulation.");
    p.restore();
    return;
  }
  const QRectF plot = plot_rect();

  // Grid lines under the bars, at the axis ticks.
  const double step = tick_step(view.span(), plot.width(), 110);
  p.setPen(QPen(QColor(0xe6, 0xe6, 0xe6), 0));
  for (double t = std::ceil(view.t0() / step) * step; t <= view.t1(); t += step) {
    const double x = std::round(view.x_of(t, plot.left(), plot.width())) + 0.5;
    for (const Band& b : bands_)
      p.drawLine(QPointF(x, b.lanes.top()), QPointF(x, b.lanes.bottom()));
  }
  for (const Band& b : bands_) paint_band(p, b, view);
  paint_axis(p, view);
  paint_legend(p);
  p.restore();
}

void TimelineScene::paint_selection(QPainter& p, const TimeView& view, const Selection& sel) const {
  // An outline that stays visible at any zoom.
  if (sel.trace < 0 || sel.event < 0 || sel.trace >= static_cast<int>(traces_.size())) return;
  const Trace& tr = *traces_[static_cast<std::size_t>(sel.trace)].trace;
  if (sel.event >= static_cast<long>(tr.events.size())) return;
  const Event& e = tr.events[static_cast<std::size_t>(sel.event)];
  const QRectF plot = plot_rect();
  for (const Band& b : bands_) {
    if (b.trace != sel.trace) continue;
    const int lane = tr.lane_of_device(e.device);
    const int g = lane / std::max(1, b.layout.group_size);
    if (lane < 0 || g >= static_cast<int>(b.layout.groups.size())) continue;
    const VisualRow rs = row_span(b.layout.groups[static_cast<std::size_t>(g)], row_of(e.phase));
    double x0 = std::max(plot.left() - 4, view.x_of(e.start, plot.left(), plot.width()));
    double x1 = std::min(plot.right() + 4, view.x_of(e.end(), plot.left(), plot.width()));
    if (x1 < plot.left() - 3 || x0 > plot.right() + 3) continue;
    if (x1 - x0 < 3) x0 -= 1.5, x1 += 1.5;
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setClipRect(b.lanes.adjusted(-2, -2, 2, 2));
    p.setPen(QPen(Qt::black, 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x0, rs.y, x1 - x0, rs.h).adjusted(-1, -1, 1, 1));
    p.restore();
  }
}

namespace {
// `text` on at most two lines of `width`: the first broken at the last space
// that fits, the rest elided at the end of the second.
std::pair<QString, QString> two_lines(const QString& text, const QFontMetricsF& fm, double width) {
  if (fm.horizontalAdvance(text) <= width) return {text, QString()};
  qsizetype cut = text.size();
  while (cut > 0 && fm.horizontalAdvance(text.left(cut)) > width) {
    const auto space = text.lastIndexOf(' ', cut - 1);
    cut = space > 0 ? space : cut - 1;
  }
  return {text.left(cut), fm.elidedText(text.mid(cut).trimmed(), Qt::ElideRight, width)};
}
}  // namespace

void TimelineScene::paint_header(QPainter& p, const Band& band, const TimeView& view) const {
  const LoadedTrace& lt = traces_[static_cast<std::size_t>(band.trace)];
  const QRectF hdr = band.header.adjusted(8, 0, -kRightMargin, 0);
  // Line 1: what the trace is, then the run's headline numbers (its verdict).
  QFont bold = small_font(9.5);
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(QColor(0x20, 0x20, 0x20));
  const QString title = band_title(lt);
  const double title_w =
      std::min(QFontMetricsF(bold).horizontalAdvance(title) + 16, hdr.width() * 0.5);
  const QRectF line1(hdr.left(), hdr.top(), hdr.width(), 18);
  p.drawText(QRectF(line1.left(), line1.top(), title_w, line1.height()),
             Qt::AlignVCenter | Qt::AlignLeft,
             QFontMetricsF(bold).elidedText(title, Qt::ElideMiddle, title_w - 16));
  const QFont normal = small_font(9);
  p.setFont(normal);
  p.setPen(QColor(0x45, 0x45, 0x45));
  const QRectF rest(line1.left() + title_w, line1.top(), line1.width() - title_w, line1.height());
  p.drawText(rest, Qt::AlignVCenter | Qt::AlignLeft,
             QFontMetricsF(normal).elidedText(qs(header_numbers(lt.summary, lt.facts)),
                                              Qt::ElideRight, rest.width()));
  // Lines 2-3: the run's verdict, the whole width, wrapped onto a second
  // line rather than cut (it is the headline's reason).
  const QString verdict = qs(header_verdict(lt.facts));
  const auto [first, second] = two_lines(verdict, QFontMetricsF(normal), hdr.width());
  for (const auto& [text, dy] : {std::pair{first, 17.0}, std::pair{second, 33.0}})
    p.drawText(QRectF(hdr.left(), hdr.top() + dy, hdr.width(), 16),
               Qt::AlignVCenter | Qt::AlignLeft, text);
  // Line 4: the critical device and the faults, named.
  const QString story = qs(header_story(lt.facts, lt.critical.device, lt.critical.device_wait_us));
  if (!story.isEmpty()) {
    p.setPen(lt.facts.faults.empty() ? QColor(0x45, 0x45, 0x45) : QColor(0xb0, 0x1e, 0x2a));
    p.drawText(QRectF(hdr.left(), hdr.top() + 51, hdr.width(), 16),
               Qt::AlignVCenter | Qt::AlignLeft,
               QFontMetricsF(normal).elidedText(story, Qt::ElideRight, hdr.width()));
  }
  // Line 5: forward/backward and layer markers over the plot's x axis.
  const QRectF plot = plot_rect();
  const QRectF strip(plot.left(), hdr.top() + 70, plot.width(), 16);
  const QFont tiny = small_font(7.5);
  p.setFont(tiny);
  p.save();
  p.setClipRect(strip);
  for (const PassSpan& ps : lt.passes) {
    double x0 = 0, x1 = 0;
    if (mode_ == ViewMode::Heatmap) {
      x0 = column_x(band, ps.col0);
      x1 = column_x(band, ps.col1);
    } else {
      x0 = std::max(plot.left() - 2, view.x_of(ps.t0, plot.left(), plot.width()));
      x1 = std::min(plot.right() + 2, view.x_of(ps.t1, plot.left(), plot.width()));
    }
    if (x1 < strip.left() || x0 > strip.right()) continue;
    const bool bwd = ps.pass == PassKind::Bwd;
    const QColor fill = bwd ? QColor(0xfc, 0xe4, 0xcc) : QColor(0xd6, 0xe6, 0xf5);
    p.fillRect(QRectF(x0, strip.top(), std::max(1.0, x1 - x0), strip.height()), fill);
    p.fillRect(QRectF(x0, strip.top(), 1.5, strip.height()),
               bwd ? QColor(0xc0, 0x66, 0x10) : QColor(0x2c, 0x5d, 0x8f));
    QString label = ps.pass == PassKind::Unknown ? QString("steps") : trace::pass_name(ps.pass);
    label = bwd ? "backward" : ps.pass == PassKind::Fwd ? "forward" : label;
    if (ps.layer >= 0) label = QString("layer %1 %2").arg(ps.layer).arg(label);
    p.setPen(QColor(0x30, 0x30, 0x30));
    const QRectF tr(std::max(x0, strip.left()) + 4, strip.top(),
                    x1 - std::max(x0, strip.left()) - 6, strip.height());
    if (tr.width() > 12)
      p.drawText(tr, Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetricsF(tiny).elidedText(label, Qt::ElideRight, tr.width()));
  }
  p.restore();
  p.setPen(QColor(0x70, 0x70, 0x70));
  p.drawText(QRectF(4, strip.top(), kGutter - 14, strip.height()),
             Qt::AlignVCenter | Qt::AlignRight,
             mode_ == ViewMode::Heatmap ? "pass \u00b7 layer" : "pass \u00b7 layer");
}

QString lane_label(const LoadedTrace& t, int lane) {
  const Lane& l = t.trace->lanes[static_cast<std::size_t>(lane)];
  // Job mode: the ring and the rank in it say where a lane sits among the
  // rings; the device number stays in the event text.
  QString label = t.facts.rings > 1 ? QString("ring %1 \u00b7 rank %2")
                                          .arg(ring_of(t.facts, l.device))
                                          .arg(l.device % t.facts.ranks_per_ring)
                                    : qs(l.name);
  if (const Fault* f = straggler_of(t.facts, l.device))
    label = QString("x%1 ").arg(f->factor, 0, 'g', 4) + label;
  return label;
}

namespace {
// "ring 3", or "rings 3\u20134" when a drawn lane groups devices of several rings.
QString group_rings_label(const RunFacts& f, int first_device, int last_device) {
  const int a = ring_of(f, first_device), b = ring_of(f, last_device);
  return a == b ? QString("ring %1").arg(a) : QString("rings %1\u2013%2").arg(a).arg(b);
}
// Per drawn lane, 1 where its ring's label goes: the middle lane of each ring,
// skipping rings whose label would come within 12 px of the previous one.
// Empty outside job mode.
std::vector<std::uint8_t> ring_label_groups(const RunFacts& f, const Trace& tr,
                                            const std::vector<LaneGroup>& groups) {
  std::vector<std::uint8_t> out;
  if (f.rings < 2) return out;
  out.assign(groups.size(), 0);
  auto ring_at = [&](std::size_t g) {
    return ring_of(f, tr.lanes[static_cast<std::size_t>(groups[g].first)].device);
  };
  double last_y = -1e9;
  for (std::size_t a = 0; a < groups.size();) {
    std::size_t b = a;
    while (b < groups.size() && ring_at(b) == ring_at(a)) ++b;
    const std::size_t mid = a + (b - a - 1) / 2;
    if (groups[mid].y - last_y >= 12) {
      out[mid] = 1;
      last_y = groups[mid].y;
    }
    a = b;
  }
  return out;
}
}  // namespace

// Job mode: a blue rule where the next lane belongs to another ring, across
// gutter and plot (the heatmap too, as a gap), so the rings read as groups.
void TimelineScene::paint_ring_rules(QPainter& p, const Band& band) const {
  const LoadedTrace& lt = traces_[static_cast<std::size_t>(band.trace)];
  if (lt.facts.rings < 2) return;
  const QRectF plot = plot_rect();
  const auto& groups = band.layout.groups;
  if (groups.empty()) return;
  // Rings thinner than 12 px would bury the lanes under rules: then a thin
  // rule every `every` rings only, as far apart as the ring labels.
  const double ring_px = (groups.back().y + groups.back().h - groups.front().y) / lt.facts.rings;
  const int every = std::max(1, static_cast<int>(std::ceil(12.0 / std::max(ring_px, 1e-3))));
  p.setPen(QPen(QColor(0x1f, 0x4e, 0x9a), every == 1 ? 2 : 1));
  int last_ring = -1;
  for (const LaneGroup& grp : groups) {
    const int ring = ring_of(lt.facts, lt.trace->lanes[static_cast<std::size_t>(grp.first)].device);
    if (last_ring >= 0 && ring != last_ring && ring % every == 0)
      p.drawLine(QPointF(0, grp.y - 0.5), QPointF(plot.right(), grp.y - 0.5));
    last_ring = ring;
  }
}

void TimelineScene::paint_lane_labels(QPainter& p, const Band& band) const {
  const LoadedTrace& lt = traces_[static_cast<std::size_t>(band.trace)];
  const Trace& tr = *lt.trace;
  const QRectF plot = plot_rect();
  const auto& groups = band.layout.groups;
  if (groups.empty()) return;
  const double label_every = std::max(1.0, std::ceil(12.0 / std::max(1.0, groups.front().h)));
  const QFont label_font = small_font(groups.front().h >= 14 ? 8.5 : 7.5);
  QFont bold_font = label_font;
  bold_font.setBold(true);
  const int crit = lt.critical.device;
  // Rows of special devices (critical, slowed) are always labelled; plain
  // labels too close to one are skipped so the two never overprint.
  std::vector<double> special_y;
  for (const LaneGroup& grp : groups)
    for (int l = grp.first; l < grp.last; ++l) {
      const int d = tr.lanes[static_cast<std::size_t>(l)].device;
      if (d == crit || straggler_of(lt.facts, d)) {
        special_y.push_back(grp.y + grp.h / 2);
        break;
      }
    }
  // Job mode with lanes too thin to label each: one label per ring, at its middle.
  const std::vector<std::uint8_t> ring_labels =
      label_every > 1 ? ring_label_groups(lt.facts, tr, groups) : std::vector<std::uint8_t>{};
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const LaneGroup& grp = groups[g];
    if (g % 2 == 1 && mode_ == ViewMode::Lanes)
      p.fillRect(QRectF(plot.left(), grp.y, plot.width(), grp.h), QColor(0xf4, 0xf5, 0xf7));
    // Which devices of the group are special: critical, slowed, sending off-node.
    bool has_crit = false, has_fault = false, has_inter = false;
    for (int l = grp.first; l < grp.last; ++l) {
      const int d = tr.lanes[static_cast<std::size_t>(l)].device;
      has_crit = has_crit || d == crit;
      has_fault = has_fault || straggler_of(lt.facts, d) != nullptr;
      has_inter = has_inter || lt.internode_sender[static_cast<std::size_t>(l)];
    }
    if (has_fault) p.fillRect(QRectF(0, grp.y, kGutter - 4, grp.h), QColor(0xe1, 0x57, 0x59, 60));
    if (has_crit) p.fillRect(QRectF(0, grp.y, 5, std::max(2.0, grp.h)), QColor(0x11, 0x11, 0x11));
    if (has_inter) {
      // A small magenta arrow at the gutter's edge: this lane's send leaves the node.
      const double cy = grp.y + grp.h / 2, sz = std::min(5.0, std::max(2.0, grp.h / 2));
      QPolygonF tri;
      tri << QPointF(kGutter - 10, cy - sz) << QPointF(kGutter - 10, cy + sz)
          << QPointF(kGutter - 4, cy);
      p.setPen(Qt::NoPen);
      p.setBrush(QColor(0xa0, 0x1c, 0x9c));
      p.drawPolygon(tri);
      p.setBrush(Qt::NoBrush);
    }
    bool labelled =
        ring_labels.empty() ? g % static_cast<std::size_t>(label_every) == 0 : ring_labels[g] != 0;
    for (const double y : special_y)
      if (std::abs(y - (grp.y + grp.h / 2)) < 11) labelled = false;
    if (!labelled && !has_crit && !has_fault) continue;
    const Lane& first = tr.lanes[static_cast<std::size_t>(grp.first)];
    const int last_device = tr.lanes[static_cast<std::size_t>(grp.last - 1)].device;
    QString label =
        grp.size() == 1 && !(labelled && !ring_labels.empty() && !has_crit && !has_fault)
            ? lane_label(lt, grp.first)
        : lt.facts.rings > 1 ? group_rings_label(lt.facts, first.device, last_device)
                             : QString("devices %1\u2013%2").arg(first.device).arg(last_device);
    if (has_crit && grp.size() > 1) label += QString(" (%1 critical)").arg(crit);
    p.setFont(has_crit || has_fault ? bold_font : label_font);
    p.setPen(has_fault ? QColor(0xb0, 0x1e, 0x2a) : QColor(0x30, 0x30, 0x30));
    const double lh = std::max(grp.h, 12.0);
    p.drawText(QRectF(8, grp.y + grp.h / 2 - lh / 2, kGutter - 22, lh),
               Qt::AlignVCenter | Qt::AlignRight,
               QFontMetricsF(label_font).elidedText(label, Qt::ElideLeft, kGutter - 22));
  }
  // Node boundaries: a dark rule where the next lane is on another node, and the node's name.
  if (lt.facts.gpus_per_node <= 0) return;
  // Lanes: a dark rule across gutter and plot. Heatmap: a short tick in the
  // gutter here, and a light gap across the cells (paint_heatmap), so the
  // rules do not hide the cells.
  const bool heat = mode_ == ViewMode::Heatmap;
  int last_node = -1;
  for (const LaneGroup& grp : groups) {
    const int node = node_of(lt.facts, tr.lanes[static_cast<std::size_t>(grp.first)].device);
    if (node == last_node) continue;
    if (last_node >= 0) {
      p.setPen(QPen(QColor(0x50, 0x50, 0x50), 1.2));
      p.drawLine(QPointF(heat ? kGutter - 6 : 0, grp.y - 0.5),
                 QPointF(heat ? kGutter - 1 : plot.right(), grp.y - 0.5));
    }
    last_node = node;
  }
}

double TimelineScene::column_x(const Band& band, double col) const {
  const auto& heat = *traces_[static_cast<std::size_t>(band.trace)].heatmap;
  const double n = std::max<std::size_t>(1, heat.columns.size());
  return band.lanes.left() + col / n * band.lanes.width();
}

bool TimelineScene::heat_cell(QPointF pt, int* trace, int* row, int* col) const {
  if (mode_ != ViewMode::Heatmap) return false;
  for (const Band& b : bands_) {
    if (!b.lanes.contains(pt)) continue;
    const int g = group_at(b.layout, pt.y());
    if (g < 0) return false;
    const auto& heat = *traces_[static_cast<std::size_t>(b.trace)].heatmap;
    if (heat.columns.empty()) return false;
    const double f = (pt.x() - b.lanes.left()) / b.lanes.width();
    *trace = b.trace;
    *row = b.layout.groups[static_cast<std::size_t>(g)].first;
    *col = std::clamp(static_cast<int>(f * static_cast<double>(heat.columns.size())), 0,
                      static_cast<int>(heat.columns.size()) - 1);
    return true;
  }
  return false;
}

namespace {
// White (no wait) through amber to the timeline's wait red, square-root
// scaled so short waits still show.
QColor heat_color(double v, double max) {
  if (!(max > 0) || v <= 0) return QColor(0xfb, 0xfb, 0xfb);
  const double f = std::sqrt(std::clamp(v / max, 0.0, 1.0));
  const QColor lo(0xfd, 0xe8, 0xb0), hi(0xb0, 0x1e, 0x2a);
  return QColor(static_cast<int>(lo.red() + f * (hi.red() - lo.red())),
                static_cast<int>(lo.green() + f * (hi.green() - lo.green())),
                static_cast<int>(lo.blue() + f * (hi.blue() - lo.blue())));
}
}  // namespace

void TimelineScene::paint_heatmap(QPainter& p, const Band& band) const {
  const LoadedTrace& lt = traces_[static_cast<std::size_t>(band.trace)];
  const WaitHeatmap& heat = *lt.heatmap;
  const double scale = std::max(heat.max_us, 0.0);
  const int ncol = static_cast<int>(heat.columns.size());
  for (const LaneGroup& grp : band.layout.groups) {
    for (int c = 0; c < ncol; ++c) {
      double v = 0;  // a grouped row shows its devices' mean
      for (int r = grp.first; r < grp.last; ++r) v += heat.at(r, c);
      v /= std::max(1, grp.size());
      const double x0 = std::floor(column_x(band, c)), x1 = std::floor(column_x(band, c + 1));
      p.fillRect(QRectF(x0, grp.y, std::max(1.0, x1 - x0), grp.h), heat_color(v, scale));
    }
  }
  // Node boundaries: a light gap across the cells.
  if (lt.facts.gpus_per_node > 0) {
    int last_node = -1;
    for (const LaneGroup& grp : band.layout.groups) {
      const int node =
          node_of(lt.facts, lt.trace->lanes[static_cast<std::size_t>(grp.first)].device);
      if (last_node >= 0 && node != last_node)
        p.fillRect(QRectF(band.lanes.left(), grp.y - 0.5, band.lanes.width(), 1),
                   QColor(255, 255, 255, 170));
      last_node = node;
    }
  }
  paint_ring_rules(p, band);  // over the cells: the rings are the job's groups
  // The critical device's row outlined in black, a straggler's in red.
  for (const LaneGroup& grp : band.layout.groups) {
    for (int r = grp.first; r < grp.last; ++r) {
      const int d = lt.trace->lanes[static_cast<std::size_t>(r)].device;
      const bool crit = d == lt.critical.device, slow = straggler_of(lt.facts, d) != nullptr;
      if (!crit && !slow) continue;
      p.setPen(QPen(slow ? QColor(0xb0, 0x1e, 0x2a) : QColor(0x11, 0x11, 0x11), 1.5));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(band.lanes.left() + 0.5, grp.y - 0.5, band.lanes.width() - 1, grp.h + 1));
      break;
    }
  }
  // Pass boundaries as vertical rules, so forward and backward columns read apart.
  p.setPen(QPen(QColor(0x40, 0x40, 0x40), 1));
  for (std::size_t i = 1; i < lt.passes.size(); ++i) {
    const double x = std::round(column_x(band, lt.passes[i].col0)) + 0.5;
    p.drawLine(QPointF(x, band.lanes.top()), QPointF(x, band.lanes.bottom()));
  }
}

void TimelineScene::paint_markers(QPainter& p, const Band& band, const TimeView& view) const {
  // Sends that leave the node, and sends over a degraded link: outlined, so
  // the hop that paces the ring stands out even when the bars are binned.
  const LoadedTrace& lt = traces_[static_cast<std::size_t>(band.trace)];
  const Trace& tr = *lt.trace;
  const QRectF plot = plot_rect();
  const double t0 = view.t0(), t1 = view.t1();
  const int columns = std::max(1, static_cast<int>(plot.width()));
  for (const LaneGroup& grp : band.layout.groups) {
    if (grp.size() != 1) continue;
    const Lane& lane = tr.lanes[static_cast<std::size_t>(grp.first)];
    const RowIndex& idx = lane.rows[static_cast<int>(Row::Send)];
    const auto [a, b] = idx.overlapping(tr.events, t0, t1);
    if (b - a > static_cast<std::size_t>(columns)) continue;  // too dense to outline
    const VisualRow rs = row_span(grp, Row::Send);
    for (std::size_t k = a; k < b; ++k) {
      const Event& e = tr.events[idx.events[k]];
      if (e.phase != Phase::Send) continue;
      const bool degraded = degraded_link(lt.facts, e.device, e.peer) != nullptr;
      const bool inter = crosses_node(lt.facts, e.device, e.peer);
      if (!degraded && !inter) continue;
      const double x0 = std::max(plot.left() - 4, view.x_of(e.start, plot.left(), plot.width()));
      const double x1 = std::min(plot.right() + 4, view.x_of(e.end(), plot.left(), plot.width()));
      p.setPen(QPen(degraded ? QColor(0xb0, 0x1e, 0x2a) : QColor(0xa0, 0x1c, 0x9c),
                    degraded ? 2.0 : 1.2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(x0, rs.y, std::max(1.0, x1 - x0), std::max(1.0, rs.h - 1)));
    }
  }
}

void TimelineScene::paint_critical_path(QPainter& p, const Band& band, const TimeView& view) const {
  const LoadedTrace& lt = traces_[static_cast<std::size_t>(band.trace)];
  const Trace& tr = *lt.trace;
  if (lt.critical.events.empty()) return;
  const QRectF plot = plot_rect();
  const int gs = std::max(1, band.layout.group_size);
  const int first_lane = band.layout.groups.empty() ? 0 : band.layout.groups.front().first;
  auto y_of = [&](const Event& e, double* y) {
    const int lane = tr.lane_of_device(e.device);
    const int g = (lane - first_lane) / gs;
    if (lane < first_lane || g < 0 || g >= static_cast<int>(band.layout.groups.size()))
      return false;
    const VisualRow rs = row_span(band.layout.groups[static_cast<std::size_t>(g)], row_of(e.phase));
    // Along the top edge of the bars, so the path never hides what it runs through.
    *y = rs.y + std::min(1.5, rs.h / 2);
    return true;
  };
  auto x_of = [&](double t) {
    return std::clamp(view.x_of(t, plot.left(), plot.width()), plot.left() - 50, plot.right() + 50);
  };
  p.save();
  p.setClipRect(band.lanes);
  p.setRenderHint(QPainter::Antialiasing, true);
  QPainterPath path;
  bool started = false;
  double exit_t = -1e300;
  for (const std::uint32_t i : lt.critical.events) {
    const Event& e = tr.events[i];
    double y = 0;
    if (!y_of(e, &y)) {
      started = false;
      continue;
    }
    const double entry = std::max(e.start, std::min(exit_t, e.end()));
    if (!started) {
      path.moveTo(x_of(entry), y);
      started = true;
    } else {
      path.lineTo(x_of(entry), y);
    }
    path.lineTo(x_of(e.end()), y);
    exit_t = e.end();
  }
  p.setPen(QPen(QColor(255, 255, 255, 200), 3.5, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  p.drawPath(path);
  p.setPen(QPen(QColor(0x11, 0x11, 0x11), 2.0, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  p.drawPath(path);
  p.restore();
}

void TimelineScene::paint_range(QPainter& p, const TimeView& view, double t0, double t1,
                                const QString& text) const {
  if (bands_.empty()) return;
  const QRectF plot = plot_rect();
  const double x0 =
      std::clamp(view.x_of(std::min(t0, t1), plot.left(), plot.width()), plot.left(), plot.right());
  const double x1 =
      std::clamp(view.x_of(std::max(t0, t1), plot.left(), plot.width()), plot.left(), plot.right());
  p.save();
  p.fillRect(QRectF(x0, plot.top(), std::max(1.0, x1 - x0), plot.height()),
             QColor(0x30, 0x60, 0xc0, 40));
  p.setPen(QPen(QColor(0x30, 0x60, 0xc0), 1));
  p.drawLine(QPointF(x0, plot.top()), QPointF(x0, plot.bottom()));
  p.drawLine(QPointF(x1, plot.top()), QPointF(x1, plot.bottom()));
  if (!text.isEmpty()) {
    const QFont f = small_font(8.5);
    p.setFont(f);
    const QRectF want =
        QFontMetricsF(f).boundingRect(QRectF(0, 0, 420, 400), Qt::TextWordWrap, text);
    QRectF box(std::min(x1 + 6, plot.right() - want.width() - 10), plot.top() + 4,
               want.width() + 10, want.height() + 8);
    p.fillRect(box, QColor(255, 255, 255, 235));
    p.setPen(QColor(0x30, 0x60, 0xc0));
    p.drawRect(box);
    p.setPen(QColor(0x20, 0x20, 0x20));
    p.drawText(box.adjusted(5, 4, -5, -4), Qt::TextWordWrap, text);
  }
  p.restore();
}

QString range_text(const RangeStats& s) {
  const double all = s.device_us();
  auto pct = [&](double v) { return all > 0 ? QString::number(100 * v / all, 'f', 1) + "%" : "-"; };
  QString out = QString("%1 .. %2 (%3), %4 devices\n")
                    .arg(qs(format_us(s.t0)), qs(format_us(s.t1)), qs(format_us(s.t1 - s.t0)))
                    .arg(s.devices);
  out += QString("compute %1 \u00b7 wait %2 \u00b7 comm only %3 \u00b7 idle %4")
             .arg(pct(s.compute_us), pct(s.wait_us), pct(s.comm_us), pct(s.idle_us));
  for (int ph = 0; ph < kPhaseCount; ++ph) {
    const double v = s.phase_us[static_cast<std::size_t>(ph)];
    if (v <= 0) continue;
    out += QString("\n  %1: %2 device-time, %3 per device")
               .arg(phase_label(static_cast<Phase>(ph)), qs(format_us(v)),
                    qs(format_us(v / std::max(1, s.devices))));
  }
  return out;
}

void TimelineScene::paint_band(QPainter& p, const Band& band, const TimeView& view) const {
  const LoadedTrace& lt = traces_[static_cast<std::size_t>(band.trace)];
  const Trace& tr = *lt.trace;
  const QRectF plot = plot_rect();
  paint_header(p, band, view);
  paint_lane_labels(p, band);
  paint_ring_rules(p, band);  // over the node rules: a ring's end is often a node's
  if (mode_ == ViewMode::Heatmap) {
    p.save();
    p.setClipRect(band.lanes);
    paint_heatmap(p, band);
    p.restore();
    p.setPen(QPen(QColor(0xc8, 0xc8, 0xc8), 0));
    p.setBrush(Qt::NoBrush);
    p.drawRect(band.lanes.adjusted(-0.5, -0.5, 0.5, 0.5));
    return;
  }

  const int columns = std::max(1, static_cast<int>(std::floor(plot.width())));
  const double t0 = view.t0(), t1 = view.t1();
  const double col_us = view.span() / columns;
  const auto& groups = band.layout.groups;

  p.save();
  p.setClipRect(band.lanes);
  for (const LaneGroup& grp : groups) {
    VisualRow strips[3];
    const int nstrips = visual_rows(grp, strips);
    for (int si = 0; si < nstrips; ++si) {
      const VisualRow& rs = strips[si];
      if (rs.h <= 0) continue;
      const bool detail = grp.size() == 1 && visible_count(tr, grp.first, rs.rows, t0, t1) <=
                                                 static_cast<std::size_t>(columns / 3);
      if (detail) {
        const Lane& lane = tr.lanes[static_cast<std::size_t>(grp.first)];
        for (int r = 0; r < kRowCount; ++r) {
          if (!(rs.rows & (1u << r))) continue;
          const RowIndex& idx = lane.rows[static_cast<std::size_t>(r)];
          const auto [a, b] = idx.overlapping(tr.events, t0, t1);
          for (std::size_t k = a; k < b; ++k) {
            const Event& e = tr.events[idx.events[k]];
            // Clamped: at deep zoom a bar's far end can be 1e12 pixels away.
            const double x0 =
                std::max(plot.left() - 4, view.x_of(e.start, plot.left(), plot.width()));
            const double x1 =
                std::min(plot.right() + 4, view.x_of(e.end(), plot.left(), plot.width()));
            p.fillRect(QRectF(x0, rs.y, std::max(1.0, x1 - x0), rs.h), phase_color(e.phase));
            // A light edge where a bar starts keeps back-to-back bars of one phase apart.
            if (x1 - x0 >= 5) p.fillRect(QRectF(x0, rs.y, 1, rs.h), QColor(255, 255, 255, 170));
          }
        }
      } else {
        for (const ColumnRun& run :
             binner_.runs(tr, grp.first, grp.last, rs.rows, t0, t1, columns)) {
          QColor c = phase_color(run.phase);
          c.setAlpha(static_cast<int>(255 * (0.3 + 0.7 * run.level / double(kDensityLevels))));
          p.fillRect(QRectF(plot.left() + run.x0, rs.y, run.x1 - run.x0, rs.h), c);
        }
      }
    }
    // Step starts, where they are far enough apart to read.
    if (grp.size() != 1) continue;
    const auto& starts = tr.lanes[static_cast<std::size_t>(grp.first)].step_starts;
    const auto lo = std::lower_bound(starts.begin(), starts.end(), t0);
    const auto hi = std::upper_bound(lo, starts.end(), t1);
    const double visible = static_cast<double>(hi - lo);
    if (visible == 0 || plot.width() / visible < 6 || col_us <= 0) continue;
    const VisualRow bottom = row_span(grp, Row::Recv);
    p.setPen(QPen(QColor(0x20, 0x20, 0x20, 170), 0));
    for (auto it = lo; it != hi; ++it) {
      const double x = std::round(view.x_of(*it, plot.left(), plot.width())) + 0.5;
      p.drawLine(QPointF(x, grp.y), QPointF(x, bottom.y + bottom.h - 1));
    }
  }
  paint_markers(p, band, view);
  if (show_path_) paint_critical_path(p, band, view);
  p.restore();
  // Frame the band so its extent is clear even where it is empty.
  p.setPen(QPen(QColor(0xc8, 0xc8, 0xc8), 0));
  p.setBrush(Qt::NoBrush);
  p.drawRect(band.lanes.adjusted(-0.5, -0.5, 0.5, 0.5));
}

void TimelineScene::paint_axis(QPainter& p, const TimeView& view) const {
  const QRectF plot = plot_rect();
  const double y = plot.bottom() + 2;
  p.setPen(QPen(QColor(0x40, 0x40, 0x40), 0));
  p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
  const QFont f = small_font(8.5);
  p.setFont(f);
  if (mode_ == ViewMode::Heatmap && !bands_.empty()) {
    // Ring steps, not time: one column per (layer, pass, step) of the first band.
    const Band& b = bands_.front();
    const auto& cols = traces_[static_cast<std::size_t>(b.trace)].heatmap->columns;
    const double per = plot.width() / std::max<std::size_t>(1, cols.size());
    const auto every =
        static_cast<std::size_t>(std::max(1.0, std::ceil(48.0 / std::max(per, 1e-3))));
    std::size_t nice = 1;  // 1, 2, 5, 10, 20, 50 ... columns between labels
    for (std::size_t m = 1; nice < every; m *= 10)
      for (const std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{5}})
        if (nice < every) nice = k * m;
    // Labelled by the step's own number, so each pass reads 0, 5, 10 ... from
    // its start (the column index would number the backward pass on from the
    // forward's end); a label too close to the last one is left out.
    double last_x = -1e9;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].step < 0 || cols[c].step % static_cast<std::int32_t>(nice) != 0) continue;
      const double x = std::round(column_x(b, static_cast<double>(c) + 0.5)) + 0.5;
      if (x - last_x < 24) continue;
      last_x = x;
      p.drawLine(QPointF(x, y), QPointF(x, y + 5));
      const QString label = QString::number(cols[c].step);
      p.drawText(QRectF(x - 30, y + 5, 60, kAxis - 6), Qt::AlignHCenter | Qt::AlignTop, label);
    }
    p.drawText(QRectF(4, y + 5, kGutter - 14, kAxis - 6), Qt::AlignRight | Qt::AlignTop,
               "ring step");
    return;
  }
  const double step = tick_step(view.span(), plot.width(), 110);
  for (double t = std::ceil(view.t0() / step) * step; t <= view.t1(); t += step) {
    const double x = std::round(view.x_of(t, plot.left(), plot.width())) + 0.5;
    p.drawLine(QPointF(x, y), QPointF(x, y + 5));
    // Snap values like 2.9999999 to the tick they stand for.
    const double shown = std::abs(t) < step * 1e-6 ? 0.0 : t;
    const QString label = qs(format_us(shown));
    // Centred on the tick, but kept inside the plot so it never meets the gutter.
    const double w = QFontMetricsF(f).horizontalAdvance(label) + 4;
    const double left = std::clamp(x - w / 2, plot.left(), std::max(plot.left(), plot.right() - w));
    p.drawText(QRectF(left, y + 5, w, kAxis - 6), Qt::AlignHCenter | Qt::AlignTop, label);
  }
  p.drawText(QRectF(4, y + 5, kGutter - 14, kAxis - 6), Qt::AlignRight | Qt::AlignTop, "time");
}

// The heat-map's colour bar: the scale continuous (colour by the square root
// of wait / max, as the cells), ticks at a quarter, half and three quarters of
// its length with the wait each colour stands for. Returns its right edge.
double TimelineScene::paint_colour_bar(QPainter& p, double x, double y, double max_us) const {
  constexpr double kW = 280, kSlices = 140;
  for (int i = 0; i < kSlices; ++i) {
    const double f = (i + 0.5) / kSlices;
    p.fillRect(QRectF(x + i * kW / kSlices, y + 1, kW / kSlices + 0.5, 8),
               heat_color(f * f * max_us, max_us));
  }
  const QFont tiny = small_font(7);
  p.setFont(tiny);
  p.setPen(QColor(0x30, 0x30, 0x30));
  for (const double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const double tx = x + f * kW;
    p.drawLine(QPointF(tx, y + 9), QPointF(tx, y + 12));
    const QString label = f == 0 ? QString("0") : qs(format_us(f * f * max_us));
    const double w = QFontMetricsF(tiny).horizontalAdvance(label) + 2;
    const double left = f == 0 ? tx : (f == 1 ? tx - w : tx - w / 2);
    p.drawText(QRectF(left, y + 12, w, 10), Qt::AlignHCenter | Qt::AlignTop, label);
  }
  p.setFont(small_font(8.5));
  return x + kW;
}

void TimelineScene::paint_legend(QPainter& p) const {
  const QRectF plot = plot_rect();
  const double y = plot.bottom() + kAxis + 4;
  const QFont f = small_font(8.5);
  p.setFont(f);
  const QFontMetricsF fm(f);
  double x = plot.left();
  auto item = [&](const QString& label, const QColor& c, bool line) {
    if (line) {
      p.setPen(QPen(QColor(0x20, 0x20, 0x20), 0));
      p.drawLine(QPointF(x + 5.5, y + 2), QPointF(x + 5.5, y + 14));
    } else {
      p.fillRect(QRectF(x, y + 3, 12, 10), c);
    }
    p.setPen(QColor(0x30, 0x30, 0x30));
    p.drawText(QPointF(x + 16, y + 12), label);
    x += 16 + fm.horizontalAdvance(label) + 14;
  };
  if (mode_ == ViewMode::Heatmap) {
    double max_us = 0;
    for (const auto& t : traces_) max_us = std::max(max_us, t.heatmap->max_us);
    p.setPen(QColor(0x30, 0x30, 0x30));
    p.drawText(QPointF(x, y + 12), "wait per device and step:");
    x += fm.horizontalAdvance("wait per device and step:") + 8;
    x = paint_colour_bar(p, x, y, max_us) + 14;
    item("critical device", QColor(0x11, 0x11, 0x11), false);
    item("sends off-node", QColor(0xa0, 0x1c, 0x9c), false);
    p.setPen(QColor(0x70, 0x70, 0x70));
    p.drawText(QRectF(x, y, std::max(0.0, plot.right() - x), 16), Qt::AlignRight | Qt::AlignVCenter,
               "click a cell: its lanes at that step · H: heatmap / lanes");
    return;
  }
  // Only the phases on screen, in a fixed order.
  for (int ph = 0; ph < kPhaseCount; ++ph)
    if (present_[static_cast<std::size_t>(ph)])
      item(phase_label(static_cast<Phase>(ph)), phase_color(static_cast<Phase>(ph)), false);
  item("step start", {}, true);
  item("critical path", QColor(0x11, 0x11, 0x11), false);
  // The outline drawn round a send whose hop leaves the
  // node (slower link, so a longer bar), only when a band has one.
  const bool off_node = std::any_of(traces_.begin(), traces_.end(), [](const LoadedTrace& t) {
    return std::any_of(t.internode_sender.begin(), t.internode_sender.end(),
                       [](std::uint8_t c) { return c != 0; });
  });
  if (off_node) {
    p.setPen(QPen(QColor(0xa0, 0x1c, 0x9c), 1.2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x + 0.5, y + 3.5, 11, 9));
    const QString label = "send leaves the node";
    p.setPen(QColor(0x30, 0x30, 0x30));
    p.drawText(QPointF(x + 16, y + 12), label);
    x += 16 + fm.horizontalAdvance(label) + 14;
  }
  p.setPen(QColor(0x70, 0x70, 0x70));
  p.drawText(QRectF(x, y, std::max(0.0, plot.right() - x), 16), Qt::AlignRight | Qt::AlignVCenter,
             QString::fromUtf8("rows per lane: compute \u00b7 send \u00b7 recv/wait"));
}

}  // namespace ringsim::gui
