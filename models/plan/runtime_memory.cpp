#include "models/plan/runtime_memory.hpp"

namespace ringsim {

int communicators(std::int64_t shard_group, std::int64_t tp, std::int64_t cp, std::int64_t pp) {
  return (shard_group > 1) + (tp > 1) + (cp > 1) + (pp > 1);
}

}  // namespace ringsim
