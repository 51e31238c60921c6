#include "gui/run_facts.hpp"

#include <cmath>
#include <cstdio>
#include <regex>

namespace ringsim::gui {

namespace {

const RunInfo::Field* number(const RunInfo& run, const std::string& key) {
  const RunInfo::Field* f = run.find(key);
  return f && f->is_number && std::isfinite(f->number) ? f : nullptr;
}

const RunInfo::Field* text(const RunInfo& run, const std::string& key) {
  const RunInfo::Field* f = run.find(key);
  return f && !f->is_number ? f : nullptr;
}

std::string fmt_factor(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// GPUs per node from the summary: a number when a writer states it, else the
// simulator's own words ("2 node(s) x 8 GPUs ...", "..., 8 per node on nvlink4").
int nodes_from(const RunInfo& run) {
  for (const char* k : {"gpus_per_node", "platform.gpus_per_node"})
    if (const auto* f = number(run, k); f && f->number >= 1 && f->number <= 1e6)
      return static_cast<int>(f->number);
  static const std::regex platform_re(R"((\d+) node\(s\) x (\d+) GPUs)");
  static const std::regex hardware_re(R"((\d+) per node)");
  std::smatch m;
  if (const auto* p = text(run, "platform")) {
    // One node, or a flat ring or torus: no node boundary to draw.
    if (std::regex_search(p->text, m, platform_re))
      return std::stoi(m[1]) > 1 ? std::stoi(m[2]) : 0;
    return 0;
  }
  if (const auto* h = text(run, "hardware"); h && std::regex_search(h->text, m, hardware_re))
    return std::stoi(m[1]);
  return 0;
}

// Job mode's rings (summary job.rings, job.ranks_per_ring); bounds as the
// trace reader's device count, so a damaged summary draws no rules.
void read_job(const RunInfo& run, RunFacts& f) {
  const auto* rings = number(run, "job.rings");
  const auto* ranks = number(run, "job.ranks_per_ring");
  if (!rings || !ranks || rings->number < 2 || ranks->number < 1 ||
      rings->number * ranks->number > 1e7)
    return;
  f.rings = static_cast<int>(rings->number);
  f.ranks_per_ring = static_cast<int>(ranks->number);
  if (const auto* s = number(run, "job.slowest_ring"); s && s->number >= 0)
    f.slowest_ring = static_cast<int>(s->number);
  if (const auto* w = text(run, "job.why")) f.job_why = w->text;
}

}  // namespace

RunFacts run_facts(const RunInfo& run) {
  RunFacts f;
  f.has_summary = run.present && !run.summary.empty();
  if (!f.has_summary) return f;
  f.gpus_per_node = nodes_from(run);
  if (const auto* c = number(run, "critical_device"); c && c->number >= 0)
    f.critical_device = static_cast<int>(c->number);
  read_job(run, f);
  // faults.straggler.N.{device,factor}, faults.degrade.N.{link,factor}, faults.jitter.{sigma,seed}
  for (int i = 0; i < 64; ++i) {
    const std::string k = "faults.straggler." + std::to_string(i);
    const auto* d = number(run, k + ".device");
    if (!d) break;
    Fault x;
    x.kind = Fault::Kind::Straggler;
    x.device = static_cast<int>(d->number);
    if (const auto* fa = number(run, k + ".factor")) x.factor = fa->number;
    x.text = "device " + std::to_string(x.device) + " computes x" + fmt_factor(x.factor);
    f.faults.push_back(std::move(x));
  }
  static const std::regex route_re(R"(^(\d+)-(\d+)$)");
  for (int i = 0; i < 64; ++i) {
    const std::string k = "faults.degrade." + std::to_string(i);
    const auto* l = text(run, k + ".link");
    if (!l) break;
    Fault x;
    x.kind = Fault::Kind::Degrade;
    x.link = l->text;
    if (const auto* fa = number(run, k + ".factor")) x.factor = fa->number;
    std::smatch m;
    if (std::regex_match(x.link, m, route_re)) {
      x.from = std::stoi(m[1]);
      x.to = std::stoi(m[2]);
    }
    x.text = "link " + x.link + " bandwidth /" + fmt_factor(x.factor);
    f.faults.push_back(std::move(x));
  }
  if (const auto* s = number(run, "faults.jitter.sigma")) {
    Fault x;
    x.kind = Fault::Kind::Jitter;
    x.factor = s->number;
    if (const auto* seed = number(run, "faults.jitter.seed"))
      x.seed = static_cast<std::uint64_t>(seed->number);
    x.text = "compute jitter sigma " + fmt_factor(x.factor) + ", seed " + std::to_string(x.seed);
    f.faults.push_back(std::move(x));
  }
  if (const auto* t = number(run, "analytic.ttft_s")) {
    f.infer_ttft_us = t->number * 1e6;
    if (const auto* e = number(run, "analytic.attention_exposed_comm_s"))
      f.infer_ring_exposed_us = e->number * 1e6;
    const auto* tp = number(run, "simgrid.tp_comm_s");
    if (!tp) tp = number(run, "analytic.tp_comm_s");
    if (tp) f.infer_tp_us = tp->number * 1e6;
  }
  if (const auto* t = text(run, "verdict.text")) {
    f.has_verdict = true;
    f.verdict_text = t->text;
  }
  if (const auto* h = run.find("verdict.hidden")) {
    f.has_verdict = true;
    f.verdict_hidden = h->is_number ? (h->number != 0 ? "true" : "false") : h->text;
  }
  if (const auto* e = number(run, "verdict.exposed_comm_s"); e && e->number >= 0) {
    f.has_verdict = true;
    f.verdict_exposed_us = e->number * 1e6;
  }
  return f;
}

const Fault* straggler_of(const RunFacts& f, int device) {
  for (const Fault& x : f.faults)
    if (x.kind == Fault::Kind::Straggler && x.device == device) return &x;
  return nullptr;
}

const Fault* degraded_link(const RunFacts& f, int a, int b) {
  for (const Fault& x : f.faults)
    if (x.kind == Fault::Kind::Degrade && x.from >= 0 &&
        ((x.from == a && x.to == b) || (x.from == b && x.to == a)))
      return &x;
  return nullptr;
}

std::string job_line(const RunFacts& f) {
  if (f.rings < 2) return "";
  std::string out =
      "job: " + std::to_string(f.rings) + " rings x " + std::to_string(f.ranks_per_ring) + " ranks";
  if (f.slowest_ring >= 0) out += "; slowest ring " + std::to_string(f.slowest_ring);
  if (!f.job_why.empty()) out += ": " + f.job_why;
  return out;
}

std::string faults_line(const RunFacts& f) {
  std::string out;
  for (const Fault& x : f.faults) out += (out.empty() ? "faults: " : "; ") + x.text;
  return out;
}

}  // namespace ringsim::gui
