#pragma once
// Packed sequences: many documents in one sequence, attention causal within
// each document and empty across (the document mask Llama 3 trained with).
//
// The document lengths come from --documents (a list, a file, or a seeded
// distribution, parse_documents) and fill the sequence in order, the last
// document cut to fit (pack_documents). Layouts place them two ways (Pack):
//   sequence  the layout splits the packed sequence as it splits one document
//             (models/core/tokens.hpp), blind to the boundaries;
//   document  the layout splits every document: zigzag (allgather's queries,
//             hybrid's ring of groups) cuts each into 2 x CP chunks and gives
//             rank i chunks i and 2CP-1-i, as TransformerEngine's THD format
//             does for context parallelism; ring cuts each into CP contiguous
//             chunks; striped stripes each from rank 0.
// A document's length rarely divides evenly: its remainder tokens (L mod the
// chunk count) go one each to the ranks in turn, continuing where the last
// document's stopped, so every rank holds exactly its block (TransformerEngine
// pads each document to a multiple of 2 x CP instead, which changes the
// sequence; this keeps sequence and document modes on the same tokens).
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/length_histograms.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

// What --documents says, parsed; lengths are drawn by pack_documents.
struct DocumentSpec {
  enum class Kind { Lengths, Fixed, Uniform, Lognormal, Dataset };
  Kind kind = Kind::Lengths;
  std::vector<std::int64_t> lengths;  // Lengths: repeated in order until the sequence is full
  std::int64_t lo = 0, hi = 0;        // Fixed: lo; Uniform: lo..hi, inclusive
  double mean = 0, sigma = 0;         // Lognormal: mean length in tokens, sigma of log length
  const LengthHistogram* histogram = nullptr;  // Dataset: one of length_histograms()
  std::string text;                            // as given
  bool random() const {
    return kind == Kind::Uniform || kind == Kind::Lognormal || kind == Kind::Dataset;
  }
};

// The one refusal of --documents with --no-causal (run, plan, infer).
inline constexpr const char* kDocumentsNotCausal =
    "--documents: the document mask is causal within each document; drop --no-causal";

// Most documents one packed sequence may hold.
inline constexpr std::int64_t kMaxDocuments = std::int64_t{1} << 20;

// "8K,2K,512" (K/M/G binary), a file with one length per line ('#' starts a
// comment), a .npy file of cu_seqlens (int32 or int64 [0, l1, l1+l2, ...], as
// flash_attn_varlen_func takes them; the lengths are the differences),
// "fixed:L", "uniform:A..B", "lognormal:MEAN,SIGMA" or "dataset:NAME" (a
// published length histogram, models/core/length_histograms.hpp). Throws
// InputError naming `flag`.
DocumentSpec parse_documents(const std::string& flag, const std::string& text);

// Whether --documents `text` names a file of lengths or cu_seqlens rather than
// a list or a distribution: an existing regular file, whatever characters its
// name holds (':' and ',' included). parse_documents reads it so; a sweep's
// journal hashes it.
bool names_documents_file(const std::string& text);

// The lengths of the documents packed into `seq` tokens, in order, summing to
// seq (the last one cut to fit). `seed` draws the random kinds; the draw is
// this file's own (splitmix64, Box-Muller; a dataset's bin, then a length
// uniform within it), so it is the same on every platform.
// Throws InputError naming `flag` when more than kMaxDocuments would be packed.
std::vector<std::int64_t> pack_documents(const std::string& flag, const DocumentSpec& spec,
                                         std::int64_t seq, std::uint64_t seed);

// Start positions of the documents (the first is 0); empty for no documents.
std::vector<std::int64_t> document_starts(const std::vector<std::int64_t>& lengths);

// Index of the document holding position `pos` (0 without documents).
std::int64_t document_of(const std::vector<std::int64_t>& starts, std::int64_t pos);

// Tokens (ascending positions) that ring position i of n holds, c tokens each,
// under `layout` and `pack` (document mode needs `lengths`; with none it is
// sequence mode). Layouts without ring positions of their own use zigzag's.
std::vector<std::int64_t> packed_tokens(Layout layout, Pack pack,
                                        const std::vector<std::int64_t>& lengths, std::int64_t n,
                                        std::int64_t c, std::int64_t i);

// The tokens of w's ring position `pos`: a device for ring, striped, zigzag
// and allgather (its queries), a group of w.ulysses() devices for hybrid
// (block ulysses x block), every token for ulysses.
std::vector<std::int64_t> workload_tokens(const Workload& w, std::int64_t pos);

