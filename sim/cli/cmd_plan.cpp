// `ringsim plan`: capacity planning before cluster training. Searches context-
// parallel degree x layout (x tensor parallel, x micro-batch) with the rest of
// the devices as FSDP data parallel, and ranks the configs that fit in HBM.
// The search runs the analytic model in this process; `--recheck N` re-runs
// the attention of the top N configs with the SimGrid engine in child
// processes (SimGrid allows one engine per process).
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "models/errors.hpp"
#include "models/parse.hpp"
#include "models/plan.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/workload_flags.hpp"

namespace ringsim::cli {
namespace {

constexpr std::int64_t kMaxTokens = std::int64_t{1} << 40;
constexpr std::int64_t kDefaultContextLimit = std::int64_t{1} << 30;
constexpr int kChildTimeoutS = 300;

struct PlanFlags {
  WorkloadFlags w;
  HardwareFlags hw;
  std::string context, gpus, global_batch_tokens, checkpointing = "full", optimizer = "adamw";
  std::string cp, layout, tp = "1", loss = "eager", hbm, layers, vocab, top = "10", recheck = "0";
  bool max_context = false, explain = false, json = false, causal = true;
};

std::string gb(double b) {
  return fmt::format("{:.1f} GB", b / 1e9);
}

std::string layout_label(const PlanConfig& c) {
  return c.cp == 1 ? "none" : to_string(c.layout);
}

// ---- SimGrid re-check in a child process -----------------------------------

struct ChildResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string out, err;
};

ChildResult run_child(const std::vector<std::string>& args, int timeout_s) {
  ChildResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    r.err = "pipe() failed";
    return r;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    r.err = "fork() failed";
    return r;
  }
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<long long>(left, INT_MAX))) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const auto n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// This program's path, if it is the ringsim binary: the CLI also runs inside
// test programs, which must never be re-executed with `run` arguments.
std::string self_exe(std::string* why) {
  char buf[PATH_MAX];
  const auto n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) {
    *why = "cannot find this program's path (/proc/self/exe)";
    return {};
  }
  buf[n] = '\0';
  const std::string path = buf;
  const auto base = path.substr(path.find_last_of('/') + 1);
  if (base.rfind("ringsim", 0) != 0) {
    *why = fmt::format("this process is '{}', not the ringsim binary", base);
    return {};
  }
  return path;
}

// `ringsim run` flags that reproduce one config's attention layer.
std::vector<std::string> run_args(const std::string& exe, const PlanRequest& r, const PlanConfig& c,
                                  const Hardware& hw, const HardwareFlags& hf, Pass pass) {
  const auto w = attention_workload(r, c);
  const auto g = group_hardware(hw, c.tp);
  std::vector<std::string> a{exe,
                             "run",
                             "--engine",
                             "simgrid",
                             "--json",
                             "--devices",
                             std::to_string(w.devices),
                             "--block",
                             std::to_string(w.block),
                             "--layout",
                             to_string(w.layout),
                             "--pass",
                             to_string(pass),
                             "--layers",
                             "1",
                             "--dtype",
                             to_string(w.dtype),
                             "--d-model",
                             std::to_string(w.shape.d_model),
                             "--heads",
                             std::to_string(w.shape.heads),
                             "--kv-heads",
                             std::to_string(w.shape.kv_heads),
                             "--head-dim",
                             std::to_string(w.shape.head_dim),
                             "--ffn",
                             std::to_string(w.shape.ffn),
                             "--gpu",
                             hw.gpu_name,
                             "--platform",
                             to_string(g.platform),
                             "--gpus-per-node",
                             std::to_string(g.gpus_per_node),
                             "--intra",
                             hw.intra_name,
                             "--inter",
                             hw.inter_name};
  if (!r.causal) a.push_back("--no-causal");
  if (w.layout == Layout::Hybrid) {
    a.push_back("--ulysses-degree");
    a.push_back(std::to_string(w.ulysses_degree));
  }
  auto pass_on = [&](const char* flag, const std::string& v) {
    if (v.empty()) return;
    a.push_back(flag);
    a.push_back(v);
  };
  pass_on("--flops", hf.flops);
  pass_on("--efficiency", hf.efficiency);
  pass_on("--bandwidth", hf.bandwidth);
  pass_on("--latency", hf.latency);
  pass_on("--catalog", hf.catalog);
  pass_on("--profile", hf.profile);
  return a;
}

