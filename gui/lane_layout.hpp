#pragma once
// Vertical placement of device lanes inside a band of the timeline. When the
// lanes would be thinner than a few pixels, consecutive devices are grouped
// into one lane, so thousands of devices still draw as O(height) rows. Lanes
// sit on whole pixels, and thin lanes merge their rows, so nothing is drawn in
// slivers narrower than a pixel.
#include <cstdint>
#include <vector>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

// A set of Rows, bit r for Row r.
using RowMask = std::uint8_t;
constexpr RowMask mask_of(Row r) {
  return static_cast<RowMask>(1u << static_cast<int>(r));
}
inline constexpr RowMask kAllRows = 0b111;

struct LaneGroup {
  int first = 0, last = 0;  // lanes [first, last)
  double y = 0, h = 0;      // whole pixels
  int size() const { return last - first; }
};

struct BandLayout {
  int group_size = 1;  // devices per drawn lane; 1 = one lane per device
  std::vector<LaneGroup> groups;
};

// A horizontal strip of a lane and the rows drawn in it.
struct VisualRow {
  double y = 0, h = 0;
  RowMask rows = 0;
};

// `lanes` lanes in [y, y + h); each drawn lane is at least `min_lane_px` tall.
BandLayout layout_lanes(int lanes, double y, double h, double min_lane_px);

// The strips of a lane: three (compute, send, recv/wait) when it is at least
// kThreeRowPx tall, two (compute, link) from kTwoRowPx, else one for all.
inline constexpr double kThreeRowPx = 12, kTwoRowPx = 5;
int visual_rows(const LaneGroup& g, VisualRow out[3]);
VisualRow row_span(const LaneGroup& g, Row r);             // the strip that shows row r
int group_at(const BandLayout& band, double y);            // -1 if y is outside every lane
bool row_at(const LaneGroup& g, double y, RowMask* rows);  // false in the gap

}  // namespace ringsim::gui