// (query, key) pairs that the document mask keeps between ascending query
// positions q and key positions k: key <= query, in the same document.
std::uint64_t masked_pairs(const std::vector<std::int64_t>& q, const std::vector<std::int64_t>& k,
                           const std::vector<std::int64_t>& starts);

// The query and key tokens a device pairs at one ring step, and the query
// heads its kernel covers (ulysses: every token, H/N heads; allgather: its
// queries against every key; hybrid: its group's, H/U heads).
struct StepTokens {
  std::vector<std::int64_t> q, k;
  std::uint64_t heads = 0;
};
StepTokens step_tokens(const Workload& w, std::int64_t device, std::int64_t step);

// The same as the ring positions whose tokens (workload_tokens) the step
// pairs, kEveryToken for the whole sequence (allgather's keys), so a caller
// asking about many steps can build each position's tokens once.
inline constexpr std::int64_t kEveryToken = -1;
struct StepSources {
  std::int64_t q = 0, k = 0;
  std::uint64_t heads = 0;
};
StepSources step_sources(const Workload& w, std::int64_t device, std::int64_t step);
// workload_tokens(w, source), or every token for kEveryToken.
std::vector<std::int64_t> source_tokens(const Workload& w, std::int64_t source);

// The calls a varlen kernel (flash_attn_varlen_func; ring-flash-attention's
// varlen functions) makes for queries q and keys k under the document mask:
// per document, its rows of q against its keys of k; inside one document a
// row sees a prefix of the keys, so the rows split into runs that each see the
// same keys (a full call) or one more key per row (a causal call, bottom-right
// shifted). Sum of call_pairs == masked_pairs x heads.
struct KernelCall;
std::vector<KernelCall> document_calls(const std::vector<std::int64_t>& q,
                                       const std::vector<std::int64_t>& k,
                                       const std::vector<std::int64_t>& starts,
                                       std::uint64_t heads);
// The same calls built one query row at a time, O(|q| + |k|): the definition
// that document_calls is held to in tests. document_calls walks stretches of
// consecutive query positions inside one document in a few pieces each (a
// doubling search for the stretch's end and its keys), so a layout with long
// contiguous chunks (ring, zigzag, allgather, hybrid, ulysses) costs about
// its chunks and documents, not its tokens; striped costs one row at a time.
std::vector<KernelCall> document_calls_by_row(const std::vector<std::int64_t>& q,
                                              const std::vector<std::int64_t>& k,
                                              const std::vector<std::int64_t>& starts,
                                              std::uint64_t heads);

// Pairs a kernel computes that walks the step's whole score block (the
// device's queries x the block's keys, in position order) in tiles of
// tile_q x tile_k and skips only tiles with no visible pair: a tile that a
// document boundary (or the diagonal) cuts is charged whole. Heads included.
std::uint64_t step_tile_entries(const Workload& w, std::int64_t device, std::int64_t step,
                                std::int64_t tile_q, std::int64_t tile_k);

// Why the busiest device of ring step `step` is slow, in words for the
// verdict: its share of the step's pairs and the documents they come from
// (the three largest shares, with their lengths), and what would spread them.
std::string documents_imbalance(const Workload& w, std::int64_t step);

// The closed forms' size guard for packed documents: they evaluate every
// device at every ring step (no device stands for another), so a step costs
// about a microsecond: at most kMaxDocumentDeviceSteps (2048 devices of a
// ring). Striped rows and --pack document slivers are walked token by token
// (about 30-40 ns a token here): at most kMaxDocumentTokenSteps device-steps
// x block (512 devices of 512 tokens). Contiguous chunks (ring, zigzag,
// allgather, hybrid with --pack sequence) cost their documents, but still
// list each device's token positions at every step (0.2 ns a token at 4K
// tokens, 1 ns at 256K, whose lists are fresh pages each time): at most
// kMaxDocumentListSteps device-steps x block (2048 devices of 4K tokens,
// 3 s here; 256 devices of 256K, 20 s).
// Throws InputError naming the flags, before anything is allocated.
inline constexpr std::int64_t kMaxDocumentDeviceSteps = std::int64_t{1} << 22;
inline constexpr std::int64_t kMaxDocumentTokenSteps = std::int64_t{1} << 27;
inline constexpr std::int64_t kMaxDocumentListSteps = std::int64_t{1} << 35;
void check_documents_size(const Workload& w);

// Throws InputError when w's documents do not fit it: lengths >= 1 summing to
// seq_len(), and a causal mask (the document mask is causal within documents).
void check_documents(const Workload& w);

}  // namespace ringsim