struct Recheck {
  std::string status = "off";  // off | ok | partial | failed | unavailable
  std::string message;
  std::vector<nlohmann::json> per_config;
};

// Seconds per layer from a child `run --engine simgrid --json`, or an error.
std::optional<double> child_time(const std::vector<std::string>& args, std::string* error,
                                 double* analytic) {
  const auto res = run_child(args, kChildTimeoutS);
  if (res.timed_out) {
    *error = fmt::format("simgrid run timed out after {} s", kChildTimeoutS);
    return std::nullopt;
  }
  if (res.exit_code != 0) {
    auto line = res.err.substr(0, res.err.find('\n'));
    *error = fmt::format("`ringsim run --engine simgrid` exited {}: {}", res.exit_code,
                         line.empty() ? "(no message)" : line);
    return std::nullopt;
  }
  try {
    const auto j = nlohmann::json::parse(res.out);
    if (j.value("engine", "") != "simgrid") {
      *error = "child did not report engine simgrid";
      return std::nullopt;
    }
    if (j.contains("analytic_time_s") && j["analytic_time_s"].is_number())
      *analytic = j["analytic_time_s"].get<double>();
    return j.at("time_s").get<double>();
  } catch (const std::exception& e) {
    *error = std::string("could not read the child's JSON: ") + e.what();
    return std::nullopt;
  }
}

Recheck recheck_top(int n, std::vector<PlanConfig>& configs, const PlanRequest& r,
                    const Hardware& hw, const HardwareFlags& hf, const ComputeModel& cm) {
  Recheck rc;
  if (n <= 0) return rc;
  std::string why;
  const auto exe = self_exe(&why);
  if (exe.empty()) {
    rc.status = "unavailable";
    rc.message = why;
    return rc;
  }
  int done = 0, failed = 0;
  for (auto& c : configs) {
    if (!c.feasible || done >= n) break;
    ++done;
    std::string err;
    double an_f = -1, an_fb = -1;
    const auto f = child_time(run_args(exe, r, c, hw, hf, Pass::Fwd), &err, &an_f);
    std::optional<double> fb;
    if (f) fb = child_time(run_args(exe, r, c, hw, hf, Pass::FwdBwd), &err, &an_fb);
    if (!f || !fb) {
      if (err.find("--engine") != std::string::npos && err.find("simgrid") != std::string::npos) {
        rc.status = "unavailable";
        rc.message = "this build has no SimGrid engine (" + err + ")";
        rc.per_config.clear();
        return rc;
      }
      ++failed;
      rc.per_config.push_back({{"config", c.label()}, {"engine", "simgrid"}, {"error", err}});
      continue;
    }
    const auto analytic_step = c.time.step_time_s;
    const auto analytic_attn = c.time.attention_s;
    auto sc = evaluate(r, hw, cm, c.layout, c.cp, c.tp, c.micro_batch,
                       AttentionOverride{*f, *fb, "simgrid"});
    nlohmann::json j;
    j["config"] = c.label();
    j["engine"] = "simgrid";
    j["attention_fwdbwd_s_per_layer_simgrid"] = *fb;
    j["attention_fwd_s_per_layer_simgrid"] = *f;
    if (an_fb >= 0) j["attention_fwdbwd_s_per_layer_analytic_child"] = an_fb;
    j["attention_s_analytic"] = analytic_attn;
    j["attention_s_simgrid"] = sc.time.attention_s;
    j["attention_rel_diff"] = analytic_attn > 0 ? sc.time.attention_s / analytic_attn - 1 : 0.0;
    j["step_time_s_analytic"] = analytic_step;
    j["step_time_s_simgrid_attention"] = sc.time.step_time_s;
    j["tokens_per_s_per_gpu_simgrid_attention"] = sc.tokens_per_s_per_gpu;
    j["mfu_simgrid_attention"] = sc.mfu;
    rc.per_config.push_back(j);
  }
  rc.status = failed == 0 ? "ok" : (failed == done ? "failed" : "partial");
  rc.message = fmt::format(
      "attention of the top {} config(s) re-run by the SimGrid engine in child processes (one "
      "layer, "
      "x layers){}",
      done, failed ? fmt::format("; {} failed", failed) : "");
  return rc;
}

