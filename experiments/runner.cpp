#include "experiments/runner.hpp"

#include <fmt/format.h>

#include <ostream>

#include "experiments/child.hpp"
#include "models/errors.hpp"

namespace ringsim::exp {

namespace {
std::string first_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  const auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);  // the last line says why
}
}  // namespace

std::vector<JsonRun> run_json(const Context& ctx, Output& out,
                              const std::vector<std::vector<std::string>>& args, double timeout_s) {
  std::vector<std::vector<std::string>> argvs;
  for (const auto& a : args) {
    std::vector<std::string> v{ctx.ringsim};
    v.insert(v.end(), a.begin(), a.end());
    argvs.push_back(std::move(v));
  }
  const auto results = run_children(argvs, ctx.jobs, timeout_s);
  std::vector<JsonRun> runs(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    auto& run = runs[i];
    run.argv = argvs[i];
    run.argv[0] = "ringsim";
    run.wall_s = r.wall_s;
    if (!r.error.empty()) {
      run.error = r.error;
    } else if (r.timed_out) {
      run.error = fmt::format("timed out after {:.0f} s", timeout_s);
    } else if (r.exit_code != 0) {
      run.error =
          fmt::format("exit {}: {}", r.exit_code, first_line(r.err.empty() ? r.out : r.err));
    } else {
      try {
        run.j = nlohmann::json::parse(r.out);
        run.ok = run.j.is_object();
        if (!run.ok) run.error = "the output is not one JSON object";
      } catch (const nlohmann::json::exception& e) {
        run.error = std::string("unreadable JSON: ") + e.what();
      }
    }
    ++out.points;
    if (!run.ok) {
      ++out.failed_points;
      if (ctx.log)
        *ctx.log << "  failed: " << shell_line(run.argv) << "\n    " << run.error << "\n";
    }
  }
  if (!runs.empty() && out.child_examples.size() < 4)
    out.child_examples.push_back(shell_line(runs.front().argv));
  return runs;
}

std::vector<JsonRun> run_points(const Context& ctx, Output& out,
                                const std::vector<std::vector<std::string>>& flags,
                                const std::string& engine, double timeout_s) {
  std::vector<std::vector<std::string>> args;
  for (const auto& f : flags) {
    std::vector<std::string> a{"run"};
    a.insert(a.end(), f.begin(), f.end());
    a.insert(a.end(), {"--engine", engine, "--json"});
    args.push_back(std::move(a));
  }
  if (ctx.log) *ctx.log << fmt::format("  {} run(s) with --engine {}\n", args.size(), engine);
  return run_json(ctx, out, args, timeout_s);
}

bool has_subcommand(const std::string& ringsim, const std::string& sub) {
  const auto r = run_child({ringsim, sub, "--help"}, 30);
  return r.exit_code == 0 && r.out.find(sub) != std::string::npos;
}

std::pair<std::string, std::string> choose_engine(const std::string& ringsim,
                                                  const std::string& requested) {
  if (requested == "analytic")
    return {"analytic", "analytic closed forms (requested with --engine analytic)"};
  const auto r = run_child({ringsim, "run", "--engine", "simgrid", "--devices", "2", "--block",
                            "256", "--model", "llama2-7b", "--json"},
                           60);
  bool ok = r.exit_code == 0;
  std::string why = ok ? "" : first_line(r.err.empty() ? r.out : r.err);
  if (ok) {
    try {
      const auto j = nlohmann::json::parse(r.out);
      ok = j.value("engine", "") == "simgrid";
      if (!ok) why = "the run did not report engine simgrid";
    } catch (const nlohmann::json::exception&) {
      ok = false;
      why = "unreadable JSON from `ringsim run --engine simgrid`";
    }
  }
  if (ok)
    return {"simgrid",
            "SimGrid discrete-event simulation (`ringsim run --engine simgrid`, one process per "
            "point)"};
  if (requested == "simgrid")
    throw InputError("--engine: simgrid is not available in this build (" + why + ")");
  return {"analytic",
          "analytic closed forms: `ringsim run --engine simgrid` is not available in this build (" +
              why + ")"};
}

double num(const nlohmann::json& j, const std::string& key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace ringsim::exp
