#pragma once
// The visible time range of the timeline and the zoom/pan rules. Pure data, so
// tests check zoom and pan without a window.
namespace ringsim::gui {

class TimeView {
 public:
  // Narrowest view: 1 ns. Widest: 4x the trace, so zooming out stays bounded.
  static constexpr double kMinSpanUs = 1e-3;
  static constexpr double kMaxSpanFactor = 4.0;

  double t0() const { return t0_; }
  double t1() const { return t1_; }
  double span() const { return t1_ - t0_; }

  // The extent [begin, end] of what is shown (in us); zoom and pan stay around it.
  void set_extent(double begin, double end);
  double extent_begin() const { return begin_; }
  double extent_end() const { return end_; }

  void fit();  // the whole extent plus a small margin
  // factor > 1 zooms in. The time at `anchor` stays at the same place on screen.
  void zoom(double factor, double anchor);
  void zoom_center(double factor) { zoom(factor, (t0_ + t1_) / 2); }
  void pan(double dt);  // dt > 0 moves the view right (later times)
  void set_range(double t0, double t1);

  // Pixel mapping for a plot `width` pixels wide starting at x = `left`.
  double x_of(double t, double left, double width) const {
    return left + (t - t0_) / span() * width;
  }
  double t_of(double x, double left, double width) const {
    return t0_ + (x - left) / width * span();
  }

 private:
  void clamp();
  double begin_ = 0, end_ = 1;
  double t0_ = 0, t1_ = 1;
};

}  // namespace ringsim::gui