// ---- Output ------------------------------------------------------------------

nlohmann::json config_json(const PlanConfig& c, int rank, double hbm) {
  nlohmann::json j;
  j["rank"] = rank;
  j["feasible"] = c.feasible;
  j["reason"] = c.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.reason);
  j["label"] = c.label();
  j["layout"] = layout_label(c);
  j["cp"] = c.cp;
  j["tp"] = c.tp;
  j["dp"] = c.dp;
  j["block"] = c.block;
  if (c.layout == Layout::Hybrid && c.cp > 1) j["ulysses_degree"] = c.ulysses_degree;
  j["micro_batch"] = c.micro_batch;
  j["grad_accum_steps"] = c.grad_accum;
  j["hbm_bytes"] = hbm;
  if (!c.evaluated) {
    j["memory_bytes_per_device"] = nullptr;
    j["step_time_s"] = nullptr;
    j["tokens_per_s_per_gpu"] = nullptr;
    j["mfu"] = nullptr;
    return j;
  }
  j["memory_bytes_per_device"] = std::llround(c.memory.total);
  j["memory_peak_phase"] = c.memory.peak_phase;
  nlohmann::json mem = nlohmann::json::object();
  for (const auto& i : c.memory.items)
    mem[i.name] = {{"bytes", std::llround(i.bytes)}, {"phase", i.phase}};
  j["memory_breakdown"] = mem;
  if (!c.feasible) {
    j["step_time_s"] = nullptr;
    j["tokens_per_s_per_gpu"] = nullptr;
    j["mfu"] = nullptr;
    return j;
  }
  const auto& t = c.time;
  j["engine"] = t.engine;
  j["step_time_s"] = t.step_time_s;
  j["tokens_per_step"] = c.tokens_per_step;
  j["tokens_per_s_per_gpu"] = c.tokens_per_s_per_gpu;
  j["mfu"] = c.mfu;
  j["mfu_palm"] = c.mfu_palm;
  j["time_breakdown"] = {
      {"attention_s", t.attention_s},         {"attention_recompute_s", t.attention_recompute_s},
      {"other_compute_s", t.other_compute_s}, {"pointwise_s", t.pointwise_s},
      {"head_and_loss_s", t.head_s},          {"tp_comm_s", t.tp_comm_s},
      {"fsdp_comm_s", t.fsdp_comm_s},         {"cp_link_s", t.cp_link_s},
      {"link_exposed_s", t.fsdp_exposed_s},   {"optimizer_s", t.optimizer_s},
      {"micro_step_s", t.micro_step_s}};
  return j;
}

std::string seconds(double s) {
  return s >= 1 ? fmt::format("{:.2f} s", s) : fmt::format("{:.1f} ms", s * 1e3);
}

std::string header(const PlanRequest& r, const Hardware& hw, double hbm,
                   const std::string& cm_name) {
  std::string out;
  const auto& s = r.shape;
  out += fmt::format(
      "ringsim plan: {} ({:.2f}B params, {} layers, {} heads / {} KV heads) on {} x {} ({} HBM "
      "each)\n",
      s.name, static_cast<double>(total_params(s)) / 1e9, s.layers, s.heads, s.kv_heads, r.gpus,
      hw.gpu_name, gb(hbm));
  out += fmt::format("  hardware   {}\n", hw.describe());
  out += fmt::format(
      "  training   bf16 mixed precision, AdamW 16 B/param sharded ZeRO-3/FSDP over cp x dp, "
      "{} activation checkpointing, {} loss, {} mask\n",
      to_string(r.checkpointing), to_string(r.loss), r.causal ? "causal" : "full");
  out += fmt::format("  batch      {}\n",
                     r.global_batch_tokens > 0
                         ? fmt::format("{} tokens per step ({} sequences), micro-batch searched",
                                       r.global_batch_tokens, r.global_batch_tokens / r.context)
                         : std::string("one sequence per data-parallel replica (micro-batch 1)"));
  out += fmt::format("  engine     analytic ({}) for attention; rest of the layer by roofline\n",
                     cm_name);
  return out;
}

