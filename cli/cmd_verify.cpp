// `ringsim verify`: ring attention computes exactly full attention. Runs the
// ring emulator (N virtual devices, real blockwise kernels) on random or given
// tensors and compares O, LSE (and dQ, dK, dV) with the float64 reference.
// With no arguments it is the classic four-device demo.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.hpp"
#include "kernels/inputs.hpp"
#include "kernels/npy.hpp"
#include "kernels/verify.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/work.hpp"

namespace ringsim::cli {
namespace {

using kernels::NpyDType;

struct VerifyFlags {
  std::string devices = "4", block = "8", heads = "1", kv_heads, head_dim = "16";
  std::string layout = "ring", pass = "fwd", seed = "0", ulysses_degree, dtype = "fp32";
  std::string tolerance_factor = "1";
  std::string max_input = "1G";  // bytes of each input as float64, checked before it is read
  bool causal = true, json = false;
  std::string q, k, v, out, lse_out;
  bool block_given = false, heads_given = false, kv_heads_given = false, head_dim_given = false;
  bool dtype_given = false;
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

Problem load_problem(const VerifyFlags& f, Pass pass) {
  Problem p;
  auto& w = p.w;
  w.layout = parse_layout("--layout", f.layout);
  w.causal = f.causal;
  w.pass = pass;
  // N^2 device-steps run one after another: 1024 devices is about a million kernel calls.
  w.devices = parse_count("--devices", f.devices, 1, 1024);
  const bool files = !f.q.empty() || !f.k.empty() || !f.v.empty();
  if (files) {
    if (f.q.empty() || f.k.empty() || f.v.empty())
      throw InputError("--q/--k/--v: give all three .npy files (or none for random inputs)");
    if (f.dtype_given)
      throw InputError("--dtype: applies to random inputs; the .npy files carry their own dtype");
    // Each file is judged by its header against the budget before its data
    // is read or allocated.
    const auto budget = static_cast<std::uint64_t>(
        parse_count("--max-input", f.max_input, 1, std::int64_t{1} << 40));
    auto load = [budget](const std::string& path, const char* flag) {
      return kernels::read_npy(path, std::string(flag) + " " + path, 3, budget, "--max-input");
    };
    const auto q = load(f.q, "--q");
    const auto k = load(f.k, "--k");
    const auto v = load(f.v, "--v");
    if (k.dtype != q.dtype || v.dtype != q.dtype)
      throw InputError(
          fmt::format("--k/--v: dtypes {}/{} differ from --q's {}; save all three alike",
                      dtype_name(k.dtype), dtype_name(v.dtype), dtype_name(q.dtype)));
    const auto S = q.shape[0], H = q.shape[1], D = q.shape[2];
    if (k.shape != v.shape)
      throw InputError(fmt::format("--v {}: shape ({}, {}, {}) differs from --k's ({}, {}, {})",
                                   f.v, v.shape[0], v.shape[1], v.shape[2], k.shape[0], k.shape[1],
                                   k.shape[2]));
    if (k.shape[0] != S)
      throw InputError(fmt::format(
          "--k {}: {} tokens, --q has {}; ring attention here is self-attention over one sequence",
          f.k, k.shape[0], S));
    if (k.shape[2] != D)
      throw InputError(
          fmt::format("--k {}: head_dim {} differs from --q's {}", f.k, k.shape[2], D));
    if (H % k.shape[1] != 0)
      throw InputError(fmt::format("--k {}: its {} KV heads must divide --q's {} heads (GQA)", f.k,
                                   k.shape[1], H));
    if (H > 4096 || D > 4096)
      throw InputError(fmt::format("--q {}: at most 4096 heads and head_dim 4096", f.q));
    if (S % w.devices != 0)
      throw InputError(fmt::format(
          "--devices: the sequence of {} tokens in --q {} is not divisible by {} devices", S, f.q,
          w.devices));
    w.block = S / w.devices;
    if (f.block_given && parse_count("--block", f.block, 1, 1 << 30) != w.block)
      throw InputError(
          fmt::format("--block: the inputs give {} tokens / {} devices = {} per device, not {}", S,
                      w.devices, w.block, f.block));
    auto check_flag = [](bool given, const char* flag, const std::string& text,
                         std::int64_t actual) {
      if (given && parse_count(flag, text, 1, 1 << 20) != actual)
        throw InputError(fmt::format("{}: the .npy files have {}, not {}", flag, actual, text));
    };
    check_flag(f.heads_given, "--heads", f.heads, H);
    check_flag(f.kv_heads_given, "--kv-heads", f.kv_heads, k.shape[1]);
    check_flag(f.head_dim_given, "--head-dim", f.head_dim, D);
    w.shape.heads = static_cast<int>(H);
    w.shape.kv_heads = static_cast<int>(k.shape[1]);
    w.shape.head_dim = static_cast<int>(D);
    p.storage = q.dtype;
    p.in.q = q.data;
    p.in.k = k.data;
    p.in.v = v.data;
    p.source = fmt::format("{}, {}, {} ({})", f.q, f.k, f.v, dtype_name(q.dtype));
  } else {
    w.block = parse_count("--block", f.block, 1, 1 << 20);
    w.shape.heads = static_cast<int>(parse_count("--heads", f.heads, 1, 256));
    w.shape.kv_heads = f.kv_heads.empty()
                           ? w.shape.heads
                           : static_cast<int>(parse_count("--kv-heads", f.kv_heads, 1, 256));
    w.shape.head_dim = static_cast<int>(parse_count("--head-dim", f.head_dim, 1, 1024));
    const auto dt = parse_choice("--dtype", f.dtype, {"fp16", "fp32", "fp64"});
    p.storage = dt == "fp16" ? NpyDType::F16 : dt == "fp32" ? NpyDType::F32 : NpyDType::F64;
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
  kernels::check_emulation(w);
  const double S = static_cast<double>(w.devices * w.block);
  if (S * S > kMaxRefPairs || S * S * w.shape.heads * w.shape.head_dim > kMaxRefWork)
    throw InputError(fmt::format(
        "--devices/--block: {} tokens x {} heads x head_dim {} is too large to check against the "
        "float64 reference, which stores S x S scores (at most {} tokens and S^2 x heads x "
        "head_dim <= 2^34)",
        w.devices * w.block, w.shape.heads, w.shape.head_dim,
        static_cast<int>(std::sqrt(kMaxRefPairs))));

  const auto seed = static_cast<std::uint64_t>(parse_count("--seed", f.seed, 0, INT64_MAX));
  auto rnd = kernels::random_inputs(w, seed, p.storage);
  if (files) {
    p.in.d_o = std::move(rnd.d_o);  // dO stays random: the check holds for any upstream gradient
  } else {
    p.in = std::move(rnd);
    p.source = fmt::format("random normal, seed {}, {}", seed, dtype_name(p.storage));
  }
  return p;
}

std::string yes(bool b) {
  return b ? "True" : "False";
}

int run(const VerifyFlags& f) {
  check_outputs({{"--out", f.out}, {"--lse-out", f.lse_out}},
                {{"--q", f.q}, {"--k", f.k}, {"--v", f.v}});
  const Pass pass = parse_pass("--pass", f.pass);
  auto p = load_problem(f, pass);
  const auto& w = p.w;
  const bool fp64 = p.storage == NpyDType::F64;
  const bool backward = pass != Pass::Fwd;
  const double factor = parse_real("--tolerance-factor", f.tolerance_factor, 1e-12, 1e12);
  const auto rep = kernels::verify_run(w, p.in, fp64, backward, {}, factor);
  const auto S = w.devices * w.block;

  // Outputs in the working precision's storage type: float32 unless the inputs were float64.
  const NpyDType out_type = fp64 ? NpyDType::F64 : NpyDType::F32;
  // Both files or neither (models/core/atomic_file.hpp).
  std::optional<AtomicFile> o_file, lse_file;
  std::vector<AtomicFile*> files;
  if (!f.out.empty()) {
    o_file.emplace(f.out, "--out");
    o_file->write(
        kernels::encode_npy({S, w.shape.heads, w.shape.head_dim}, out_type, rep.result.o));
    files.push_back(&*o_file);
  }
  if (!f.lse_out.empty()) {
    lse_file.emplace(f.lse_out, "--lse-out");
    lse_file->write(kernels::encode_npy({S, w.shape.heads}, out_type, rep.result.lse));
    files.push_back(&*lse_file);
  }
  commit_all(files);

  std::uint64_t entries = 0;
  for (const auto& dev : rep.result.fwd.steps)
    for (const auto& st : dev) entries += st.entries;
  const bool ok = rep.passed();
  const std::string layout =
      w.layout == Layout::Hybrid
          ? fmt::format("hybrid (ulysses {} x ring {})", w.ulysses(), w.ring_degree())
          : to_string(w.layout);
  if (f.json) {
    nlohmann::json errs = nlohmann::json::array();
    for (const auto& e : rep.errors) {
      errs.push_back({{"tensor", e.tensor},
                      {"max_abs", e.max_abs},
                      {"max_rel", e.max_rel},
                      {"tolerance", e.tolerance},
                      {"ok", e.ok}});
      if (!e.reason.empty()) errs.back()["reason"] = e.reason;
      if (!e.note.empty()) errs.back()["note"] = e.note;
    }
    nlohmann::json j{{"command", "verify"},
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
                     {"compute", fp64 ? "fp64" : "fp32"},
                     {"inputs", p.source},
                     {"largest_score_block", {rep.result.max_q_rows, rep.result.max_k_cols}},
                     {"full_matrix", {S, S}},
                     {"tolerance_tau", rep.tolerance.tau() * factor},
                     {"score_bound", rep.tolerance.score_bound},
                     {"errors", errs},
                     {"work",
                      {{"steps", num_steps(w)},
                       {"score_entries_fwd", entries},
                       {"ring_elements_per_step", ring_elements_per_step(w, backward)},
                       {"matches_model", rep.work_mismatch.empty()},
                       {"mismatch", rep.work_mismatch}}},
                     {"matches", ok}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format(
        "Layout {} on {} virtual devices, block {} (sequence {}), {} head{} ({} KV), head dim {}, "
        "{}, pass {}, {} compute\n",
        layout, w.devices, w.block, S, w.shape.heads, w.shape.heads == 1 ? "" : "s",
        w.shape.kv_heads, w.shape.head_dim, w.causal ? "causal" : "non-causal", to_string(pass),
        fp64 ? "fp64" : "fp32");
    std::cout << fmt::format("Inputs: {}\n", p.source);
    std::cout << fmt::format("Largest score block per device: {}x{}, full matrix: {}x{}\n",
                             rep.result.max_q_rows, rep.result.max_k_cols, S, S);
    std::cout << fmt::format("  {:<4} {:>13} {:>13} {:>13}\n", "", "max abs err", "max rel err",
                             "tolerance");
    for (const auto& e : rep.errors)
      std::cout << fmt::format("  {:<4} {:>13.3e} {:>13.3e} {:>13.3e}{}\n", e.tensor, e.max_abs,
                               e.max_rel, e.tolerance,
                               !e.reason.empty() ? "  NOT JUDGED: " + e.reason
                               : !e.ok           ? "  EXCEEDED"
                               : !e.note.empty() ? "  (" + e.note + ")"
                                                 : "");
    std::cout << fmt::format(
        "Tolerance: tau = {}16 u (sqrt(d)(1 + Smax) + sqrt(S)) = {:.3e} (u = 2^{}, Smax = {:.3g}); "
        "O: tau max|V|, LSE: tau, grads: tau max|ref|\n",
        factor == 1 ? "" : fmt::format("{:g} x ", factor), rep.tolerance.tau() * factor,
        fp64 ? -53 : -24, rep.tolerance.score_bound);
    std::cout << fmt::format("Work counts equal the analytic model (models/core/work.hpp): {}{}\n",
                             yes(rep.work_mismatch.empty()),
                             rep.work_mismatch.empty() ? "" : " (" + rep.work_mismatch + ")");
    std::cout << fmt::format("Matches full attention: {}\n", yes(ok));
  }
  return ok ? 0 : 1;
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
            ->capture_default_str();
        auto* block = sub->add_option("--block", f->block,
                                      "Tokens per device (random inputs; sequence = N x block)")
                          ->capture_default_str();
        auto* heads = sub->add_option("--heads", f->heads, "Query heads (random inputs)")
                          ->capture_default_str();
        auto* kvh = sub->add_option("--kv-heads", f->kv_heads,
                                    "KV heads, dividing --heads (default: = heads)");
        auto* hd = sub->add_option("--head-dim", f->head_dim, "Head dimension (random inputs)")
                       ->capture_default_str();
        sub->add_flag("--causal,!--no-causal", f->causal,
                      "Causal mask (default) or full attention");
        sub->add_option("--layout", f->layout, "ring|striped|zigzag|ulysses|allgather|hybrid")
            ->capture_default_str();
        sub->add_option("--pass", f->pass, "fwd|bwd|fwdbwd (bwd also checks dQ, dK, dV)")
            ->capture_default_str();
        sub->add_option("--seed", f->seed, "Seed of the random inputs (and of dO)")
            ->capture_default_str();
        auto* dt = sub->add_option("--dtype", f->dtype,
                                   "Random inputs' storage: fp16|fp32 (fp32 compute) or fp64")
                       ->capture_default_str();
        sub->add_option(
            "--ulysses-degree", f->ulysses_degree,
            "hybrid: Ulysses degree U (divides devices and KV heads); ring degree = N/U");
        sub->add_option("--tolerance-factor", f->tolerance_factor,
                        "Multiply every tolerance (below 1: a stricter check)")
            ->capture_default_str();
        sub->add_option("--q", f->q, "Queries .npy [seq, heads, head_dim], float16/32/64, C order");
        sub->add_option("--k", f->k, "Keys .npy [seq, kv_heads, head_dim]");
        sub->add_option("--v", f->v, "Values .npy [seq, kv_heads, head_dim]");
        sub->add_option(
            "--out", f->out,
            "Write O .npy [seq, heads, head_dim] (float32; float64 for float64 inputs)");
        sub->add_option("--lse-out", f->lse_out, "Write the LSE .npy [seq, heads]");
        sub->add_option("--max-input", f->max_input,
                        "Most bytes each .npy input may take as float64 (K/M/G), checked from "
                        "its header before reading")
            ->capture_default_str();
        sub->add_flag("--json", f->json, "Print one JSON object");
        sub->callback([f, code, block, heads, kvh, hd, dt] {
          f->block_given = block->count() > 0;
          f->heads_given = heads->count() > 0;
          f->kv_heads_given = kvh->count() > 0;
          f->head_dim_given = hd->count() > 0;
          f->dtype_given = dt->count() > 0;
          *code = run(*f);
        });
        return sub;
      }};
}

}  // namespace ringsim::cli
