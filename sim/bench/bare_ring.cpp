// The barest SimGrid program that does a ring's work: one actor per device,
// each step an async put to the next device, an async get from the previous
// and a blocking execute, on a stock star zone whose only links are each
// device's outgoing ring link. The baseline `ringsim-bench-sim` compares the
// ringsim simulator against (docs/sim.md, "Speed").
//
// usage: ringsim-bare-ring N FULL_S DIAG_S BYTES BW LAT
//   causal ring: device i at step s works on block j = (i - s) mod N and
//   computes FULL_S seconds if j < i, DIAG_S if j == i, nothing if j > i.
#include <xbt/log.h>

#include <cstdio>
#include <cstdlib>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

long g_n = 0;
double g_full = 0, g_diag = 0, g_bytes = 0;
int g_token = 0;

void device(long i) {
  auto* out = sg4::Mailbox::by_name(std::to_string((i + 1) % g_n));
  auto* in = sg4::Mailbox::by_name(std::to_string(i));
  for (long s = 0; s < g_n; ++s) {
    sg4::CommPtr send, recv;
    int* got = nullptr;
    if (s + 1 < g_n) {
      send = out->put_async(&g_token, static_cast<uint64_t>(g_bytes));
      recv = in->get_async<int>(&got);
    }
    const long j = ((i - s) % g_n + g_n) % g_n;
    const double t = j < i ? g_full : (j == i ? g_diag : 0.0);
    if (t > 0) sg4::this_actor::execute(t * 1e12);
    if (recv) {
      recv->wait();
      send->wait();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--version" || std::string(argv[1]) == "-V")) {
    std::printf("ringsim-bare-ring %s\n", RINGSIM_VERSION);
    return 0;
  }
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s N FULL_S DIAG_S BYTES BW LAT\n", argv[0]);
    return 2;
  }
  sg4::Engine e(&argc, argv);
  xbt_log_control_set("root.thres:critical");
  g_n = std::atol(argv[1]);
  g_full = std::atof(argv[2]);
  g_diag = std::atof(argv[3]);
  g_bytes = std::atof(argv[4]);
  const double bw = std::atof(argv[5]), lat = std::atof(argv[6]);
  e.set_config("network/model:CM02");
  e.set_config("network/crosstraffic:0");
  e.set_config("network/TCP-gamma:0");
  e.set_config("contexts/stack-size:256");
  auto* zone = sg4::create_star_zone("ring");
  std::vector<sg4::Host*> hosts;
  for (long i = 0; i < g_n; ++i) {
    const auto id = std::to_string(i);
    auto* h = zone->create_host(id, 1e12);
    auto* l = zone->create_link(id, bw)->set_latency(lat)->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(l)}, false);
    zone->add_route(nullptr, h->get_netpoint(), nullptr, nullptr, {}, false);
    hosts.push_back(h);
  }
  zone->seal();
  for (long i = 0; i < g_n; ++i) sg4::Actor::create("a", hosts[i], device, i);
  e.run();
  std::printf("%.17g\n", sg4::Engine::get_clock());
  return 0;
}