std::string table(const std::vector<PlanConfig>& cs, int top) {
  std::string out;
  int shown = 0, feasible = 0;
  for (const auto& c : cs) feasible += c.feasible;
  if (feasible == 0) {
    out += "\nno configuration fits.\n";
  } else {
    out += fmt::format("\n{:>4}  {:<24}{:>4}{:>9}{:>9}{:>11}{:>11}{:>11}{:>7}\n", "rank", "config",
                       "dp", "block", "mb x ga", "memory", "step", "tok/s/GPU", "MFU");
    for (const auto& c : cs) {
      if (!c.feasible || shown >= top) continue;
      ++shown;
      out += fmt::format("{:>4}  {:<24}{:>4}{:>9}{:>9}{:>11}{:>11}{:>11.0f}{:>6.1f}%\n", shown,
                         c.label(), c.dp, c.block,
                         fmt::format("{}x{}", c.micro_batch, c.grad_accum), gb(c.memory.total),
                         seconds(c.time.step_time_s), c.tokens_per_s_per_gpu, 100 * c.mfu);
    }
    if (feasible > shown)
      out += fmt::format("  ... {} more feasible (--top N, or --json for all)\n", feasible - shown);
  }
  if (feasible < static_cast<int>(cs.size())) {
    // Layouts with the same cp/tp and the same reason share one line; the
    // chunked-loss hint is said once.
    const std::string hint = "; --loss chunked keeps 4096 tokens of logits at a time";
    bool hinted = false;
    std::vector<std::pair<std::string, std::string>> rows;  // (label, reason)
    std::vector<const PlanConfig*> firsts;
    for (const auto& c : cs) {
      if (c.feasible) continue;
      std::string reason = c.reason;
      if (const auto at = reason.find(hint); at != std::string::npos) {
        reason.erase(at, hint.size());
        hinted = true;
      }
      bool merged = false;
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].second == reason && firsts[i]->cp == c.cp && firsts[i]->tp == c.tp &&
            c.cp > 1 && c.layout != Layout::Hybrid && firsts[i]->layout != Layout::Hybrid) {
          const auto sp = rows[i].first.find(' ');
          rows[i].first.insert(sp, "/" + to_string(c.layout));
          merged = true;
          break;
        }
      }
      if (!merged) {
        rows.emplace_back(c.label(), reason);
        firsts.push_back(&c);
      }
    }
    size_t width = 24;
    for (const auto& r : rows) width = std::max(width, r.first.size() + 2);
    out += "\ninfeasible:\n";
    for (const auto& [label, reason] : rows)
      out += fmt::format("  {:<{}}{}\n", label, width, reason);
    if (hinted)
      out +=
          "  (where the logits are the largest term, --loss chunked keeps 4096 tokens of them at a "
          "time)\n";
  }
  return out;
}

