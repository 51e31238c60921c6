// Every command's outputs against every input it reads, as data: each row
// names a program, the arguments that make a valid run, one input flag with a
// valid file for it, and one output flag (or a derived output: sweep --plot P
// writes P.json, P.png and P.svg). The output is pointed at the input's own path.
// Every row must be refused before any work, with one line naming both flags'
// roles ("is the --X input"), exit 2, and the input left byte for byte as it
// was (models/core/input_file.hpp: check_outputs, the one rule every writer
// calls). A program this build left out says SKIPPED and why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace fs = std::filesystem;

namespace {

struct Row {
  std::string program;            // ringsim, ringsim-gui, ringsim-plot, ringsim-mpi
  std::vector<std::string> args;  // a valid run without the two paths
  std::string input_flag;         // "" for a positional input (placed first)
  std::string input_file;         // copied to the scratch dir as `in` + its extension
  std::string output_flag;        // "" for a positional output (placed after the input)
  std::string output_suffix;      // derived outputs: the path given is `in` minus this
  std::string role;               // the input's name in the refusal
  std::string as;                 // the input's extension where the output needs its own
  std::string prefix;             // before the input's path in its flag's value (KIND=)
};

std::string data(const std::string& name) {
  return std::string(RINGSIM_CLI_DATA) + "/" + name;
}
std::string source(const std::string& path) {
  return std::string(RINGSIM_SOURCE_DIR) + "/" + path;
}

// Files made for rows whose input has no file in tests/cli/data. Every test
// process of this suite writes them (ctest runs each row as its own process,
// two at a time in CI), so each is written under a name of this process and
// renamed into place: a row that is reading the file sees the whole file, never
// one another process has just truncated.
std::string written(const std::string& name, const std::string& text) {
  const auto p = fs::path(::testing::TempDir()) / ("ringsim_oi_src_" + name);
  const auto mine = fs::path(p.string() + "." + std::to_string(::getpid()));
  std::ofstream(mine) << text;
  fs::rename(mine, p);
  return p.string();
}

std::vector<Row> rows() {
  const auto lengths = written("lengths.txt", "64\n64\n");
  const auto runs = written("runs.csv",
                            "id,command,args,metric,value\n"
                            "mine,plan,--model llama3-8b --context 8K --gpus 8 --cp 1,"
                            "model_tflops_per_gpu,400\n");
  const auto grid = written("grid.json", "{\"axes\": {\"--devices\": [2, 4]}}\n");
  const auto trace = written("trace.json", "");  // replaced below by a real run's trace
  const std::vector<std::string> sim{"--devices", "4", "--block", "64", "--engine", "simgrid"};
  const std::vector<std::string> infer{"infer", "--context", "16K",    "--gpus",
                                       "2",     "--engine",  "simgrid"};
  const std::vector<std::string> verify{"verify",  "--devices", "2",          "--block", "64",
                                        "--heads", "2",         "--head-dim", "16"};
  const std::vector<std::string> sweep{"sweep", "--devices", "2,4",     "--block",
                                       "64",    "--engine",  "analytic"};
  std::vector<Row> r;
  // run: its two outputs over every input it reads.
  for (const auto& out : {"--trace", "--csv"}) {
    r.push_back({"ringsim", sim, "--config", data("config-good.toml"), out, "", "--config"});
    r.push_back({"ringsim", sim, "--catalog", data("catalog-good.json"), out, "", "--catalog"});
    r.push_back({"ringsim", sim, "--profile", data("profile-good.json"), out, "", "--profile"});
    r.push_back({"ringsim", sim, "--calibration", source("models/data/calibration.json"), out, "",
                 "--calibration"});
    r.push_back({"ringsim", sim, "--documents", lengths, out, "", "--documents"});
  }
  // infer's trace.
  for (const auto& [flag, file] : std::vector<std::pair<std::string, std::string>>{
           {"--catalog", data("catalog-good.json")},
           {"--profile", data("profile-good.json")},
           {"--calibration", source("models/data/calibration.json")}})
    r.push_back({"ringsim", infer, flag, file, "--trace", "", flag});
  // verify: O and LSE over the tensors and the documents.
  for (const auto& out : {"--out", "--lse-out"}) {
    for (const auto& t : {"--q", "--k", "--v"})
      r.push_back({"ringsim", {"verify"}, t, data(std::string(t).substr(2) + ".npy"), out, "", t});
    r.push_back({"ringsim", verify, "--documents", lengths, out, "", "--documents"});
  }
  // sweep: the journal, its CSV and trace flags, and the plot's derived files.
  for (const auto& [flag, file] : std::vector<std::pair<std::string, std::string>>{
           {"--grid", grid},
           {"--catalog", data("catalog-good.json")},
           {"--calibration", source("models/data/calibration.json")},
           {"--documents", lengths}}) {
    auto args = flag == "--grid"
                    ? std::vector<std::string>{"sweep", "--engine", "analytic", "--block", "64"}
                    : sweep;
    // The journal must be named .jsonl or .csv: the input takes that name.
    r.push_back({"ringsim", args, flag, file, "--out", "", flag, ".jsonl"});
    args.insert(args.end(), {"--out", "rows.jsonl"});
    r.push_back({"ringsim", args, flag, file, "--plot", ".json", flag});
    r.push_back({"ringsim", args, flag, file, "--plot", ".png", flag});
    r.push_back({"ringsim", args, flag, file, "--plot", ".svg", flag});
  }
  // validate and calibrate: their outputs over the runs they score or fit.
  for (const auto& out : {"--csv", "--fit", "--error-bands"})
    r.push_back({"ringsim", {"validate"}, "--cases", runs, out, "", "--cases"});
  // The plot's extension names its format.
  r.push_back({"ringsim", {"validate"}, "--cases", runs, "--plot", "", "--cases", ".svg"});
  r.push_back({"ringsim", {"calibrate"}, "--runs", runs, "--out", "", "--runs"});
  // profile from a trace; the nccl-tests import.
  r.push_back({"ringsim",
               {"profile", "--gpu", "h100-sxm"},
               "--from-trace",
               std::string(RINGSIM_TRACES_DATA) + "/h100-qwen1.5-0.5b-chat.json.gz",
               "--out",
               "",
               "--from-trace"});
  r.push_back({"ringsim",
               {"hardware", "--cluster", "dgx-h100"},
               "--import-nccl-tests",
               data("nccl-run.txt"),
               "--out",
               "",
               "--import-nccl-tests",
               "",
               "all_reduce="});
  // ... and its overlay over the catalog it reads.
  r.push_back({"ringsim",
               {"hardware", "--cluster", "dgx-h100", "--import-nccl-tests",
                "all_reduce=" + data("nccl-run.txt")},
               "--catalog",
               data("catalog-good.json"),
               "--out",
               "",
               "--catalog"});
  // The other programs: the GUI's screenshot over its trace, the plot over its spec.
  r.push_back({"ringsim-gui", {}, "", trace, "--screenshot", "", "TRACE"});
  r.push_back({"ringsim-plot", {}, "", written("spec.json", "{}"), "", "", "SPEC.json"});
  for (const auto& t : {"--q", "--k", "--v"}) {
    std::vector<std::string> args{"--block", "64"};
    for (const auto& other : {"--q", "--k", "--v"})
      if (std::string(other) != t)
        args.insert(args.end(), {other, data(std::string(other).substr(2) + ".npy")});
    r.push_back(
        {"ringsim-mpi", args, t, data(std::string(t).substr(2) + ".npy"), "--trace", "", t});
  }
  return r;
}

std::string program_path(const std::string& name) {
  if (name == "ringsim") return RINGSIM_BIN;
  if (name == "ringsim-gui") return RINGSIM_GUI_BIN;
  if (name == "ringsim-plot") return RINGSIM_PLOT_BIN;
  if (name == "ringsim-mpi") return RINGSIM_MPI_BIN;
  return "";
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string describe(const Row& row) {
  std::string s = row.program;
  for (const auto& a : row.args) s += " " + a;
  return s + " " + (row.input_flag.empty() ? "<input>" : row.input_flag) + " IN " +
         (row.output_flag.empty() ? "<output>" : row.output_flag) + " IN" +
         (row.output_suffix.empty() ? "" : " minus " + row.output_suffix);
}

class OutputsOverInputs : public ::testing::TestWithParam<std::size_t> {};

TEST_P(OutputsOverInputs, RefusedBeforeAnyWorkAndTheInputKept) {
  const auto all = rows();
  const auto& row = all.at(GetParam());
  const auto bin = program_path(row.program);
  if (bin.empty())
    GTEST_SKIP() << "SKIPPED: " << row.program << " is not built in this configuration";
  const auto dir = fs::path(::testing::TempDir()) / ("ringsim_oi_" + std::to_string(GetParam()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // The trace the GUI reads: a real run's, so only the path can refuse it.
  auto from = row.input_file;
  if (row.program == "ringsim-gui") {
    ringsim::proc::Command t;
    t.argv = {RINGSIM_BIN, "--devices", "4", "--block", "64", "--trace", (dir / "t.json").string()};
    ASSERT_EQ(ringsim::proc::run(t).exit_code, 0);
    from = (dir / "t.json").string();
  }
  auto ext = fs::path(from).extension().string();
  if (from.ends_with(".json.gz")) ext = ".json.gz";
  if (!row.output_suffix.empty()) ext = row.output_suffix;
  if (!row.as.empty()) ext = row.as;
  const auto in = dir / ("in" + ext);
  fs::copy_file(from, in, fs::copy_options::overwrite_existing);
  const auto before = slurp(in);
  auto out = in.string();
  if (!row.output_suffix.empty()) out.resize(out.size() - row.output_suffix.size());

  ringsim::proc::Command c;
  c.argv = {bin};
  if (row.input_flag.empty()) c.argv.push_back(in.string());
  c.argv.insert(c.argv.end(), row.args.begin(), row.args.end());
  if (!row.input_flag.empty())
    c.argv.insert(c.argv.end(), {row.input_flag, row.prefix + in.string()});
  if (row.output_flag.empty())
    c.argv.push_back(out);
  else
    c.argv.insert(c.argv.end(), {row.output_flag, out});
  c.cwd = dir.string();
  c.env = {"QT_QPA_PLATFORM=offscreen"};
  // OpenMPI's MPI_Init leaks by design: LeakSanitizer would fail a correct
  // refusal in the sanitizer build (the MPI tests turn it off the same way).
  if (row.program == "ringsim-mpi") c.env.push_back("ASAN_OPTIONS=detect_leaks=0:abort_on_error=1");
  c.timeout_s = 120;
  const auto r = ringsim::proc::run(c);
  const auto what = describe(row);
  EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n" << r.err;
  EXPECT_NE(r.err.find("is the " + row.role + " input"), std::string::npos) << what << "\n"
                                                                            << r.err;
  EXPECT_EQ(slurp(in), before) << what << ": the input was changed";
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, OutputsOverInputs,
                         ::testing::Range(std::size_t{0}, rows().size()));

}  // namespace
