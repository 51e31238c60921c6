// Attention, GEMM and NCCL calls from a Kineto trace: see trace_calls.hpp.
#include "models/core/trace_calls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <regex>

#include "models/core/errors.hpp"

namespace ringsim {
namespace {

// Where an attention operator keeps its shapes and mask: argument positions
// in its ATen schema (aten/src/ATen/native/native_functions.yaml; the
// flash-attn package's torch.library ops for flash_attn::*). `bhsd`: q is
// [batch, heads, seq, dim] (the SDPA front ends); else [batch, seq, heads, dim].
// `mask_int`: the mask is xFormers' custom_mask_type (0 none, 1 and 2 causal).
struct AttentionSignature {
  const char* op;
  bool backward;
  int q, k;
  bool bhsd;
  int causal;
  bool mask_int = false;
};

const std::vector<AttentionSignature>& attention_signatures() {
  static const std::vector<AttentionSignature> s = {
      {"aten::_flash_attention_forward", false, 0, 1, false, 8},
      {"aten::_flash_attention_backward", true, 1, 2, false, 11},
      {"aten::_scaled_dot_product_flash_attention", false, 0, 1, true, 4},
      {"aten::_scaled_dot_product_flash_attention_backward", true, 1, 2, true, 11},
      {"aten::_scaled_dot_product_efficient_attention", false, 0, 1, true, 6},
      {"aten::_scaled_dot_product_efficient_attention_backward", true, 1, 2, true, 11},
      {"aten::_scaled_dot_product_cudnn_attention", false, 0, 1, true, 6},
      {"aten::_scaled_dot_product_cudnn_attention_backward", true, 1, 2, true, 14},
      {"aten::_efficient_attention_forward", false, 0, 1, false, 9, true},
      {"aten::_efficient_attention_backward", true, 1, 2, false, 14, true},
      {"flash_attn::_flash_attn_forward", false, 0, 1, false, 5},
      {"flash_attn::_flash_attn_backward", true, 1, 2, false, 11},
  };
  return s;
}

// GEMM operators: positions of A ([.., m, k]) and B ([.., k, n]).
struct GemmSignature {
  const char* op;
  int a, b;
};

const std::vector<GemmSignature>& gemm_signatures() {
  static const std::vector<GemmSignature> s = {
      {"aten::mm", 0, 1},      {"aten::addmm", 1, 2},      {"aten::bmm", 0, 1},
      {"aten::baddbmm", 1, 2}, {"aten::_scaled_mm", 0, 1},
  };
  return s;
}

bool is_comm_op(const std::string& name) {
  return name == "record_param_comms" || name.rfind("nccl:", 0) == 0 ||
         name.rfind("c10d::", 0) == 0;
}

const AttentionSignature* attention_signature(const std::string& op) {
  for (const auto& s : attention_signatures())
    if (op == s.op) return &s;
  return nullptr;
}

const GemmSignature* gemm_signature(const std::string& op) {
  for (const auto& s : gemm_signatures())
    if (op == s.op) return &s;
  return nullptr;
}

std::optional<std::vector<std::int64_t>> dims(const nlohmann::json& args, int i) {
  const auto it = args.find("Input Dims");
  if (it == args.end() || !it->is_array() || i >= static_cast<int>(it->size())) return {};
  const auto& d = (*it)[static_cast<std::size_t>(i)];
  if (!d.is_array() || d.empty()) return {};
  std::vector<std::int64_t> out;
  for (const auto& x : d) {
    // Positive and within int32: shapes multiply (batch x heads, m x n x k)
    // in 64 bits, and a head dim is an int.
    if (!x.is_number_integer() || x.get<std::int64_t>() <= 0 ||
        x.get<std::int64_t>() > std::int64_t{INT32_MAX})
      return {};
    out.push_back(x.get<std::int64_t>());
  }
  return out;
}

std::string input_type(const nlohmann::json& args, int i) {
  const auto it = args.find("Input type");
  if (it == args.end() || !it->is_array() || i >= static_cast<int>(it->size()) ||
      !(*it)[static_cast<std::size_t>(i)].is_string())
    return "";
  const auto t = (*it)[static_cast<std::size_t>(i)].get<std::string>();
  if (t == "c10::BFloat16") return "bf16";
  if (t == "c10::Half") return "fp16";
  if (t == "float") return "fp32";
  if (t.find("Float8") != std::string::npos) return "fp8";
  return "";
}

// The i-th concrete input as text ("True", "1"); nullopt when not recorded.
std::optional<std::string> concrete(const nlohmann::json& args, int i) {
  const auto it = args.find("Concrete Inputs");
  if (it == args.end() || !it->is_array() || i >= static_cast<int>(it->size()) ||
      !(*it)[static_cast<std::size_t>(i)].is_string())
    return {};
  const auto v = (*it)[static_cast<std::size_t>(i)].get<std::string>();
  if (v.empty()) return {};
  return v;
}

}  // namespace

std::uint64_t AttentionCall::entries() const {
  const auto bh = static_cast<std::uint64_t>(batch) * static_cast<std::uint64_t>(heads);
  if (causal && q_len == k_len)
    return bh * static_cast<std::uint64_t>(q_len) * static_cast<std::uint64_t>(q_len + 1) / 2;
  return bh * static_cast<std::uint64_t>(q_len) * static_cast<std::uint64_t>(k_len);
}

double CollectiveCall::busbw() const {
  return seconds > 0 ? bus_factor(kind, ranks) * bytes / seconds : 0;
}

std::string short_kernel_name(const std::string& name) {
  std::string s = name;
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  const auto cut = s.find_first_of("<(");
  if (cut != std::string::npos) s = s.substr(0, cut);
  if (s.size() > 120) {
    // Cut at a character's start: half a UTF-8 sequence is not text (and
    // not JSON the writer could dump).
    std::size_t at = 120;
    while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
    s.resize(at);
  }
  return one_line(s);
}

namespace {

bool attention_like(const std::string& kernel) {
  static const std::regex re("flash|fmha|attention|attn|sdpa", std::regex::icase);
  return std::regex_search(kernel, re);
}

bool nccl_kernel(const std::string& kernel) {
  return kernel.find("nccl") != std::string::npos;
}

std::optional<AttentionCall> attention_call(const TraceOp& op, const AttentionSignature& s,
                                            std::string* why) {
  const auto q = dims(op.args, s.q), k = dims(op.args, s.k);
  if (!q || !k) {
    *why = "attention without shapes (profile with record_shapes=True)";
    return {};
  }
  if (q->size() != 4 || k->size() != 4) {
    *why = "attention on packed sequences (varlen: the documents' lengths are not in the trace)";
    return {};
  }
  AttentionCall c;
  c.op = op.name;
  c.backward = s.backward;
  c.dtype = input_type(op.args, s.q);
  const int seq = s.bhsd ? 2 : 1, head = s.bhsd ? 1 : 2;
  c.batch = (*q)[0];
  c.heads = (*q)[static_cast<std::size_t>(head)];
  c.kv_heads = (*k)[static_cast<std::size_t>(head)];
  c.q_len = (*q)[static_cast<std::size_t>(seq)];
  c.k_len = (*k)[static_cast<std::size_t>(seq)];
  c.head_dim = static_cast<int>((*q)[3]);
  const auto mask = concrete(op.args, s.causal);
  if (!mask) {
    *why = "attention whose mask is not recorded (no Concrete Inputs: PyTorch before 2.2)";
    return {};
  }
  if (s.mask_int)
    c.causal = *mask != "0";
  else if (*mask == "True" || *mask == "False")
    c.causal = *mask == "True";
  else {
    *why = "attention whose mask is not True or False in the trace";
    return {};
  }
  if (c.dtype.empty()) {
    *why = "attention in a dtype ringsim does not profile";
    return {};
  }
  return c;
}

std::optional<GemmCall> gemm_call(const TraceOp& op, const GemmSignature& s, std::string* why) {
  const auto a = dims(op.args, s.a), b = dims(op.args, s.b);
  if (!a || !b || a->size() < 2 || b->size() < 2 || a->size() != b->size() || a->size() > 3) {
    *why = "GEMM without shapes (profile with record_shapes=True)";
    return {};
  }
  GemmCall g;
  g.op = op.name;
  g.dtype = input_type(op.args, s.a);
  const auto n = a->size();
  g.m = (*a)[n - 2];
  g.k = (*a)[n - 1];
  g.n = (*b)[n - 1];
  if (n == 3) g.batch = (*a)[0];
  if ((*b)[n - 2] != g.k) {
    *why = "GEMM whose shapes do not chain (A's k is not B's)";
    return {};
  }
  return g;
}

std::optional<MeasuredKind> collective_kind(const std::string& text) {
  std::string s;
  for (const char c : text)
    if (c != '_') s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.find("allreduce") != std::string::npos) return MeasuredKind::AllReduce;
  if (s.find("allgather") != std::string::npos) return MeasuredKind::AllGather;
  if (s.find("reducescatter") != std::string::npos) return MeasuredKind::ReduceScatter;
  if (s.find("alltoall") != std::string::npos) return MeasuredKind::AllToAll;
  if (s.find("sendrecv") != std::string::npos || s == "send" || s == "recv")
    return MeasuredKind::SendRecv;
  return {};
}

double element_bytes(const std::string& dtype) {
  if (dtype == "Float" || dtype == "Int") return 4;
  if (dtype == "BFloat16" || dtype == "Half") return 2;
  if (dtype == "Double" || dtype == "Long") return 8;
  if (dtype == "Byte" || dtype == "Char" || dtype == "Bool" || dtype.find("Float8") == 0) return 1;
  return 0;
}

// Message sizes: on the kernel (PyTorch 2.1+), else on the record_param_comms
// operator that launched it.
std::optional<CollectiveCall> collective_call(const TraceKernel& k, const TraceOp* op,
                                              std::string* why) {
  const auto has = [](const nlohmann::json& a) { return a.contains("In msg nelems"); };
  const nlohmann::json* args = has(k.args) ? &k.args : (op && has(op->args) ? &op->args : nullptr);
  const auto named =
      args && args->contains("Collective name") && (*args)["Collective name"].is_string()
          ? collective_kind((*args)["Collective name"].get<std::string>())
          : std::nullopt;
  const auto kind = named ? named : collective_kind(short_kernel_name(k.name));
  if (!kind) {
    *why = "NCCL collective ringsim does not model (broadcast, reduce)";
    return {};
  }
  if (!args) {
    *why = "NCCL kernel without message sizes (PyTorch before 2.1, or record_shapes=False)";
    return {};
  }
  const auto num = [args](const char* key) {
    const auto it = args->find(key);
    return it != args->end() && it->is_number() ? it->get<double>() : 0.0;
  };
  const auto dtype = args->find("dtype");
  const double elem =
      dtype != args->end() && dtype->is_string() ? element_bytes(dtype->get<std::string>()) : 0;
  const double group = num("Group size");
  const double in = num("In msg nelems"), out = num("Out msg nelems");
  // A group beyond a million ranks is no NCCL communicator (and no int).
  const int ranks = group >= 1 && group <= 1e6 ? static_cast<int>(group) : 0;
  if (elem <= 0 || ranks < 1 || !(in > 0 || out > 0) || !std::isfinite(in) || !std::isfinite(out)) {
    *why = "NCCL kernel without message sizes (PyTorch before 2.1, or record_shapes=False)";
    return {};
  }
  CollectiveCall c;
  c.kind = *kind;
  c.kernel = short_kernel_name(k.name);
  c.ranks = ranks;
  // nccl-tests' size: the whole buffer (all-gather's output, reduce-scatter's input).
  c.bytes =
      elem * (*kind == MeasuredKind::AllGather ? std::max(in * ranks, out) : std::max(in, out));
  c.seconds = k.dur * 1e-6;
  return c;
}

const TraceOp* innermost(const KinetoTrace& t, const std::vector<std::size_t>& stack,
                         bool (*pick)(const std::string&)) {
  for (auto it = stack.rbegin(); it != stack.rend(); ++it)
    if (pick(t.ops[*it].name)) return &t.ops[*it];
  return nullptr;
}

bool modelled_op(const std::string& n) {
  return attention_signature(n) != nullptr || gemm_signature(n) != nullptr;
}

}  // namespace

