#include "mpi/options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/help_format.hpp"
#include "models/core/parse.hpp"

namespace ringsim::mpi {

namespace {

// Flags stay text until parsed by models/core/parse, so every error names its flag.
struct TextFlags {
  std::string block = "256", heads = "8", kv_heads = "2", head_dim = "64";
  std::string layout = "ring", pass = "fwd", dtype = "fp32", seed = "1", tile = "256";
  std::string repeat = "1", warmup = "0", tolerance_factor = "1", threads = "1";
  std::string pp_min = "8", pp_max = "16M", pp_iters = "50", max_input = "1G";
};

// The ring layouts: one K/V block per rank travels N-1 hops. Ulysses, all-gather
// and hybrid exchange with collectives instead and are not part of this program.
const std::vector<std::string> kRingLayouts{"ring", "striped", "zigzag"};

void build(CLI::App& app, RingOptions& o, TextFlags& t, const Program& prog) {
  app.add_option("--block", t.block, "Tokens per rank, c (sequence = ranks x c)")
      ->capture_default_str()
      ->type_name(flag_type::kTokens);
  app.add_option("--heads", t.heads, "Query heads")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app.add_option("--kv-heads", t.kv_heads, "Key/value heads (GQA; must divide --heads)")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app.add_option("--head-dim", t.head_dim, "Head dimension")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app.add_option("--layout", t.layout, "ring|striped|zigzag")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app.add_flag("--causal,!--no-causal", o.causal, "Causal mask (default) or full attention")
      ->option_text(flag_type::kCausalDefault);
  app.add_option("--pass", t.pass, "fwd|bwd|fwdbwd (bwd runs an untimed forward first)")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app.add_option(
         "--dtype", t.dtype,
         fmt::format("{}: what the kernels compute and the ring carries", join(prog.dtypes, "|")))
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app.add_option("--seed", t.seed, "Seed of the synthetic inputs")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app.add_option("--tile", t.tile, "Kernel tile (query and key chunk)")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app.add_option("--threads", t.threads,
                 "Threads per rank for the kernels, 1-1024 (one rank per core group: "
                 "mpirun --map-by slot:PE=N ... --threads N)")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app.add_option("--q", o.q_path, "Queries .npy [tokens, heads, head_dim] (read by rank 0)")
      ->type_name(flag_type::kFile);
  app.add_option("--k", o.k_path, "Keys .npy [tokens, kv_heads, head_dim]")
      ->type_name(flag_type::kFile);
  app.add_option("--v", o.v_path, "Values .npy [tokens, kv_heads, head_dim]")
      ->type_name(flag_type::kFile);
  app.add_option("--max-input", t.max_input,
                 "Most bytes each .npy input may take as float64 (K/M/G), checked from its "
                 "header before reading")
      ->capture_default_str()
      ->type_name(flag_type::kBytes);
  app.add_option("--do", o.do_path,
                 "Output gradient .npy [tokens, heads, head_dim] (backward; "
                 "default: synthetic from --seed)")
      ->type_name(flag_type::kFile);
  app.add_flag("--check", o.check,
               "Gather the result on rank 0 and compare it with full attention in float64");
  app.add_option("--tolerance-factor", t.tolerance_factor,
                 "Scale the check's tolerances (as `ringsim verify`)")
      ->capture_default_str()
      ->type_name(flag_type::kFloat);
  app.add_option("--trace", o.trace, "Write the per-step timeline (Chrome trace JSON) here")
      ->type_name(flag_type::kFile);
  app.add_flag("--json", o.json, "Print one JSON object (rank 0) instead of the table");
  app.add_option("--repeat", t.repeat, "Timed runs (the median is reported)")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app.add_option("--warmup", t.warmup, "Untimed runs before them")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app.add_flag("--pingpong", o.pingpong,
               "Measure latency and bandwidth between ranks 0 and 1 instead of a ring");
  app.add_option("--pp-min", t.pp_min, "Ping-pong: smallest message (bytes)")
      ->capture_default_str()
      ->type_name(flag_type::kBytes);
  app.add_option("--pp-max", t.pp_max, "Ping-pong: largest message (bytes, K/M suffix ok)")
      ->capture_default_str()
      ->type_name(flag_type::kBytes);
  app.add_option("--pp-iters", t.pp_iters, "Ping-pong: round trips per size")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
}

void resolve(RingOptions& o, const TextFlags& t, const Program& prog) {
  o.block = parse_count("--block", t.block, 1, std::int64_t{1} << 24);
  o.heads = static_cast<int>(parse_count("--heads", t.heads, 1, 1024));
  o.kv_heads = static_cast<int>(parse_count("--kv-heads", t.kv_heads, 1, 1024));
  o.head_dim = static_cast<int>(parse_count("--head-dim", t.head_dim, 1, 4096));
  o.layout = parse_layout("--layout", parse_choice("--layout", t.layout, kRingLayouts));
  o.pass = parse_pass("--pass", t.pass);
  o.dtype = parse_choice("--dtype", t.dtype, prog.dtypes);
  o.seed = static_cast<std::uint64_t>(
      parse_count("--seed", t.seed, 0, std::numeric_limits<std::int64_t>::max()));
  o.tile = parse_count("--tile", t.tile, 1, 1 << 16);
  o.max_input_bytes = parse_count("--max-input", t.max_input, 1, std::int64_t{1} << 40);
  o.threads = static_cast<int>(parse_count("--threads", t.threads, 1, 1024));
  if (o.threads != 1 && prog.name != cpu_program().name)
    throw InputError("--threads: applies to ringsim-mpi's CPU kernels only");
  o.tolerance_factor = parse_real("--tolerance-factor", t.tolerance_factor, 1e-12, 1e12);
  o.repeat = static_cast<int>(parse_count("--repeat", t.repeat, 1, 10000));
  o.warmup = static_cast<int>(parse_count("--warmup", t.warmup, 0, 10000));
  o.pp_min_bytes = parse_count("--pp-min", t.pp_min, 1, std::int64_t{1} << 30);
  o.pp_max_bytes = parse_count("--pp-max", t.pp_max, 1, std::int64_t{1} << 30);
  o.pp_iters = static_cast<int>(parse_count("--pp-iters", t.pp_iters, 1, 100000));
  if (o.pp_min_bytes > o.pp_max_bytes)
    throw InputError(fmt::format("--pp-min: must not exceed --pp-max ({}), got {}", o.pp_max_bytes,
                                 o.pp_min_bytes));
  const bool any_file = !o.q_path.empty() || !o.k_path.empty() || !o.v_path.empty();
  if (any_file && (o.q_path.empty() || o.k_path.empty() || o.v_path.empty()))
    throw InputError("--q/--k/--v: give all three files, or none for synthetic inputs");
  if (!o.do_path.empty() && !any_file)
    throw InputError("--do: only with --q/--k/--v (synthetic runs draw dO from --seed)");
  if (!any_file && o.heads % o.kv_heads != 0)
    throw InputError(
        fmt::format("--kv-heads: must divide --heads ({}), got {}", o.heads, o.kv_heads));
  // Before any rank computes: rank 0 writes it at the end.
  check_outputs({{"--trace", o.trace}},
                {{"--q", o.q_path}, {"--k", o.k_path}, {"--v", o.v_path}, {"--do", o.do_path}});
}

}  // namespace

const Program& cpu_program() {
  static const Program p{"ringsim-mpi",
                         "ringsim-mpi: ring attention across MPI ranks on the CPU kernels, one K/V "
                         "block per rank, with the per-step timeline\n(run under mpirun/srun; see "
                         "docs/mpi.md)",
                         {"fp32", "fp64"}};
  return p;
}

int element_bytes(const std::string& dtype) {
  return dtype == "fp64" ? 8 : dtype == "fp32" ? 4 : 2;
}
int grad_bytes(const std::string& dtype) {
  return dtype == "fp64" ? 8 : 4;
}

ParsedArgs parse_args(int argc, const char* const* argv, const Program& prog) {
  ParsedArgs out;
  CLI::App app{prog.about, prog.name};
  use_help_format(app);
  TextFlags t;
  t.dtype = prog.dtypes.front();
  build(app, out.opts, t, prog);
  app.set_version_flag("-V,--version", prog.name + " " + RINGSIM_VERSION);
  try {
    refuse_empty_values(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
    app.parse(argc, argv);
    resolve(out.opts, t, prog);
  } catch (const CLI::CallForHelp&) {
    out.exit_now = true;
    out.exit_code = 0;
    out.message = app.help();
  } catch (const CLI::CallForVersion&) {
    out.exit_now = true;
    out.exit_code = 0;
    out.message = app.version();
  } catch (const CLI::ParseError& e) {
    out.exit_now = true;
    out.exit_code = 2;
    out.message = fmt::format("{}: error: {}", prog.name, one_line(e.what()));
  } catch (const InputError& e) {
    out.exit_now = true;
    out.exit_code = 2;
    out.message = fmt::format("{}: error: {}", prog.name, one_line(e.what()));
  }
  return out;
}

void validate(const RingOptions& o, int ranks) {
  if (o.pingpong) {
    if (ranks < 2)
      throw InputError(fmt::format("--pingpong: needs at least 2 ranks, got {}", ranks));
    return;
  }
  if (o.kv_heads > o.heads || o.heads % o.kv_heads != 0)
    throw InputError(
        fmt::format("--kv-heads: must divide --heads ({}), got {}", o.heads, o.kv_heads));
  if (o.layout == Layout::Zigzag && o.block % 2 != 0)
    throw InputError(fmt::format(
        "--block: zigzag splits each rank's block into two chunks, so it must be even, got {}",
        o.block));
  const auto elems = static_cast<double>(o.block) * ranks * o.heads * o.head_dim;
  if (elems > 1e9)
    throw InputError(fmt::format(
        "--block: ranks x block x heads x head-dim must be at most 1e9 elements, got {:g}", elems));
  // The reference holds one head's S x S float64 scores: 8192 tokens is 512 MiB.
  if (o.check && o.block * ranks > kMaxCheckTokens)
    throw InputError(fmt::format(
        "--check: the float64 reference materialises a whole score matrix, so the sequence "
        "(ranks x block) must be at most {} tokens, got {}",
        kMaxCheckTokens, o.block * ranks));
}

std::vector<std::string> to_args(const RingOptions& o) {
  const RingOptions d;
  std::vector<std::string> a;
  auto put = [&](const char* flag, const std::string& v) {
    a.push_back(flag);
    a.push_back(v);
  };
  auto text = [&](const char* flag, const std::string& v, const std::string& dflt) {
    if (v != dflt) put(flag, v);
  };
  auto count = [&](const char* flag, std::int64_t v, std::int64_t dflt) {
    if (v != dflt) put(flag, std::to_string(v));
  };
  count("--block", o.block, d.block);
  count("--heads", o.heads, d.heads);
  count("--kv-heads", o.kv_heads, d.kv_heads);
  count("--head-dim", o.head_dim, d.head_dim);
  if (o.layout != d.layout) put("--layout", to_string(o.layout));
  if (o.causal != d.causal) a.push_back(o.causal ? "--causal" : "--no-causal");
  if (o.pass != d.pass) put("--pass", to_string(o.pass));
  text("--dtype", o.dtype, d.dtype);
  count("--seed", static_cast<std::int64_t>(o.seed), static_cast<std::int64_t>(d.seed));
  count("--tile", o.tile, d.tile);
  count("--threads", o.threads, d.threads);
  text("--q", o.q_path, "");
  text("--k", o.k_path, "");
  text("--v", o.v_path, "");
  text("--do", o.do_path, "");
  count("--max-input", o.max_input_bytes, d.max_input_bytes);
  if (o.check) a.push_back("--check");
  if (o.tolerance_factor != d.tolerance_factor)
    put("--tolerance-factor", fmt::format("{}", o.tolerance_factor));
  text("--trace", o.trace, "");
  if (o.json) a.push_back("--json");
  count("--repeat", o.repeat, d.repeat);
  count("--warmup", o.warmup, d.warmup);
  if (o.pingpong) a.push_back("--pingpong");
  count("--pp-min", o.pp_min_bytes, d.pp_min_bytes);
  count("--pp-max", o.pp_max_bytes, d.pp_max_bytes);
  count("--pp-iters", o.pp_iters, d.pp_iters);
  return a;
}

}  // namespace ringsim::mpi
