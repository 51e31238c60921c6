// `ringsim verify`: ring attention computes exactly full attention. Runs the
// ring emulator (N virtual devices, real blockwise kernels) on random or given
// tensors and compares O, LSE (and dQ, dK, dV) with the float64 reference.
// With no arguments it is the classic four-device demo. `--mode prefill` and
// `--mode decode` check long-context inference instead (kernels/inference.hpp):
// new tokens after a KV cache, pass-kv or pass-q prefill, or decode.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.hpp"
#include "cli/stop_scope.hpp"
#include "kernels/inference.hpp"
#include "kernels/inputs.hpp"
#include "kernels/verify.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/infer_work.hpp"
#include "models/core/npy.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "models/core/work.hpp"

namespace ringsim::cli {
namespace {

struct VerifyFlags {
  std::string devices = "4", block = "8", heads = "1", kv_heads, head_dim = "16";
  std::string layout = "ring", pass = "fwd", seed = "0", ulysses_degree, dtype = "fp32";
  std::string tolerance_factor = "1";
  std::string documents, pack = "sequence";
  std::string max_input = "1G";  // bytes of each input as float64, checked before it is read
  bool causal = true, json = false;
  std::string q, k, v, out, lse_out;
  // Inference (--mode prefill|decode).
  std::string mode = "train", variant = "pass-kv", cached = "0", decode_tokens = "1";
  bool block_given = false, heads_given = false, kv_heads_given = false, head_dim_given = false;
  bool dtype_given = false, pass_given = false, variant_given = false, cached_given = false;
  bool decode_tokens_given = false;
};

// The float64 reference materialises S x S scores per head: keep it to about
// a gigabyte and tens of seconds.
constexpr double kMaxRefPairs = 1u << 27;   // S^2
constexpr double kMaxRefWork = 1ull << 34;  // S^2 * heads * head_dim

const char* dtype_name(NpyDType t) {
  return t == NpyDType::F16 ? "float16" : t == NpyDType::F32 ? "float32" : "float64";
}

struct Problem {
  Workload w;
  kernels::AttnInputs in;
  NpyDType storage = NpyDType::F32;
  std::string source;  // where the tensors came from
};

bool given_files(const VerifyFlags& f) {
  return !f.q.empty() || !f.k.empty() || !f.v.empty();
}

struct Tensors {
  NpyArray q, k, v;
};

// Reads --q/--k/--v, each judged by its header against --max-input before its
// data is read or allocated, and checks what every mode needs of them: all
// three, one dtype, K and V of one shape.
Tensors read_tensors(const VerifyFlags& f) {
  if (f.q.empty() || f.k.empty() || f.v.empty())
    throw InputError("--q/--k/--v: give all three .npy files (or none for random inputs)");
  if (f.dtype_given)
    throw InputError("--dtype: applies to random inputs; the .npy files carry their own dtype");
  const auto budget =
      static_cast<std::uint64_t>(parse_count("--max-input", f.max_input, 1, std::int64_t{1} << 40));
  auto load = [budget](const std::string& path, const char* flag) {
    return read_npy(path, std::string(flag) + " " + path, 3, budget, "--max-input");
  };
  Tensors t{load(f.q, "--q"), load(f.k, "--k"), load(f.v, "--v")};
  if (t.k.dtype != t.q.dtype || t.v.dtype != t.q.dtype)
    throw InputError(fmt::format("--k/--v: dtypes {}/{} differ from --q's {}; save all three alike",
                                 dtype_name(t.k.dtype), dtype_name(t.v.dtype),
                                 dtype_name(t.q.dtype)));
  if (t.k.shape != t.v.shape)
    throw InputError(fmt::format("--v {}: shape ({}, {}, {}) differs from --k's ({}, {}, {})", f.v,
                                 t.v.shape[0], t.v.shape[1], t.v.shape[2], t.k.shape[0],
                                 t.k.shape[1], t.k.shape[2]));
  return t;
}

// The heads and head dimension the files share (after their token counts).
void check_heads(const VerifyFlags& f, const Tensors& t) {
  const auto H = t.q.shape[1], D = t.q.shape[2];
  if (t.k.shape[2] != D)
    throw InputError(
        fmt::format("--k {}: head_dim {} differs from --q's {}", f.k, t.k.shape[2], D));
  if (H % t.k.shape[1] != 0)
    throw InputError(fmt::format("--k {}: its {} KV heads must divide --q's {} heads (GQA)", f.k,
                                 t.k.shape[1], H));
  if (H > 4096 || D > 4096)
    throw InputError(fmt::format("--q {}: at most 4096 heads and head_dim 4096", f.q));
}

// Shape flags given beside files must agree with them.
void check_shape_flags(const VerifyFlags& f, const Tensors& t) {
  auto check_flag = [](bool given, const char* flag, const std::string& text, std::int64_t actual) {
    if (given && parse_count(flag, text, 1, 1 << 20) != actual)
      throw InputError(fmt::format("{}: the .npy files have {}, not {}", flag, actual, text));
  };
  check_flag(f.heads_given, "--heads", f.heads, t.q.shape[1]);
  check_flag(f.kv_heads_given, "--kv-heads", f.kv_heads, t.k.shape[1]);
  check_flag(f.head_dim_given, "--head-dim", f.head_dim, t.q.shape[2]);
}

// The shape and storage type of random inputs.
void random_shape(const VerifyFlags& f, int& heads, int& kv_heads, int& head_dim,
                  NpyDType& storage) {
  heads = static_cast<int>(parse_count("--heads", f.heads, 1, 256));
  kv_heads =
      f.kv_heads.empty() ? heads : static_cast<int>(parse_count("--kv-heads", f.kv_heads, 1, 256));
  head_dim = static_cast<int>(parse_count("--head-dim", f.head_dim, 1, 1024));
  const auto dt = parse_choice("--dtype", f.dtype, {"fp16", "fp32", "fp64"});
  storage = dt == "fp16" ? NpyDType::F16 : dt == "fp32" ? NpyDType::F32 : NpyDType::F64;
}

Problem load_problem(const VerifyFlags& f, Pass pass) {
  Problem p;
  auto& w = p.w;
  w.layout = parse_layout("--layout", f.layout);
  w.causal = f.causal;
  w.pass = pass;
  // N^2 device-steps run one after another: 1024 devices is about a million kernel calls.
  w.devices = parse_count("--devices", f.devices, 1, 1024);
  const bool files = given_files(f);
  if (files) {
    auto t = read_tensors(f);
    const auto S = t.q.shape[0], H = t.q.shape[1], D = t.q.shape[2];
    if (t.k.shape[0] != S)
      throw InputError(fmt::format(
          "--k {}: {} tokens, --q has {}; ring attention here is self-attention over one sequence",
          f.k, t.k.shape[0], S));
    check_heads(f, t);
    if (S % w.devices != 0)
      throw InputError(fmt::format(
          "--devices: the sequence of {} tokens in --q {} is not divisible by {} devices", S, f.q,
          w.devices));
    w.block = S / w.devices;
    if (f.block_given && parse_count("--block", f.block, 1, 1 << 30) != w.block)
      throw InputError(
          fmt::format("--block: the inputs give {} tokens / {} devices = {} per device, not {}", S,
                      w.devices, w.block, f.block));
    check_shape_flags(f, t);
    w.shape.heads = static_cast<int>(H);
    w.shape.kv_heads = static_cast<int>(t.k.shape[1]);
    w.shape.head_dim = static_cast<int>(D);
    p.storage = t.q.dtype;
    p.in.q = std::move(t.q.data);
    p.in.k = std::move(t.k.data);
    p.in.v = std::move(t.v.data);
    p.source = fmt::format("{}, {}, {} ({})", f.q, f.k, f.v, dtype_name(p.storage));
  } else {
    w.block = parse_count("--block", f.block, 1, 1 << 20);
    random_shape(f, w.shape.heads, w.shape.kv_heads, w.shape.head_dim, p.storage);
  }
  w.shape.name = "custom";
  w.shape.d_model = w.shape.heads * w.shape.head_dim;
  if (w.layout == Layout::Hybrid) {
    w.ulysses_degree =
        f.ulysses_degree.empty()
            ? auto_ulysses_degree(w.devices, w.shape.kv_heads, static_cast<int>(w.devices))
            : static_cast<int>(parse_count("--ulysses-degree", f.ulysses_degree, 1, 4096));
  } else if (!f.ulysses_degree.empty()) {
    throw InputError("--ulysses-degree: only applies to --layout hybrid");
  }
  const auto seed = static_cast<std::uint64_t>(parse_count("--seed", f.seed, 0, INT64_MAX));
  w.pack = parse_pack("--pack", f.pack);
  if (!f.documents.empty())
    w.documents = pack_documents("--documents", parse_documents("--documents", f.documents),
                                 w.devices * w.block, seed);
  kernels::check_emulation(w);
  const double S = static_cast<double>(w.devices * w.block);
  if (S * S > kMaxRefPairs || S * S * w.shape.heads * w.shape.head_dim > kMaxRefWork)
    throw InputError(fmt::format(
        "--devices/--block: {} tokens x {} heads x head_dim {} is too large to check against the "
        "float64 reference, which stores S x S scores (at most {} tokens and S^2 x heads x "
        "head_dim <= 2^34)",
        w.devices * w.block, w.shape.heads, w.shape.head_dim,
        static_cast<int>(std::sqrt(kMaxRefPairs))));

  auto rnd = kernels::random_inputs(w, seed, p.storage);
  if (files) {
    p.in.d_o = std::move(rnd.d_o);  // dO stays random: the check holds for any upstream gradient
  } else {
    p.in = std::move(rnd);
    p.source = fmt::format("random normal, seed {}, {}", seed, dtype_name(p.storage));
  }
  return p;
}

// "Documents: 4 (8, 24, 3, 29), split per document": at most the first 16 lengths.
std::string documents_line(const std::vector<std::int64_t>& d, const std::string& how) {
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < std::min<std::size_t>(d.size(), 16); ++i)
    shown.push_back(std::to_string(d[i]));
  if (d.size() > 16) shown.push_back("...");
  return fmt::format("Documents: {} ({}), {}\n", d.size(), join(shown, ", "), how);
}

std::string documents_line(const Workload& w) {
  return documents_line(w.documents, w.pack == Pack::Document
                                         ? "split per document (--pack document)"
                                         : "the layout splits the packed sequence");
}

std::string yes(bool b) {
  return b ? "True" : "False";
}

// O and LSE as .npy, in the working precision's storage type (float32 unless
// the inputs were float64); both files or neither (models/core/atomic_file.hpp).
void write_outputs(const VerifyFlags& f, std::int64_t tokens, int heads, int head_dim, bool fp64,
                   const std::vector<double>& o, const std::vector<double>& lse) {
  const NpyDType out_type = fp64 ? NpyDType::F64 : NpyDType::F32;
  std::optional<AtomicFile> o_file, lse_file;
  std::vector<AtomicFile*> files;
  if (!f.out.empty()) {
    o_file.emplace(f.out, "--out");
    o_file->write(encode_npy({tokens, heads, head_dim}, out_type, o));
    files.push_back(&*o_file);
  }
  if (!f.lse_out.empty()) {
    lse_file.emplace(f.lse_out, "--lse-out");
    lse_file->write(encode_npy({tokens, heads}, out_type, lse));
    files.push_back(&*lse_file);
  }
  commit_all(files);
}

// The error table and the tolerance line, shared by training and inference.
void print_errors(const std::vector<kernels::ErrorStat>& errors, const kernels::ToleranceModel& tol,
                  double factor, bool fp64) {
  std::cout << fmt::format("  {:<4} {:>13} {:>13} {:>13}\n", "", "max abs err", "max rel err",
                           "tolerance");
  for (const auto& e : errors)
    std::cout << fmt::format("  {:<4} {:>13.3e} {:>13.3e} {:>13.3e}{}\n", e.tensor, e.max_abs,
                             e.max_rel, e.tolerance,
                             !e.reason.empty() ? "  NOT JUDGED: " + e.reason
                             : !e.ok           ? "  EXCEEDED"
                             : !e.note.empty() ? "  (" + e.note + ")"
                                               : "");
  std::cout << fmt::format(
      "Tolerance: tau = {}16 u (sqrt(d)(1 + Smax) + sqrt(S)) = {:.3e} (u = 2^{}, Smax = {:.3g}); "
      "O: tau max|V|, LSE: tau, grads: tau max|ref|\n",
      factor == 1 ? "" : fmt::format("{:g} x ", factor), tol.tau() * factor, fp64 ? -53 : -24,
      tol.score_bound);
}

int run_train(const VerifyFlags& f) {
  check_outputs({{"--out", f.out}, {"--lse-out", f.lse_out}},
                {{"--q", f.q}, {"--k", f.k}, {"--v", f.v}, {"--documents", f.documents}});
  const Pass pass = parse_pass("--pass", f.pass);
  auto p = load_problem(f, pass);
  const auto& w = p.w;
  const bool fp64 = p.storage == NpyDType::F64;
  const bool backward = pass != Pass::Fwd;
  const double factor = parse_real("--tolerance-factor", f.tolerance_factor, 1e-12, 1e12);
  const auto rep = kernels::verify_run(w, p.in, fp64, backward, {}, factor);
  const auto S = w.devices * w.block;
  write_outputs(f, S, w.shape.heads, w.shape.head_dim, fp64, rep.result.o, rep.result.lse);

  std::uint64_t entries = 0;
  for (const auto& dev : rep.result.fwd.steps)
    for (const auto& st : dev) entries += st.entries;
  const bool ok = rep.passed();
  const std::string layout =
      w.layout == Layout::Hybrid
          ? fmt::format("hybrid (ulysses {} x ring {})", w.ulysses(), w.ring_degree())
          : to_string(w.layout);
  if (f.json) {
    nlohmann::json j{{"command", "verify"},
                     {"mode", "train"},
                     {"layout", to_string(w.layout)},
                     {"devices", w.devices},
                     {"block", w.block},
                     {"seq", S},
                     {"heads", w.shape.heads},
                     {"kv_heads", w.shape.kv_heads},
                     {"head_dim", w.shape.head_dim},
                     {"causal", w.causal},
                     {"pass", to_string(pass)},
                     {"ulysses_degree", w.ulysses()},
                     {"ring_degree", w.ring_degree()},
                     {"documents", w.documents},
                     {"pack", to_string(w.pack)},
                     {"compute", fp64 ? "fp64" : "fp32"},
                     {"inputs", p.source},
                     {"largest_score_block", {rep.result.max_q_rows, rep.result.max_k_cols}},
                     {"full_matrix", {S, S}},
                     {"tolerance_tau", rep.tolerance.tau() * factor},
                     {"score_bound", rep.tolerance.score_bound},
                     {"errors", kernels::to_json(rep.errors)},
                     {"work",
                      {{"steps", num_steps(w)},
                       {"score_entries_fwd", entries},
                       {"ring_elements_per_step", ring_elements_per_step(w, backward)},
                       {"matches_model", rep.work_mismatch.empty()},
                       {"mismatch", rep.work_mismatch}}},
                     {"matches", ok}};
    j["schema_version"] = kJsonSchemaVersion;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format(
        "Layout {} on {} virtual devices, block {} (sequence {}), {} head{} ({} KV), head dim {}, "
        "{}, pass {}, {} compute\n",
        layout, w.devices, w.block, S, w.shape.heads, w.shape.heads == 1 ? "" : "s",
        w.shape.kv_heads, w.shape.head_dim, w.causal ? "causal" : "non-causal", to_string(pass),
        fp64 ? "fp64" : "fp32");
    std::cout << fmt::format("Inputs: {}\n", p.source);
    if (!w.documents.empty()) std::cout << documents_line(w);
    std::cout << fmt::format("Largest score block per device: {}x{}, full matrix: {}x{}\n",
                             rep.result.max_q_rows, rep.result.max_k_cols, S, S);
    print_errors(rep.errors, rep.tolerance, factor, fp64);
    std::cout << fmt::format("Work counts equal the analytic model (models/core/work.hpp): {}{}\n",
                             yes(rep.work_mismatch.empty()),
                             rep.work_mismatch.empty() ? "" : " (" + rep.work_mismatch + ")");
    std::cout << fmt::format("Matches full attention: {}\n", yes(ok));
  }
  return ok ? 0 : 1;
}

// ---- Inference: --mode prefill|decode (kernels/inference.hpp) ----

struct InferProblem {
  InferWork w;
  kernels::InferInputs in;
  NpyDType storage = NpyDType::F32;
  std::string source;
};

// The new tokens and the cache from --q (new tokens) and --k/--v (cache, then
// new tokens); the flags given beside them must agree.
void infer_from_files(const VerifyFlags& f, InferProblem& p) {
  auto& w = p.w;
  auto t = read_tensors(f);
  const auto fresh = t.q.shape[0], context = t.k.shape[0];
  if (context < fresh)
    throw InputError(fmt::format(
        "--k {}: {} tokens, fewer than the {} new tokens of --q {}; K/V hold the cached tokens, "
        "then the new ones",
        f.k, context, fresh, f.q));
  check_heads(f, t);
  if (f.cached_given && parse_count("--cached", f.cached, 0, 1 << 30) != context - fresh)
    throw InputError(
        fmt::format("--cached: the .npy files hold {} cached tokens (--k's {} minus --q's {}), "
                    "not {}",
                    context - fresh, context, fresh, f.cached));
  w.cached = context - fresh;
  w.fresh = fresh;
  if (w.mode == InferMode::Prefill) {
    const auto unit = w.layout == Layout::Zigzag ? 2 * w.ranks : w.ranks;
    if (fresh % unit != 0)
      throw InputError(fmt::format(
          "--devices: the {} new tokens in --q {} do not divide evenly over {} devices{}", fresh,
          f.q, w.ranks, w.layout == Layout::Zigzag ? " in two chunks each (zigzag)" : ""));
    if (f.block_given && parse_count("--block", f.block, 1, 1 << 30) != fresh / w.ranks)
      throw InputError(
          fmt::format("--block: the inputs give {} new tokens / {} devices = {} per device, not {}",
                      fresh, w.ranks, fresh / w.ranks, f.block));
  } else if (f.decode_tokens_given &&
             parse_count("--decode-tokens", f.decode_tokens, 1, 1 << 20) != fresh) {
    throw InputError(
        fmt::format("--decode-tokens: the .npy files have {}, not {}", fresh, f.decode_tokens));
  }
  check_shape_flags(f, t);
  w.heads = static_cast<int>(t.q.shape[1]);
  w.kv_heads = static_cast<int>(t.k.shape[1]);
  w.head_dim = static_cast<int>(t.q.shape[2]);
  p.storage = t.q.dtype;
  p.in.q = std::move(t.q.data);
  p.in.k = std::move(t.k.data);
  p.in.v = std::move(t.v.data);
  p.source = fmt::format("{}, {}, {} ({})", f.q, f.k, f.v, dtype_name(p.storage));
}

InferProblem load_infer_problem(const VerifyFlags& f, InferMode mode) {
  InferProblem p;
  auto& w = p.w;
  w.mode = mode;
  w.layout = parse_layout("--layout", f.layout);
  w.causal = f.causal;
  // Inference shards the cache over a ring: refuse other layouts before anything else.
  if (w.layout != Layout::Ring && w.layout != Layout::Striped && w.layout != Layout::Zigzag)
    check_infer(w);
  if (mode == InferMode::Decode && f.variant_given)
    throw InputError(
        "--variant: applies to --mode prefill; decode has one scheme (each device attends to its "
        "cache shard, device 0 merges the partials)");
  if (mode == InferMode::Prefill) w.variant = parse_infer_variant("--variant", f.variant);
  if (mode == InferMode::Prefill && f.decode_tokens_given)
    throw InputError(
        "--decode-tokens: applies to --mode decode; prefill's new tokens are --devices x --block");
  if (mode == InferMode::Decode && f.block_given)
    throw InputError(
        "--block: applies to --mode train and prefill; decode's query tokens are --decode-tokens");
  if (!f.ulysses_degree.empty())
    throw InputError("--ulysses-degree: only applies to --layout hybrid");
  // N^2 rank-steps run one after another (prefill), as in training.
  w.ranks = parse_count("--devices", f.devices, 1, 1024);
  w.cached = parse_count("--cached", f.cached, 0, std::int64_t{1} << 30);
  const bool files = given_files(f);
  if (files) {
    infer_from_files(f, p);
  } else {
    if (mode == InferMode::Prefill) {
      const auto block = parse_count("--block", f.block, 1, 1 << 20);
      if (w.layout == Layout::Zigzag && block % 2 != 0)
        throw InputError(fmt::format(
            "--block: zigzag splits each device's new tokens into two chunks, so it must be "
            "even, got {}",
            block));
      w.fresh = w.ranks * block;
    } else {
      w.fresh = parse_count("--decode-tokens", f.decode_tokens, 1, 1 << 20);
    }
    random_shape(f, w.heads, w.kv_heads, w.head_dim, p.storage);
  }
  if (w.heads % w.kv_heads != 0)
    throw InputError(
        fmt::format("--kv-heads: must divide --heads ({}), got {}", w.heads, w.kv_heads));
  // Names --cached when the cache does not divide over the devices.
  check_infer(w, mode == InferMode::Prefill ? "--devices/--block" : "--decode-tokens", "--cached");
  const auto seed = static_cast<std::uint64_t>(parse_count("--seed", f.seed, 0, INT64_MAX));
  if (!f.documents.empty()) {
    w.documents = pack_documents("--documents", parse_documents("--documents", f.documents),
                                 w.context(), seed);
    check_infer_documents(w);
  }
  // The reference stores new x context scores per head; the inputs hold the whole context.
  const double pairs = static_cast<double>(w.fresh) * static_cast<double>(w.context());
  const double values =
      static_cast<double>(std::max(w.fresh * w.heads, w.context() * w.kv_heads)) * w.head_dim;
  if (pairs > kMaxRefPairs || pairs * w.heads * w.head_dim > kMaxRefWork || values > kMaxRefPairs)
    throw InputError(fmt::format(
        "{}/--cached: {} new token{} against a context of {} x {} heads x head_dim {} is too "
        "large to check against the float64 reference, which stores new x context scores (at "
        "most 2^27 pairs, pairs x heads x head_dim <= 2^34 and 2^27 values per input)",
        mode == InferMode::Prefill ? "--devices/--block" : "--decode-tokens", w.fresh,
        w.fresh == 1 ? "" : "s", w.context(), w.heads, w.head_dim));
  if (!files) {
    p.in = kernels::random_infer_inputs(w, seed, p.storage);
    p.source = fmt::format("random normal, seed {}, {}", seed, dtype_name(p.storage));
  }
  return p;
}

int run_infer(const VerifyFlags& f, InferMode mode) {
  check_outputs({{"--out", f.out}, {"--lse-out", f.lse_out}},
                {{"--q", f.q}, {"--k", f.k}, {"--v", f.v}, {"--documents", f.documents}});
  if (f.pass_given && parse_pass("--pass", f.pass) != Pass::Fwd)
    throw InputError("--pass: inference runs the forward pass only; give fwd or leave --pass out");
  const auto p = load_infer_problem(f, mode);
  const auto& w = p.w;
  const bool fp64 = p.storage == NpyDType::F64;
  const double factor = parse_real("--tolerance-factor", f.tolerance_factor, 1e-12, 1e12);
  const auto rep = kernels::verify_infer(w, p.in, fp64, {}, factor);
  write_outputs(f, w.fresh, w.heads, w.head_dim, fp64, rep.result.o, rep.result.lse);

  std::uint64_t entries = 0;
  for (const auto& rank : rep.result.steps)
    for (const auto& st : rank) entries += st.entries;
  const bool ok = rep.passed();
  const bool prefill = mode == InferMode::Prefill;
  if (f.json) {
    nlohmann::json j{
        {"command", "verify"},
        {"mode", to_string(mode)},
        {"variant", prefill ? nlohmann::json(to_string(w.variant)) : nlohmann::json(nullptr)},
        {"cached", w.cached},
        {"fresh", w.fresh},
        {"context", w.context()},
        {"layout", to_string(w.layout)},
        {"devices", w.ranks},
        {"heads", w.heads},
        {"kv_heads", w.kv_heads},
        {"head_dim", w.head_dim},
        {"causal", w.causal},
        {"documents", w.documents},
        {"pass", "fwd"},
        {"compute", fp64 ? "fp64" : "fp32"},
        {"inputs", p.source},
        {"largest_score_block", {rep.result.max_q_rows, rep.result.max_k_cols}},
        {"full_matrix", {w.fresh, w.context()}},
        {"tolerance_tau", rep.tolerance.tau() * factor},
        {"score_bound", rep.tolerance.score_bound},
        {"errors", kernels::to_json(rep.errors)},
        {"work",
         {{"steps", infer_steps(w)},
          {"score_entries_fwd", entries},
          {"ring_elements_per_step", infer_ring_elements(w)},
          {"return_elements", rep.result.return_sent},
          {"matches_model", rep.work_mismatch.empty()},
          {"mismatch", rep.work_mismatch}}},
        {"matches", ok}};
    if (prefill) j["block"] = w.fresh / w.ranks;
    j["schema_version"] = kJsonSchemaVersion;
    std::cout << j.dump(2) << "\n";
  } else {
    const auto heads = fmt::format("{} head{} ({} KV), head dim {}, {}, {} compute", w.heads,
                                   w.heads == 1 ? "" : "s", w.kv_heads, w.head_dim,
                                   w.causal ? "causal" : "non-causal", fp64 ? "fp64" : "fp32");
    if (prefill)
      std::cout << fmt::format(
          "Prefill {}, layout {} on {} virtual devices: {} new tokens ({} per device) after {} "
          "cached (context {}), {}\n",
          to_string(w.variant), to_string(w.layout), w.ranks, w.fresh, w.fresh / w.ranks, w.cached,
          w.context(), heads);
    else
      std::cout << fmt::format(
          "Decode, layout {} on {} virtual devices: {} query token{} after {} cached (context "
          "{}), {}\n",
          to_string(w.layout), w.ranks, w.fresh, w.fresh == 1 ? "" : "s", w.cached, w.context(),
          heads);
    std::cout << fmt::format("Inputs: {}\n", p.source);
    if (!w.documents.empty())
      std::cout << documents_line(w.documents, "over the cached tokens, then the new ones");
    std::cout << fmt::format("Largest score block per device: {}x{}, full matrix: {}x{}\n",
                             rep.result.max_q_rows, rep.result.max_k_cols, w.fresh, w.context());
    print_errors(rep.errors, rep.tolerance, factor, fp64);
    std::cout << fmt::format(
        "Work counts equal the inference model (models/core/infer_work.hpp): {}{}\n",
        yes(rep.work_mismatch.empty()),
        rep.work_mismatch.empty() ? "" : " (" + rep.work_mismatch + ")");
    std::cout << fmt::format("Matches full attention: {}\n", yes(ok));
  }
  return ok ? 0 : 1;
}

int run(const VerifyFlags& f) {
  // Ctrl-C ends the emulator or the reference at its next ring step or head:
  // exit 130, no output file written.
  const StopScope stop;
  const auto mode = parse_choice("--mode", f.mode, {"train", "prefill", "decode"});
  // Judged whether or not files are given: a bad value is refused, never ignored.
  parse_count("--max-input", f.max_input, 1, std::int64_t{1} << 40);
  if (mode != "train" && parse_pack("--pack", f.pack) == Pack::Document)
    throw InputError(
        "--pack: applies to --mode train; inference shards the cache and the new tokens by the "
        "layout (sequence)");
  if (mode != "train") return run_infer(f, parse_infer_mode("--mode", mode));
  if (f.variant_given)
    throw InputError(
        "--variant: applies to --mode prefill (pass-kv or pass-q); training has one ring");
  if (f.cached_given)
    throw InputError(
        "--cached: applies to --mode prefill or decode (tokens already in the KV cache)");
  if (f.decode_tokens_given) throw InputError("--decode-tokens: applies to --mode decode");
  return run_train(f);
}

}  // namespace

