#pragma once
// The closed forms' own size guard for inference: they evaluate every CP
// rank at every ring step of a layer ([rank][step] times, O(cp^2) memory and
// work), so a request beyond what they can hold is refused before anything
// is allocated, with one line, instead of growing until the machine kills
// the process (1M GPUs at TP 8 asked for 131072^2 pairs: 128 GiB).
#include <cstdint>

#include "models/infer/infer.hpp"

namespace ringsim {

// Tokens per CP rank the closed forms list (int64): 2^26, 512 MiB a list.
inline constexpr std::int64_t kMaxTokensPerRank = std::int64_t{1} << 26;

// A chunked-attention model's (Llama 4's) context: its chunked layers are
// timed through every rank's token lists, kept once per layer kind
// (models/core/infer_work.cpp, DocumentTokens: 16 B a token), so at most
// 2^25 tokens of context (over 3x Llama 4 Scout's advertised 10M; 512 MiB
// of lists).
inline constexpr std::int64_t kMaxChunkedContext = std::int64_t{1} << 25;
void check_chunked_context(const InferRequest& r);

// At most kMaxTokensPerRank tokens per CP rank (InputError naming --context),
// check_chunked_context, and at most 1024 CP ranks (2^20 rank-steps, 8 MiB per layer variant; the
// automatic searches stop there too, kMaxAutoCp; InputError naming --cp).
void check_closed_form_size(const InferRequest& r);
// The first check alone (the search skips a split it refuses; a --cp beyond
// 1024 the user gave is refused by name instead).
void check_tokens_per_rank(const InferRequest& r);

}  // namespace ringsim