TraceCalls trace_calls(const KinetoTrace& t) {
  const auto enclosing = enclosing_ops(t);
  const auto overlapped = overlapped_kernels(t);
  TraceCalls out;
  const auto miss = [&out](const std::string& why, const std::string& key, double seconds) {
    auto& u = out.unattributed[why][key];
    ++u.count;
    u.seconds += seconds;
  };
  std::map<const TraceOp*, std::vector<std::size_t>> by_op;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    ++out.kernels;
    out.kernel_seconds += k.dur * 1e-6;
    std::string why;
    if (nccl_kernel(k.name)) {
      if (auto c = collective_call(k, innermost(t, enclosing[i], is_comm_op), &why))
        out.collectives.push_back(*c);
      else
        miss(why, short_kernel_name(k.name), k.dur * 1e-6);
    } else if (const auto* op = innermost(t, enclosing[i], modelled_op)) {
      by_op[op].push_back(i);
    } else if (enclosing[i].empty()) {
      miss("launched outside any recorded operator (no launch event, or a CUDA graph replay)",
           short_kernel_name(k.name), k.dur * 1e-6);
    } else {
      const auto& inner = t.ops[enclosing[i].back()].name;
      if (attention_like(short_kernel_name(k.name)))
        miss("attention under an operator ringsim does not read", one_line(inner), k.dur * 1e-6);
      else
        miss("other operators (not attention, GEMM or NCCL)", one_line(inner), k.dur * 1e-6);
    }
  }
  for (const auto& [op, kernels] : by_op) {
    double seconds = 0, longest = -1;
    bool over = false;
    std::string name;
    for (const auto i : kernels) {
      seconds += t.kernels[i].dur * 1e-6;
      over = over || overlapped[i];
      if (t.kernels[i].dur > longest) {
        longest = t.kernels[i].dur;
        name = short_kernel_name(t.kernels[i].name);
      }
    }
    std::string why;
    if (const auto* s = attention_signature(op->name)) {
      if (auto c = attention_call(*op, *s, &why)) {
        c->kernel = name, c->seconds = seconds, c->overlapped = over;
        out.attention.push_back(*c);
        continue;
      }
    } else if (auto g = gemm_call(*op, *gemm_signature(op->name), &why)) {
      g->kernel = name, g->seconds = seconds, g->overlapped = over;
      out.gemm.push_back(*g);
      continue;
    }
    miss(why, one_line(op->name), seconds);
  }
  return out;
}

}  // namespace ringsim
