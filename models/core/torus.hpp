#pragma once
// The torus a TPU slice (or any torus2d/torus3d platform) forms, as plain
// geometry both engines use: its dimensions, the snake that embeds the ring
// in it (reflected mixed-radix order, so consecutive devices are
// neighbours), and how many links the ring's closing hop (last device back
// to the first) crosses, with or without wrap-around links. Cloud TPU
// documentation (TPU v4 and v5p system architecture): slices whose every
// dimension is a multiple of 4 (full cubes) have wrap-around links; smaller
// slices are meshes, whose opposite faces are not joined.
#include <cstdint>
#include <vector>

namespace ringsim {

// Dimensions for n chips: as close to a square (cube) as the divisors allow,
// with an even dimension last when there is one, so the snake closes next to
// its start.
std::vector<int> auto_torus_dims(std::int64_t n, int rank);

// Coordinates of ring position p on the snake through `dims`.
std::vector<int> snake_coords(const std::vector<int>& dims, std::int64_t p);

// Links the closing hop (position n-1 to 0) crosses under dimension-order
// routing: per dimension the shorter way round with wrap-around, the only
// way without. At least 1.
int closing_hops(const std::vector<int>& dims, bool wraparound);

}  // namespace ringsim