std::string explain(const PlanConfig& c, double hbm) {
  std::string out = fmt::format(
      "\nexplain: {} (dp {}, block {} tokens, micro-batch {} x {} accumulation steps)\n", c.label(),
      c.dp, c.block, c.micro_batch, c.grad_accum);
  if (!c.evaluated) return out + "  " + c.reason + "\n";
  out += "  memory per device (GB = 1e9 bytes)\n";
  for (const auto& i : c.memory.items)
    out += fmt::format("    {:<32}{:>10}  {:<15}{}\n", i.name, gb(i.bytes), i.phase, i.formula);
  out += fmt::format(
      "    {:<32}{:>10}  persistent {} + max(loss {}, layer_backward {}) + overhead {}; "
      "peak at the {}\n",
      "total", gb(c.memory.total), gb(c.memory.persistent), gb(c.memory.loss_phase),
      gb(c.memory.backward_phase), gb(c.memory.overhead), c.memory.peak_phase);
  out += fmt::format("    {:<32}{:>10}  {}\n", "HBM", gb(hbm), c.feasible ? "fits" : c.reason);
  if (!c.feasible) return out;
  const auto& t = c.time;
  out += fmt::format("  time per step (engine: {})\n", t.engine);
  auto row = [&](const char* k, double v, const char* why) {
    out += fmt::format("    {:<32}{:>10}  {}\n", k, seconds(v), why);
  };
  row("attention fwd+bwd", t.attention_s, "analyze(fwdbwd) x layers x micro-batches");
  row("attention recompute", t.attention_recompute_s, "full checkpointing: one more forward");
  row("projections + MLP", t.other_compute_s, "roofline at peak x efficiency (incl. recompute)");
  row("pointwise ops", t.pointwise_s, "norms, RoPE, residuals, SwiGLU by HBM bandwidth");
  row("output head + loss", t.head_s, "2/4 x tokens x d_model x vocab FLOPs + fp32 loss traffic");
  row("tensor-parallel comm", t.tp_comm_s, "sequence-parallel all-gather/reduce-scatter, exposed");
  row("FSDP comm (link time)", t.fsdp_comm_s, "all-gather fwd, all-gather + reduce-scatter bwd");
  row("CP comm (link time)", t.cp_link_s, "ring transfers / all-to-alls / gathers");
  row("exposed link time", t.fsdp_exposed_s, "link time not hidden behind compute");
  row("optimizer", t.optimizer_s, "AdamW, 28 B per sharded parameter by HBM bandwidth");
  row("step", t.step_time_s, "");
  out += fmt::format(
      "    {:<32}{:>10.0f}\n    {:<32}{:>9.1f}%  (PaLM convention, causal-halved attention; "
      "full-square PaLM: {:.1f}%)\n",
      "tokens/s per GPU", c.tokens_per_s_per_gpu, "MFU", 100 * c.mfu, 100 * c.mfu_palm);
  return out;
}

