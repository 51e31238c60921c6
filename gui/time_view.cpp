#include "gui/time_view.hpp"

#include <algorithm>
#include <cmath>

namespace ringsim::gui {

void TimeView::set_extent(double begin, double end) {
  if (!std::isfinite(begin) || !std::isfinite(end)) begin = 0, end = 1;
  if (end - begin < kMinSpanUs) end = begin + kMinSpanUs;
  begin_ = begin;
  end_ = end;
  clamp();
}

void TimeView::fit() {
  // 1% margin each side so the first and last bars do not touch the frame.
  const double margin = (end_ - begin_) * 0.01;
  t0_ = begin_ - margin;
  t1_ = end_ + margin;
  clamp();
}

void TimeView::zoom(double factor, double anchor) {
  if (!(factor > 0) || !std::isfinite(factor) || !std::isfinite(anchor)) return;
  const double new_span = span() / factor;
  const double max_span = (end_ - begin_) * kMaxSpanFactor;
  const double s = std::clamp(new_span, kMinSpanUs, std::max(kMinSpanUs, max_span));
  // Keep anchor at the same fraction of the view.
  const double frac = span() > 0 ? (anchor - t0_) / span() : 0.5;
  t0_ = anchor - frac * s;
  t1_ = t0_ + s;
  clamp();
}

void TimeView::pan(double dt) {
  if (!std::isfinite(dt)) return;
  t0_ += dt;
  t1_ += dt;
  clamp();
}

void TimeView::set_range(double t0, double t1) {
  if (!std::isfinite(t0) || !std::isfinite(t1) || t1 <= t0) return;
  t0_ = t0;
  t1_ = t1;
  clamp();
}

void TimeView::clamp() {
  const double max_span = std::max(kMinSpanUs, (end_ - begin_) * kMaxSpanFactor);
  double s = std::clamp(span(), kMinSpanUs, max_span);
  if (!std::isfinite(s)) s = max_span;
  // At least half the view stays on the trace, so it cannot be panned away.
  const double lo = begin_ - s / 2, hi = end_ - s / 2;
  t0_ = std::clamp(t0_, lo, std::max(lo, hi));
  t1_ = t0_ + s;
}

}  // namespace ringsim::gui
