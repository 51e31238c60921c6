#include "cli/complete.hpp"

#include <algorithm>

#include "models/core/catalog.hpp"
#include "models/core/workload.hpp"

namespace ringsim::cli {

namespace {

// Values a flag takes, where they are names: the catalog's, or a fixed list.
std::vector<std::string> flag_values(const std::string& flag) {
  const auto& cat = Catalog::embedded();
  if (flag == "--gpu") return cat.device_names();
  if (flag == "--cluster") return cat.cluster_names();
  if (flag == "--intra" || flag == "--inter") return cat.interconnect_names();
  if (flag == "--kernel") return cat.kernel_names();
  if (flag == "--model") {
    std::vector<std::string> m;
    for (const auto& s : model_shapes()) m.push_back(s.name);
    return m;
  }
  if (flag == "--layout") return {"ring", "striped", "zigzag", "ulysses", "allgather", "hybrid"};
  if (flag == "--pass") return {"fwd", "bwd", "fwdbwd"};
  if (flag == "--dtype") return {"bf16", "fp16", "fp32"};
  if (flag == "--engine") return {"simgrid", "analytic"};
  if (flag == "--platform") return {"flat", "nodes", "torus2d", "torus3d", "fattree"};
  if (flag == "--overlap") return {"full", "none"};
  if (flag == "--variant") return {"auto", "pass-kv", "pass-q"};
  if (flag == "--precision") return {"bf16", "fp8"};
  if (flag == "--framework") return {"pytorch-fsdp", "megatron", "jax-xla"};
  if (flag == "--activation-checkpointing") return {"none", "selective", "full"};
  if (flag == "--tp" || flag == "--pp") return {"auto", "1", "2", "4", "8"};
  return {};
}

}  // namespace

std::vector<std::string> flags_of(const CLI::App& a) {
  std::vector<std::string> out;
  for (const auto* o : a.get_options())
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> completion_words(const CLI::App& app,
                                          const std::vector<std::string>& names,
                                          const std::vector<std::string>& args) {
  if (args.empty()) {
    auto out = names;
    out.push_back("help");
    return out;
  }
  const auto& cmd = args[0];
  if (cmd == "help") return names;
  const auto it = std::find(names.begin(), names.end(), cmd);
  // Flags before any subcommand are run's (the default subcommand).
  const CLI::App* sub = app.get_subcommand(it == names.end() ? std::string("run") : cmd);
  if (args.size() >= 2) return flag_values(args[1]);
  auto out = flags_of(*sub);
  for (const auto& f : flags_of(app)) out.push_back(f);  // --config, --version, --help
  return out;
}

}  // namespace ringsim::cli
