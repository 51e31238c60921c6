// causal-balance: ring vs striped vs zigzag under a causal mask (Striped
// Attention, arXiv 2311.09431). With contiguous blocks the device holding the
// end of the sequence does a full block at every step while device 0 idles, so
// a causal ring runs as slowly as a full one; striped and zigzag give every
// device about half a block per step. Upper bound of the speedup:
// (N - 1 + 1/2) / (N / 2) = (2N - 1) / N.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "experiments/runner.hpp"
#include "models/core/parse.hpp"

namespace ringsim::exp {

namespace {

struct Setting {
  std::string name, cluster;
  std::int64_t devices;
  std::vector<std::int64_t> seqs;
};

constexpr const char* kModel = "llama2-7b";
const std::vector<std::string> kLayouts{"ring", "striped", "zigzag"};

// `kernel` "": the device's default implementation (fa2 on A100, pallas on
// TPU v4); "roofline": the model before implementations, for comparison.
proc::RunSpec point(const Context& ctx, const std::string& cluster, std::int64_t n,
                    std::int64_t seq, const std::string& layout, const std::string& scope,
                    const std::string& kernel = "") {
  proc::RunSpec s;
  s.hardware.cluster = cluster;
  s.hardware.kernel = kernel;
  s.workload.devices = n;
  s.workload.block = seq / n;
  s.workload.layout = parse_layout("layout", layout);
  s.workload.model = kModel;
  s.workload.pass = Pass::FwdBwd;
  s.workload.causal = true;
  s.workload.scope = scope == "layer" ? Scope::Layer : Scope::Attention;
  s.sim.engine = engine_of(ctx.engine);
  return s;
}

double bound(std::int64_t n) {
  return (2.0 * static_cast<double>(n) - 1.0) / static_cast<double>(n);
}

void run(const Context& ctx, Output& out) {
  constexpr std::int64_t K = 1024;
  // Striped Attention's two settings: 8 A100 GPUs, 16 TPU v4 chips. 786K in
  // the paper is 786,432 = 768 x 1024 tokens (48K per chip).
  std::vector<Setting> settings(2);
  settings[0] = {"A100 x8", "dgx-a100", 8, {64 * K, 256 * K}};
  settings[1] = {"TPU v4 x16", "tpu-v4-pod", 16, {768 * K}};
  if (!ctx.quick) {
    settings[0].seqs = {32 * K, 64 * K, 128 * K, 256 * K, 512 * K, 1024 * K};
    settings[1].seqs = {64 * K, 128 * K, 256 * K, 512 * K, 768 * K, 1024 * K, 2048 * K};
  }
  // Device-count sweep at a fixed block of 32K tokens per device.
  const std::int64_t sweep_block = 32 * K;
  const std::vector<std::int64_t> sweep_n =
      ctx.quick ? std::vector<std::int64_t>{2, 8} : std::vector<std::int64_t>{2, 4, 8, 16, 32, 64};

  std::vector<proc::RunSpec> pts;
  struct Key {
    std::string setting, cluster, scope, sweep;
    std::int64_t n, seq;
  };
  std::vector<Key> keys;
  for (const auto& s : settings)
    for (auto seq : s.seqs)
      for (const std::string scope : {"attention", "layer"}) {
        keys.push_back({s.name, s.cluster, scope, "sequence", s.devices, seq});
        for (const std::string kernel : {"", "roofline"})
          for (const auto& l : kLayouts)
            pts.push_back(point(ctx, s.cluster, s.devices, seq, l, scope, kernel));
      }
  for (const auto& s : settings)
    for (auto n : sweep_n) {
      keys.push_back({s.name, s.cluster, "attention", "devices", n, n * sweep_block});
      for (const std::string kernel : {"", "roofline"})
        for (const auto& l : kLayouts)
          pts.push_back(point(ctx, s.cluster, n, n * sweep_block, l, "attention", kernel));
    }
  const auto all = run_points(ctx, out, pts, 600);
  // runs[3i + l]: the default implementation; roof[3i + l]: the roofline.
  std::vector<PointRun> runs, roof;
  for (std::size_t i = 0; i < keys.size(); ++i)
    for (std::size_t l = 0; l < 3; ++l) {
      runs.push_back(all[6 * i + l]);
      roof.push_back(all[6 * i + 3 + l]);
    }

  out.data.set_columns({"sweep",
                        "setting",
                        "cluster",
                        "devices",
                        "seq_len",
                        "block",
                        "scope",
                        "engine",
                        "time_ring_s",
                        "time_striped_s",
                        "time_zigzag_s",
                        "speedup_striped",
                        "speedup_zigzag",
                        "bound_2n_minus_1_over_n",
                        "exposed_comm_ring_s",
                        "exposed_comm_striped_s",
                        "efficiency_ring",
                        "efficiency_striped",
                        "efficiency_zigzag",
                        "kernel",
                        "roofline_speedup_striped",
                        "roofline_speedup_zigzag"});
  Panel pa, pl, pn;
  pa.title = "Attention only (forward + backward): speedup over causal ring";
  pl.title = "Whole layer (attention + projections + MLP): speedup over ring";
  pn.title = "Speedup vs devices, 32K tokens per device (attention)";
  pa.x = unit_axis("sequence length (tokens, K = 1024)", "tokens", true, 2);
  pl.x = pa.x;
  pn.x = unit_axis("devices N (count)", "", true, 2);
  // Fitted to each panel's data (no fixed 0.9-2.05): the curves differ by a
  // few percent near the bound, which a range from 1 squashed flat.
  pa.y = unit_axis("speedup = time(ring) / time(layout) (x)", "x");
  pl.y = pa.y;
  pn.y = pa.y;
  std::map<std::string, Series> series;
  auto ser = [&](Panel& p, const std::string& key, const std::string& name,
                 const std::string& color, bool dash, const std::string& marker) -> Series& {
    const std::string id = p.title + "|" + key;
    if (!series.count(id)) {
      Series s = line_series(name, color, dash);
      s.markers = true;
      s.marker = marker;
      series[id] = s;
    }
    return series[id];
  };

  bool in_bound = true, above_one = true;
  double drop_max = 0, zz_gain = 0;  // largest speedup lost to kernel costs; zigzag over striped
  std::string bound_detail, one_detail;
  MdTable cmp({"setting", "sequence", "ours: striped, attention", "ours: striped, layer",
               "ours: zigzag, layer", "roofline before: striped, layer", "published (end-to-end)",
               "rel. diff (layer)", "bound (2N-1)/N"});
  MdTable moved({"setting", "sequence", "scope", "kernel", "striped: roofline -> now",
                 "zigzag: roofline -> now", "efficiency ring / striped / zigzag"});
  MdTable seq_tab({"setting", "sequence", "block", "scope", "ring", "striped", "zigzag",
                   "speedup striped", "speedup zigzag", "bound"});
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto& k = keys[i];
    const auto& r = runs[3 * i];
    const auto& st = runs[3 * i + 1];
    const auto& zz = runs[3 * i + 2];
    if (!r.ok || !st.ok || !zz.ok) continue;
    const double tr = r.s.time_s, ts = st.s.time_s, tz = zz.s.time_s;
    const double ss = tr / ts, sz = tr / tz, b = bound(k.n);
    auto row = out.data.add_row();
    row.set("sweep", k.sweep)
        .set("setting", k.setting)
        .set("cluster", k.cluster)
        .set("devices", k.n)
        .set("seq_len", k.seq)
        .set("block", k.seq / k.n)
        .set("scope", k.scope)
        .set("engine", r.s.engine)
        .set("time_ring_s", tr)
        .set("time_striped_s", ts)
        .set("time_zigzag_s", tz)
        .set("speedup_striped", ss)
        .set("speedup_zigzag", sz)
        .set("bound_2n_minus_1_over_n", b)
        .set("exposed_comm_ring_s", r.s.exposed_comm_s)
        .set("exposed_comm_striped_s", st.s.exposed_comm_s)
        .set("efficiency_ring", r.s.efficiency)
        .set("efficiency_striped", st.s.efficiency)
        .set("efficiency_zigzag", zz.s.efficiency)
        .set("kernel", r.s.kernel);
    if (roof[3 * i].ok && roof[3 * i + 1].ok && roof[3 * i + 2].ok)
      row.set("roofline_speedup_striped", roof[3 * i].s.time_s / roof[3 * i + 1].s.time_s)
          .set("roofline_speedup_zigzag", roof[3 * i].s.time_s / roof[3 * i + 2].s.time_s);
    // 1e-9: the bound is exact only up to rounding of the step times.
    for (double s : {ss, sz}) {
      if (s > b * (1 + 1e-9)) {
        in_bound = false;
        bound_detail += fmt::format("{} N={} seq={} {}: {:.4f} > {:.4f}; ", k.setting, k.n, k.seq,
                                    k.scope, s, b);
      }
      if (!(s > 1)) {
        above_one = false;
        one_detail += fmt::format("{} N={} seq={} {}: {:.4f}; ", k.setting, k.n, k.seq, k.scope, s);
      }
    }
    const double x = k.sweep == "devices" ? static_cast<double>(k.n) : static_cast<double>(k.seq);
    // Colour = layout (the one style table, plot_spec.hpp, as in every
    // experiment); marker and dash = device family (A100 solid circles,
    // TPU v4 dashed diamonds). Where zigzag lies on striped, ringsim-plot
    // names it in the legend.
    const bool tpu = k.cluster.rfind("tpu", 0) == 0;
    const Style& dev = style_for(tpu ? "TPU v4" : "A100");
    Panel& p = k.sweep == "devices" ? pn : (k.scope == "attention" ? pa : pl);
    Series& sst = ser(p, k.setting + "striped", k.setting + ": striped", style_for("striped").color,
                      dev.dash, dev.marker);
    sst.width = 2.4;
    sst.points.push_back({x, ss});
    Series& szz = ser(p, k.setting + "zigzag", k.setting + ": zigzag", style_for("zigzag").color,
                      dev.dash, dev.marker);
    szz.width = 2.4;
    szz.points.push_back({x, sz});
    if (k.sweep == "devices") {
      Series& bs = ser(p, "bound", "bound (2N-1)/N", style_for("bound").color, true, "circle");
      bs.width = 1.5;
      if (!tpu) bs.points.push_back({x, b});
    } else {
      Series& bs = ser(p, k.setting + "bound", fmt::format("bound (2N-1)/N, N = {}", k.n),
                       style_for("bound").color, true, "circle");
      bs.width = tpu ? 2.2 : 1.2;  // N = 16 lies above N = 8: thick vs thin
      bs.points.push_back({x, b});
      if (roof[3 * i].ok && roof[3 * i + 1].ok && roof[3 * i + 2].ok) {
        const double rs = roof[3 * i].s.time_s / roof[3 * i + 1].s.time_s,
                     rz = roof[3 * i].s.time_s / roof[3 * i + 2].s.time_s;
        moved.add({k.setting, tokens_k(k.seq), k.scope, r.s.kernel,
                   fmt::format("{:.3f} -> {:.3f}", rs, ss), fmt::format("{:.3f} -> {:.3f}", rz, sz),
                   fmt::format("{:.0f}% / {:.0f}% / {:.0f}%", 100 * r.s.efficiency,
                               100 * st.s.efficiency, 100 * zz.s.efficiency)});
        drop_max = std::max(drop_max, rs - ss);
        zz_gain = std::max(zz_gain, sz / ss - 1);
      }
      seq_tab.add({k.setting, tokens_k(k.seq), std::to_string(k.seq / k.n), k.scope,
                   human_seconds(tr), human_seconds(ts), human_seconds(tz),
                   fmt::format("{:.3f}", ss), fmt::format("{:.3f}", sz), fmt::format("{:.3f}", b)});
    }
  }
  for (auto& [id, s] : series) {
    if (s.name.rfind("bound", 0) == 0) s.markers = false;
  }

