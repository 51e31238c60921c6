#include "gui/wait_heatmap.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace ringsim::gui {

int WaitHeatmap::column_of(std::int32_t layer, PassKind pass, std::int32_t step) const {
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c].layer == layer && columns[c].pass == pass && columns[c].step == step)
      return static_cast<int>(c);
  return -1;
}

WaitHeatmap bin_waits(const Trace& trace) {
  WaitHeatmap h;
  h.rows = static_cast<int>(trace.lanes.size());
  // Every (layer, pass, step) with any event is a column, waits or not, so a
  // step without stalls shows as an empty column rather than vanishing.
  using Key = std::tuple<std::int32_t, int, std::int32_t>;
  std::map<Key, HeatColumn> spans;
  for (const Event& e : trace.events) {
    if (e.step < 0) continue;
    auto [it, fresh] = spans.try_emplace(Key{e.layer, static_cast<int>(e.pass), e.step});
    HeatColumn& c = it->second;
    if (fresh) {
      c.layer = e.layer;
      c.pass = e.pass;
      c.step = e.step;
      c.t0 = e.start;
      c.t1 = e.end();
    } else {
      c.t0 = std::min(c.t0, e.start);
      c.t1 = std::max(c.t1, e.end());
    }
  }
  for (const auto& [key, c] : spans) h.columns.push_back(c);
  // The run's order: layer 0 forward before its backward, and so on; each
  // (layer, pass) whole, its steps in order. Sorting steps by their own start
  // interleaves passes where one device's backward begins before another's
  // last forward step (a causal ring), and the axis then read 0..62, 0..2, 63.
  std::map<std::pair<std::int32_t, int>, double> pass_t0;
  for (const auto& c : h.columns) {
    auto [it, fresh] = pass_t0.try_emplace({c.layer, static_cast<int>(c.pass)}, c.t0);
    if (!fresh) it->second = std::min(it->second, c.t0);
  }
  auto order = [&](const HeatColumn& c) {
    return std::make_tuple(pass_t0.at({c.layer, static_cast<int>(c.pass)}), c.layer,
                           static_cast<int>(c.pass), c.step);
  };
  std::stable_sort(h.columns.begin(), h.columns.end(),
                   [&](const HeatColumn& a, const HeatColumn& b) { return order(a) < order(b); });
  std::map<Key, int> index;
  for (std::size_t c = 0; c < h.columns.size(); ++c)
    index[Key{h.columns[c].layer, static_cast<int>(h.columns[c].pass), h.columns[c].step}] =
        static_cast<int>(c);

  const std::size_t ncol = h.columns.size();
  h.wait_us.assign(static_cast<std::size_t>(h.rows) * ncol, 0.0);
  h.row_total_us.assign(static_cast<std::size_t>(h.rows), 0.0);
  for (const Event& e : trace.events) {
    if (e.phase != Phase::Wait || e.step < 0) continue;
    const int row = trace.lane_of_device(e.device);
    if (row < 0) continue;
    const int col = index[Key{e.layer, static_cast<int>(e.pass), e.step}];
    h.wait_us[static_cast<std::size_t>(row) * ncol + static_cast<std::size_t>(col)] += e.dur;
    h.row_total_us[static_cast<std::size_t>(row)] += e.dur;
  }
  for (const double v : h.wait_us) h.max_us = std::max(h.max_us, v);
  return h;
}

}  // namespace ringsim::gui
