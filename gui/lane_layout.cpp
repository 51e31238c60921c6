#include "gui/lane_layout.hpp"

#include <algorithm>
#include <cmath>

namespace ringsim::gui {

BandLayout layout_lanes(int lanes, double y, double h, double min_lane_px) {
  BandLayout band;
  if (lanes <= 0 || !(h > 0)) return band;
  min_lane_px = std::max(1.0, min_lane_px);
  if (h / lanes < min_lane_px)
    band.group_size = static_cast<int>(std::ceil(lanes * min_lane_px / h));
  const int groups = (lanes + band.group_size - 1) / band.group_size;
  const double gh = h / groups;
  const double top = std::round(y);
  band.groups.reserve(static_cast<std::size_t>(groups));
  for (int g = 0; g < groups; ++g) {
    LaneGroup lg;
    lg.first = g * band.group_size;
    lg.last = std::min(lanes, lg.first + band.group_size);
    // Whole-pixel edges: heights differ by at most one pixel, none is blurred.
    lg.y = top + std::floor(g * gh);
    lg.h = top + std::floor((g + 1) * gh) - lg.y;
    band.groups.push_back(lg);
  }
  return band;
}

int visual_rows(const LaneGroup& g, VisualRow out[3]) {
  if (g.h >= kThreeRowPx) {
    // A gap below keeps lanes apart, and one between compute and the link rows.
    const double gap = std::max(1.0, std::floor(g.h * 0.18));
    const double split = g.h >= 14 ? 1.0 : 0.0;
    const double inner = g.h - gap - split;
    const double ch = std::round(inner * 0.5), sh = std::floor((inner - ch) / 2);
    out[0] = {g.y, ch, mask_of(Row::Compute)};
    out[1] = {g.y + ch + split, sh, mask_of(Row::Send)};
    out[2] = {g.y + ch + split + sh, inner - ch - sh, mask_of(Row::Recv)};
    return 3;
  }
  if (g.h >= kTwoRowPx) {
    const double gap = g.h >= 7 ? 1.0 : 0.0;
    const double ch = std::ceil((g.h - gap) * 0.55);
    out[0] = {g.y, ch, mask_of(Row::Compute)};
    out[1] = {g.y + ch, g.h - gap - ch,
              static_cast<RowMask>(mask_of(Row::Send) | mask_of(Row::Recv))};
    return 2;
  }
  out[0] = {g.y, g.h, kAllRows};
  return 1;
}

VisualRow row_span(const LaneGroup& g, Row r) {
  VisualRow rows[3];
  const int n = visual_rows(g, rows);
  for (int i = 0; i < n; ++i)
    if (rows[i].rows & mask_of(r)) return rows[i];
  return rows[0];
}

int group_at(const BandLayout& band, double y) {
  if (band.groups.empty() || y < band.groups.front().y) return -1;
  // Groups are sorted and contiguous: the last one starting at or above y.
  const auto it = std::upper_bound(band.groups.begin(), band.groups.end(), y,
                                   [](double v, const LaneGroup& g) { return v < g.y; });
  const auto g = static_cast<int>(it - band.groups.begin()) - 1;
  const LaneGroup& lg = band.groups[static_cast<std::size_t>(g)];
  return y < lg.y + lg.h ? g : -1;
}

bool row_at(const LaneGroup& g, double y, RowMask* rows) {
  VisualRow vr[3];
  const int n = visual_rows(g, vr);
  for (int i = 0; i < n; ++i) {
    if (y >= vr[i].y && y < vr[i].y + vr[i].h) {
      *rows = vr[i].rows;
      return true;
    }
  }
  return false;
}

}  // namespace ringsim::gui
