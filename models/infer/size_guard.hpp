#pragma once
// The closed forms' own size guard for inference: they evaluate every CP
// rank at every ring step of a layer ([rank][step] times, O(cp^2) memory and
// work), so a request beyond what they can hold is refused before anything
// is allocated, with one line, instead of growing until the machine kills
// the process (1M GPUs at TP 8 asked for 131072^2 pairs: 128 GiB).
#include "models/infer/infer.hpp"

namespace ringsim {

// At most 1024 CP ranks (2^20 rank-steps, 8 MiB per layer variant; the
// automatic searches stop there too, kMaxAutoCp). Throws InputError naming --cp.
void check_closed_form_size(const InferRequest& r);

}  // namespace ringsim