  // Published: Striped Attention (arXiv 2311.09431), abstract: "up to 1.45x
  // end-to-end throughput improvements over the original Ring Attention
  // algorithm on causal transformer training at a sequence length of 256k"
  // (its A100 and TPUv4 experiments) and "on 16 TPUv4 chips ... 1.65x
  // speedups at sequence lengths of 786k".
  struct Published {
    std::string setting;
    std::int64_t seq;
    double speedup;
    std::string where;
  };
  const std::vector<Published> published{
      {"A100 x8", 256 * K, 1.45,
       "abstract: up to 1.45x end-to-end at 256K (A100 and TPUv4 experiments)"},
      {"TPU v4 x16", 768 * K, 1.65, "abstract: 1.65x on 16 TPUv4 chips at 786K"}};
  Series pub = scatter_series("published end-to-end (Striped Attention abstract)",
                              style_for("published").color, style_for("published").marker);
  pub.hollow = true;
  std::string pub_sources;
  for (const auto& p : published) {
    double s_att = 0, s_layer = 0, z_layer = 0, r_layer = 0, b = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto& k = keys[i];
      if (k.sweep != "sequence" || k.setting != p.setting || k.seq != p.seq) continue;
      if (!runs[3 * i].ok || !runs[3 * i + 1].ok || !runs[3 * i + 2].ok) continue;
      const double tr = runs[3 * i].s.time_s;
      (k.scope == "attention" ? s_att : s_layer) = tr / runs[3 * i + 1].s.time_s;
      if (k.scope == "layer") z_layer = tr / runs[3 * i + 2].s.time_s;
      if (k.scope == "layer" && roof[3 * i].ok && roof[3 * i + 1].ok)
        r_layer = roof[3 * i].s.time_s / roof[3 * i + 1].s.time_s;
      b = bound(k.n);
    }
    if (s_layer == 0) continue;  // not in this sweep (quick mode keeps both)
    cmp.add({p.setting, tokens_k(p.seq), fmt::format("{:.3f}", s_att),
             fmt::format("{:.3f}", s_layer), fmt::format("{:.3f}", z_layer),
             r_layer > 0 ? fmt::format("{:.3f}", r_layer) : "-", fmt::format("{:.2f}", p.speedup),
             rel_diff(s_layer, p.speedup), fmt::format("{:.3f}", b)});
    pub.points.push_back({static_cast<double>(p.seq), p.speedup});
    pub_sources += "- " + p.setting + ": " + p.where + "\n";
  }
  for (auto& [id, s] : series)
    if (id.rfind(pa.title, 0) == 0) pa.series.push_back(s);
  for (auto& [id, s] : series)
    if (id.rfind(pl.title, 0) == 0) pl.series.push_back(s);
  pl.series.push_back(pub);
  for (auto& [id, s] : series)
    if (id.rfind(pn.title, 0) == 0) pn.series.push_back(s);

