#include "models/infer/size_guard.hpp"

#include <fmt/format.h>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/plan/basics.hpp"

namespace ringsim {

void check_closed_form_size(const InferRequest& r) {
  if (r.cp <= kMaxAutoCp) return;
  const double pairs = static_cast<double>(r.cp) * static_cast<double>(r.cp);
  throw InputError(fmt::format(
      "--cp: {} CP ranks are beyond the closed forms' size guard: they evaluate every rank at "
      "every ring step ({:.3g} pairs, {} per layer), at most {} CP ranks; give --cp {} or less "
      "(without --cp it is --gpus / --tp)",
      r.cp, pairs, human_bytes(pairs * sizeof(double)), kMaxAutoCp, kMaxAutoCp));
}

}  // namespace ringsim