Command verify_command() {
  return {
      "verify", [](CLI::App& app, int* code) {
        auto f = std::make_shared<VerifyFlags>();
        auto* sub = app.add_subcommand("verify",
                                       "Check that ring attention equals full attention (emulated "
                                       "devices vs float64 reference)");
        sub->add_option("--devices", f->devices, "Virtual devices N (1 .. 1024)")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        auto* block =
            sub->add_option(
                   "--block", f->block,
                   "Tokens per device (random inputs; sequence = N x block; prefill: new tokens)")
                ->capture_default_str()
                ->type_name(flag_type::kTokens);
        auto* heads = sub->add_option("--heads", f->heads, "Query heads (random inputs)")
                          ->capture_default_str()
                          ->type_name(flag_type::kInt);
        auto* kvh = sub->add_option("--kv-heads", f->kv_heads,
                                    "KV heads, dividing --heads (default: = heads)")
                        ->type_name(flag_type::kInt);
        auto* hd = sub->add_option("--head-dim", f->head_dim, "Head dimension (random inputs)")
                       ->capture_default_str()
                       ->type_name(flag_type::kInt);
        sub->add_flag("--causal,!--no-causal", f->causal, "Causal mask (default) or full attention")
            ->option_text(flag_type::kCausalDefault);
        sub->add_option("--layout", f->layout, "ring|striped|zigzag|ulysses|allgather|hybrid")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        auto* pass =
            sub->add_option("--pass", f->pass, "fwd|bwd|fwdbwd (bwd also checks dQ, dK, dV)")
                ->capture_default_str()
                ->type_name(flag_type::kName);
        sub->add_option("--documents", f->documents,
                        "Packed documents: lengths 8K,2K,512 (repeated), a file with one length "
                        "per line, cu_seqlens as FILE.npy (int32/int64), fixed:L, uniform:A..B, "
                        "lognormal:MEAN,SIGMA or dataset:NAME (drawn with --seed); packed into N "
                        "x block tokens (prefill, decode: the cached then the new tokens), the "
                        "last document cut to fit; attention causal within each document")
            ->type_name(flag_type::kDocuments);
        sub->add_option(
               "--pack", f->pack,
               "sequence (the layout splits the packed sequence) or document (each "
               "document split into 2 x N chunks as TransformerEngine's THD does; striped: "
               "striped per document)")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_option("--seed", f->seed, "Seed of the random inputs (and of dO, --documents)")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        auto* dt = sub->add_option("--dtype", f->dtype,
                                   "Random inputs' storage: fp16|fp32 (fp32 compute) or fp64")
                       ->capture_default_str()
                       ->type_name(flag_type::kName);
        sub->add_option(
               "--ulysses-degree", f->ulysses_degree,
               "hybrid: Ulysses degree U (divides devices and KV heads); ring degree = N/U")
            ->type_name(flag_type::kInt);
        sub->add_option("--tolerance-factor", f->tolerance_factor,
                        "Multiply every tolerance (below 1: a stricter check)")
            ->capture_default_str()
            ->type_name(flag_type::kFloat);
        sub->add_option("--q", f->q, "Queries .npy [seq, heads, head_dim], float16/32/64, C order")
            ->type_name(flag_type::kFile);
        sub->add_option("--k", f->k, "Keys .npy [seq, kv_heads, head_dim]")
            ->type_name(flag_type::kFile);
        sub->add_option("--v", f->v, "Values .npy [seq, kv_heads, head_dim]")
            ->type_name(flag_type::kFile);
        sub->add_option("--out", f->out,
                        "Write O .npy [seq, heads, head_dim] (float32; float64 for float64 inputs)")
            ->type_name(flag_type::kFile);
        sub->add_option("--lse-out", f->lse_out, "Write the LSE .npy [seq, heads]")
            ->type_name(flag_type::kFile);
        sub->add_option("--max-input", f->max_input,
                        "Most bytes each .npy input may take as float64 (K/M/G), checked from "
                        "its header before reading")
            ->capture_default_str()
            ->type_name(flag_type::kBytes);
        sub->add_option("--mode", f->mode,
                        "train (the training ring), prefill or decode (inference after a KV "
                        "cache, kernels/inference.hpp)")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        auto* variant =
            sub->add_option("--variant", f->variant,
                            "prefill: pass-kv (K/V go round the ring) or pass-q (queries do)")
                ->capture_default_str()
                ->type_name(flag_type::kName);
        auto* cached = sub->add_option("--cached", f->cached,
                                       "prefill/decode: tokens already in the KV cache, divided "
                                       "over the devices like the new ones")
                           ->capture_default_str()
                           ->type_name(flag_type::kTokens);
        auto* dtok = sub->add_option("--decode-tokens", f->decode_tokens,
                                     "decode: query tokens (1, or more for speculative decoding)")
                         ->capture_default_str()
                         ->type_name(flag_type::kTokens);
        sub->add_flag("--json", f->json, "Print one JSON object");
        sub->callback([f, code, block, heads, kvh, hd, dt, pass, variant, cached, dtok] {
          f->block_given = block->count() > 0;
          f->heads_given = heads->count() > 0;
          f->kv_heads_given = kvh->count() > 0;
          f->head_dim_given = hd->count() > 0;
          f->dtype_given = dt->count() > 0;
          f->pass_given = pass->count() > 0;
          f->variant_given = variant->count() > 0;
          f->cached_given = cached->count() > 0;
          f->decode_tokens_given = dtok->count() > 0;
          *code = run(*f);
        });
        return sub;
      }};
}

}  // namespace ringsim::cli