  out.check("speedup <= (2N-1)/N", in_bound,
            in_bound ? "striped and zigzag, every point, attention and layer scope" : bound_detail);
  out.check("speedup > 1", above_one,
            above_one ? "striped and zigzag beat the causal ring at every point" : one_detail);

  out.plot.title =
      "Causal load balance: striped and zigzag vs ring (Llama 2 7B shape, forward + backward)";
  out.plot.columns = 3;
  out.plot.width = 2100;
  out.plot.height = 860;
  pa.legend = pl.legend = pn.legend = "bottom";
  out.plot.panels = {pa, pl, pn};
  out.plot.note = fmt::format(
      "Colour = layout (orange striped, green zigzag; the same in every experiment). A100 x8: "
      "dgx-a100 (NVLink 3 in one node, solid lines, circles); TPU v4 x16: tpu-v4-pod (ICI torus, "
      "dashed lines, diamonds). Grey dashed: the bound (2N-1)/N (thin N = 8, thick N = 16). "
      "Y axes fitted to each panel's data. Engine: {}. Stars: "
      "Striped Attention (arXiv 2311.09431) abstract, end-to-end training throughput.",
      ctx.engine);

  auto& rep = out.report;
  rep += "## Comparison with published values\n\n";
  rep +=
      "Striped Attention (Brandon et al., arXiv 2311.09431) reports end-to-end training throughput "
      "speedups "
      "over Ring Attention in its abstract; these are the only measured numbers from the paper "
      "used here:\n\n" +
      pub_sources + "\n";
  rep +=
      "The abstract does not name the model or the device count behind 1.45x; we compare it with "
      "the 8-GPU A100 "
      "setting at 256K. Our nearest quantity is the whole-layer time (`--scope layer`: attention + "
      "projections + "
      "SwiGLU MLP, forward + backward); it still leaves out the embedding, loss and optimizer, "
      "which Striped "
      "Attention does not speed up either, so ours should sit above the published end-to-end "
      "numbers. The model "
      "shape (Llama 2 7B) is ours, not the paper's. Theoretical bound (Striped Attention, "
      "arXiv 2311.09431, sec. 3): (2N-1)/N, tending to 2.\n\n";
  rep += cmp.str();
  rep += R"(
## What the implementation-aware model moved

Each point also ran with `--kernel roofline` (one rate per device, no tiles, merge, launch or
interference: the model before kernel implementations). Now each device runs its default
implementation (docs/models.md): FlashAttention-2 under PyTorch's context_parallel on A100 (published
curves, 128-row tiles, an eager fp32 merge of the output every step, NCCL taking SMs while a transfer
runs) and the Pallas kernel on TPU v4 (no published curve: the catalog prior; 128 tiles; a fused fp32
merge; DMA transfers, no interference).

)";
  rep += moved.str();
  rep += fmt::format(R"(
- Every speedup fell: by up to {:.3f}. The causal ring's imbalance is unchanged (its last device still
  computes a full block every step), but the balanced layouts now pay what the roofline did not charge:
  causal tiles computed in full along the diagonal, causal and short calls running below a long full
  call's rate, the merge of the output after every step, and compute slowed while NCCL holds SMs.
  Striped pays the most: every one of its steps is a causal call with its diagonal tiles.