int run(const PlanFlags& f) {
  const auto cat = load_catalog(f.hw);
  const auto hw = resolve_hardware(f.hw, cat, DType::BF16);
  auto cm = make_compute_model(f.hw, hw, DType::BF16);
  PlanRequest r;
  r.shape = resolve_shape(f.w);
  if (!f.layers.empty())
    r.shape.layers = static_cast<int>(parse_count("--layers", f.layers, 1, 100000));
  if (!f.vocab.empty())
    r.shape.vocab = static_cast<int>(parse_count("--vocab", f.vocab, 1, 1 << 24));
  if (f.gpus.empty()) throw InputError("--gpus: required (number of devices, 1 .. 1M)");
  r.gpus = parse_count("--gpus", f.gpus, 1, 1 << 20);
  if (f.context.empty() && !f.max_context)
    throw InputError(
        "--context: required (tokens per sequence, e.g. 131072 or 128K), or pass --max-context");
  const auto context =
      f.context.empty() ? kDefaultContextLimit : parse_count("--context", f.context, 1, kMaxTokens);
  r.context = context;
  if (!f.global_batch_tokens.empty()) {
    if (f.max_context)
      throw InputError("--global-batch-tokens: cannot be combined with --max-context");
    r.global_batch_tokens =
        parse_count("--global-batch-tokens", f.global_batch_tokens, 1, kMaxTokens);
  }
  r.checkpointing = parse_checkpointing("--activation-checkpointing", f.checkpointing);
  parse_choice("--optimizer", f.optimizer, {"adamw"});
  r.loss = parse_loss("--loss", f.loss);
  r.causal = f.causal;
  if (!f.cp.empty()) r.cp_degrees = {parse_count("--cp", f.cp, 1, 1 << 20)};
  if (!f.layout.empty()) r.layouts = {parse_layout("--layout", f.layout)};
  if (f.tp == "auto") {
    r.tp_degrees.clear();
    for (int t = 1; t <= hw.gpus_per_node && t <= r.shape.kv_heads; t *= 2)
      if (r.gpus % t == 0 && r.shape.kv_heads % t == 0) r.tp_degrees.push_back(t);
  } else {
    r.tp_degrees = {static_cast<int>(parse_count("--tp", f.tp, 1, 1024))};
  }
  if (!f.hbm.empty())
    r.hbm_bytes = static_cast<double>(parse_count("--hbm", f.hbm, 1 << 20, kMaxTokens));
  const int top = static_cast<int>(parse_count("--top", f.top, 1, 100000));
  const int recheck = static_cast<int>(parse_count("--recheck", f.recheck, 0, 100));
  const double hbm = r.hbm_bytes > 0 ? r.hbm_bytes : hw.hbm_bytes;

  std::optional<MaxContext> mc;
  if (f.max_context) {
    mc = max_context(r, hw, context);
    if (mc->tokens == 0)
      throw InputError(
          fmt::format("--max-context: not even {} tokens fit in {} of HBM with any config",
                      mc->granularity, gb(hbm)));
    r.context = mc->tokens;
  }
  auto configs = search(r, hw, *cm);
  const auto rc = recheck_top(recheck, configs, r, hw, f.hw, *cm);
  const PlanConfig* chosen = nullptr;
  if (!configs.empty()) chosen = &configs.front();

  if (f.json) {
    nlohmann::json j;
    j["model"] = r.shape.name;
    j["params"] = total_params(r.shape);
    j["layers"] = r.shape.layers;
    j["context"] = r.context;
    j["gpus"] = r.gpus;
    j["hardware"] = hw.describe();
    j["hbm_bytes"] = hbm;
    j["checkpointing"] = to_string(r.checkpointing);
    j["optimizer"] = "adamw";
    j["loss"] = to_string(r.loss);
    j["causal"] = r.causal;
    j["global_batch_tokens"] =
        r.global_batch_tokens > 0 ? nlohmann::json(r.global_batch_tokens) : nlohmann::json(nullptr);
    j["engine"] = "analytic";
    j["compute_model"] = cm->name();
    j["configs"] = nlohmann::json::array();
    for (size_t i = 0; i < configs.size(); ++i)
      j["configs"].push_back(config_json(configs[i], static_cast<int>(i + 1), hbm));
    j["recheck"] = {{"status", rc.status}, {"message", rc.message}, {"configs", rc.per_config}};
    if (mc) {
      nlohmann::json by = nlohmann::json::array();
      for (const auto& e : mc->by_config)
        by.push_back({{"label", e.label},
                      {"layout", e.cp == 1 ? "none" : to_string(e.layout)},
                      {"cp", e.cp},
                      {"tp", e.tp},
                      {"max_context", e.max_context},
                      {"granularity", e.granularity},
                      {"limited_by", e.limited_by}});
      j["max_context"] = {{"tokens", mc->tokens},
                          {"granularity", mc->granularity},
                          {"search_limit", context},
                          {"by_config", by}};
    }
    if (f.explain && chosen) j["explain"] = explain(*chosen, hbm);
    std::cout << j.dump(2) << "\n";
    return 0;
  }

  std::string out = header(r, hw, hbm, cm->name());
  if (mc) {
    // The config that ranks first at the longest context, and what stops it one step longer.
    const auto& best = configs.front();
    const MaxContextEntry* at = &mc->by_config.front();
    for (const auto& e : mc->by_config)
      if (e.label == best.label()) at = &e;
    out += fmt::format(
        "\nlongest context that fits: {} tokens ({}), best there: {}; {} more tokens do not fit "
        "(largest term: {})\n",
        mc->tokens, human_tokens(static_cast<double>(mc->tokens)), best.label(), at->granularity,
        at->limited_by);
    out += fmt::format("\n  {:<24}{:>14}  {}\n", "config", "max context",
                       "one step longer: largest term, or the rule");
    int shown = 0;
    for (const auto& e : mc->by_config) {
      if (shown++ >= top) break;
      out += fmt::format("  {:<24}{:>14}  {}\n", e.label, e.max_context, e.limited_by);
    }
    out += fmt::format(
        "\n  (searched in multiples of lcm(1024, 2 cp) tokens up to {}; the ranking below is at {} "
        "tokens)\n",
        context, mc->tokens);
  } else {
    out += fmt::format("  context    {} tokens ({})\n", r.context,
                       human_tokens(static_cast<double>(r.context)));
  }
  out += table(configs, top);
  if (rc.status == "off")
    out +=
        "\nSimGrid re-check: off (pass --recheck N to re-run the top N configs' attention with the "
        "SimGrid engine)\n";
  else if (rc.status == "unavailable")
    out += fmt::format(
        "\nSimGrid re-check: unavailable: {}; every number above is from the analytic engine\n",
        rc.message);
  else {
    out += fmt::format(
        "\nSimGrid re-check ({}): the table above is analytic; with SimGrid's attention:\n",
        rc.message);
    for (const auto& j : rc.per_config) {
      if (j.contains("error")) {
        out += fmt::format("  {:<24}failed: {}\n", j["config"].get<std::string>(),
                           j["error"].get<std::string>());
        continue;
      }
      out += fmt::format(
          "  {:<24}attention {} (analytic {}, {:+.3f}%), step {} (analytic {}), {:.0f} tok/s/GPU, "
          "MFU {:.1f}%\n",
          j["config"].get<std::string>(), seconds(j["attention_s_simgrid"].get<double>()),
          seconds(j["attention_s_analytic"].get<double>()),
          100 * j["attention_rel_diff"].get<double>(),
          seconds(j["step_time_s_simgrid_attention"].get<double>()),
          seconds(j["step_time_s_analytic"].get<double>()),
          j["tokens_per_s_per_gpu_simgrid_attention"].get<double>(),
          100 * j["mfu_simgrid_attention"].get<double>());
    }
  }
  if (f.explain && chosen) out += explain(*chosen, hbm);
  std::cout << out;
  return 0;
}

