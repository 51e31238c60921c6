#include "models/infer/size_guard.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/plan/basics.hpp"

namespace ringsim {

void check_tokens_per_rank(const InferRequest& r) {
  // Each rank's tokens are listed (int64, a few lists at once): 2^26 tokens
  // per rank is 512 MiB a list, beyond any context a GPU holds.
  const std::int64_t per_rank = r.context / std::max<std::int64_t>(r.cp, 1);
  if (per_rank > kMaxTokensPerRank)
    throw InputError(fmt::format(
        "--context: {} tokens on each of {} CP rank{} are beyond the closed forms' size guard: "
        "they list each rank's tokens ({} a list), at most {} per rank; give more CP ranks "
        "(--gpus or --cp) or a shorter context",
        per_rank, r.cp, r.cp == 1 ? "" : "s",
        human_bytes(static_cast<double>(per_rank) * sizeof(std::int64_t)), kMaxTokensPerRank));
}

void check_chunked_context(const InferRequest& r) {
  if (chunked_attention_layers(r.shape) == 0) return;
  if (r.context <= kMaxChunkedContext) return;
  const std::int64_t tokens = r.context + 1;  // the decode step's token too
  throw InputError(fmt::format(
      "--context: {} tokens of {} are beyond the closed forms' size guard for chunked attention: "
      "its chunked layers keep every rank's token lists ({} in all), at most {} tokens; give a "
      "shorter context",
      r.context, r.shape.name,
      human_bytes(2.0 * static_cast<double>(tokens) * sizeof(std::int64_t)), kMaxChunkedContext));
}

void check_closed_form_size(const InferRequest& r) {
  check_chunked_context(r);
  check_tokens_per_rank(r);
  if (r.cp <= kMaxAutoCp) return;
  const double pairs = static_cast<double>(r.cp) * static_cast<double>(r.cp);
  throw InputError(fmt::format(
      "--cp: {} CP ranks are beyond the closed forms' size guard: they evaluate every rank at "
      "every ring step ({:.3g} pairs, {} per layer), at most {} CP ranks; give --cp {} or less "
      "(without --cp it is --gpus / --tp)",
      r.cp, pairs, human_bytes(pairs * sizeof(double)), kMaxAutoCp, kMaxAutoCp));
}

}  // namespace ringsim