- Zigzag now beats striped (by up to {:.1f}%): after its first step it makes full (unmasked) calls of
  c x c/2 or c/2 x c, which run at the full-mask rate, where striped makes a causal c x c call every step.
  The roofline gave both the same time.
- Against the published end-to-end numbers the layer-scope speedups moved toward them; what remains is
  what the layer scope leaves out (embedding, loss, optimizer), the model shape (ours is Llama 2 7B), and
  mechanisms still not modelled. Nothing was fitted to close the gap.
)",
                     drop_max, 100 * zz_gain);
  rep += "\n## Speedup vs sequence length\n\n";
  rep += seq_tab.str();
  rep += R"(
## Reading

- Attention alone stays below the bound (2N-1)/N: the balanced layouts give every device about half a
  block per step, but their steps cost more than half of a full step (tiles, causal rates, merges), while
  the causal ring's slowest device computes a full block at every step but the first.
- The whole-layer speedup is lower and grows with the sequence length, because the projections and MLP
  scale as s (at the device's matmul rate) and are not load-imbalanced, while attention scales as s^2.
)";
}

}  // namespace

Experiment causal_balance_experiment() {
  return {"causal-balance", "Causal load balance: ring vs striped vs zigzag",
          "Speedup of striped and zigzag sharding over the contiguous causal ring vs sequence "
          "length and device "
          "count, in Striped Attention's settings (8 A100 GPUs, 16 TPU v4 chips), against the "
          "bound (2N-1)/N and "
          "the speedups that paper reports.",
          run};
}

}  // namespace ringsim::exp