const CommandRegistrar reg{
    {"plan", 20, [](CLI::App& app, int* code) {
       auto f = std::make_shared<PlanFlags>();
       auto* sub = app.add_subcommand(
           "plan",
           "Capacity planning: which CP degree, layout and block fit, step time, tokens/s, MFU");
       add_model_flags(sub, f->w);
       sub->add_option("--layers", f->layers, "Override the model's depth");
       sub->add_option("--vocab", f->vocab, "Override the model's vocabulary size");
       sub->add_option("--context", f->context,
                       "Tokens per sequence (K/M suffix: 128K, 1M = 1048576); with --max-context, "
                       "the search limit");
       sub->add_option("--gpus", f->gpus, "Devices in the job");
       add_hardware_flags(sub, f->hw);
       sub->add_option("--hbm", f->hbm, "Override HBM bytes per device (K/M/G binary suffix: 95G)");
       sub->add_option("--global-batch-tokens", f->global_batch_tokens,
                       "Tokens per optimizer step (multiple of --context; default: one sequence "
                       "per data-parallel replica)");
       sub->add_option("--activation-checkpointing", f->checkpointing, "none|selective|full")
           ->capture_default_str();
       sub->add_option("--optimizer", f->optimizer, "adamw")->capture_default_str();
       sub->add_option("--loss", f->loss,
                       "eager (fp32 logits of every token) | chunked (4096-token chunks)")
           ->capture_default_str();
       sub->add_option("--cp", f->cp,
                       "Fix the context-parallel degree (default: search powers of two)");
       sub->add_option("--layout", f->layout,
                       "Fix the layout: ring|striped|zigzag|ulysses|allgather|hybrid");
       sub->add_option("--tp", f->tp,
                       "Tensor-parallel degree, or auto (powers of two within a node)")
           ->capture_default_str();
       sub->add_flag("--causal,!--no-causal", f->causal, "Causal mask (default) or full attention");
       sub->add_flag("--max-context", f->max_context, "Search for the longest context that fits");
       sub->add_flag("--explain", f->explain,
                     "Itemised memory and time of the best config (fix one with --cp/--layout)");
       sub->add_option("--top", f->top, "Feasible rows to print")->capture_default_str();
       sub->add_option(
              "--recheck", f->recheck,
              "Re-run the top N configs' attention with the SimGrid engine (child processes)")
           ->capture_default_str();
       sub->add_flag("--json", f->json, "Print one JSON object instead of the table");
       sub->callback([f, code] { *code = run(*f); });
       return sub;
     }}};

}  // namespace
}  // namespace ringsim::cli
