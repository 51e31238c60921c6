#include "trace/phase.hpp"

#include <array>

namespace ringsim::trace {

namespace {

struct Info {
  const char* name;
  const char* label;
  Category category;
  std::uint32_t rgb;
};

// Indexed by Phase. The collectives are shades of one purple (one kind of
// exposed communication); other tools' kernels get muted versions of the
// compute and comm hues.
constexpr std::array<Info, kPhaseCount> kInfo{{
    {"partial", "partial", Category::Compute, 0x4e79a7},
    {"merge", "merge", Category::Compute, 0x76b7b2},
    {"send", "send", Category::Comm, 0xf28e2b},
    {"recv", "recv", Category::Comm, 0x59a14f},
    {"wait", "wait", Category::Comm, 0xe15759},
    {"alltoall", "alltoall", Category::Comm, 0xb07aa1},
    {"allgather", "allgather", Category::Comm, 0x8f5c85},
    {"reducescatter", "reducescatter", Category::Comm, 0xd4a6c8},
    {"dense", "dense", Category::Compute, 0x5f6f86},
    {"launch", "launch", Category::Compute, 0xbab0ac},
    {"accumulate", "accumulate", Category::Compute, 0x499894},
    {"reduce", "reduce", Category::Compute, 0xb6992d},  // olive: apart from merge's teal
    {"idle", "idle", Category::Idle, 0xc9c3bf},
    {"", "other compute", Category::Compute, 0x5f6f86},
    {"", "other comm", Category::Comm, 0xedc948},
    {"", "other", Category::None, 0x9c755f},
}};

const Info& info(Phase p) {
  return kInfo[static_cast<std::size_t>(p)];
}

}  // namespace

const char* phase_name(Phase p) {
  return info(p).name;
}
const char* phase_label(Phase p) {
  return info(p).label;
}
Category phase_category(Phase p) {
  return info(p).category;
}
std::uint32_t phase_rgb(Phase p) {
  return info(p).rgb;
}

const char* category_name(Category c) {
  switch (c) {
    case Category::Compute:
      return "compute";
    case Category::Comm:
      return "comm";
    case Category::Idle:
      return "idle";
    case Category::None:
      break;
  }
  return "";
}

Phase phase_from_name(const std::string& name, const std::string& category) {
  for (int i = 0; i < kPhaseCount; ++i) {
    const auto p = static_cast<Phase>(i);
    if (*phase_name(p) && name == phase_name(p)) return p;
  }
  if (category == "compute") return Phase::OtherCompute;
  if (category == "comm") return Phase::OtherComm;
  return Phase::Other;
}

}  // namespace ringsim::trace
