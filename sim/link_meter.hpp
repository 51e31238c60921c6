#pragma once
// Job mode's view of the fabric: how busy each link direction was. Every
// transfer's bytes are spread evenly over the time it moved data (its start
// plus its route's latency, to its end) into bins of fixed width; a bin's
// utilisation is its bytes over what the link carries in a bin. The peak is
// the busiest bin (at most 1: transfers that shared a link at uneven rates
// can overfill a bin, and such a link was full), the mean the link's bytes
// over what it could carry in the whole run. No SimGrid here: times and bytes are handed over as
// numbers.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/topology.hpp"

namespace ringsim::sim {

struct LinkLoad {
  std::string name;  // "nic7 up" (the direction the name reads) or "nic7 down"
  double peak = 0, mean = 0;
  double bytes = 0;
};

class LinkMeter {
 public:
  // `bandwidth`: per link, per direction, as simulated (after --degrade);
  // `bin_s`: the bin width in seconds (> 0).
  LinkMeter(std::vector<double> bandwidth, double bin_s);

  // A transfer of `bytes` over `hops`, moving data from t0 to t1 (seconds).
  void add(const std::vector<Hop>& hops, double bytes, double t0, double t1);
  // The `k` busiest link directions (busier(), ties in link order),
  // their mean over `span` seconds; `links` names them.
  std::vector<LinkLoad> hottest(std::size_t k, double span,
                                const std::vector<TopoLink>& links) const;
  // The peak of one link direction (0 if it carried nothing), and its mean
  // over `span` seconds.
  double peak(std::int32_t link, bool up) const;
  double mean(std::int32_t link, bool up, double span) const;
  // Busier: a higher peak (peaks within 1e-6 are equal: rounding of the
  // bins), then a higher mean (a link full for the whole run paces it more
  // than one full for a moment).
  static bool busier(double peak_a, double mean_a, double peak_b, double mean_b);

 private:
  std::vector<double> bw_;
  double bin_;
  // Per link direction (2 x link + (up ? 0 : 1)): bytes per bin, grown on use.
  std::vector<std::vector<double>> bins_;
  std::vector<double> bytes_;
};

}  // namespace ringsim::sim
