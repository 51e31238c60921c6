#pragma once
// Reads a PyTorch profiler trace (Kineto's Chrome-trace JSON, as
// torch.profiler's export_chrome_trace or tensorboard_trace_handler writes it,
// plain or gzip) and ties each GPU kernel to the operator that launched it:
// the kernel's correlation id names its launch (a cuda_runtime event), and
// the launch lies inside the operators open on its CPU thread at that time
// (cpu_op events, nested by time). Only what the attribution needs is kept:
// kernels, launches, operators with their args; python_function events,
// flow arrows and the trace's metadata (environment, pip list) are dropped
// while parsing, so a large trace costs little memory (docs/own-cluster.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ringsim {

// A trace larger than this (uncompressed) is refused before it is read
// whole: a plain file by its size on disk, a gzip file as it inflates.
inline constexpr std::uint64_t kMaxTraceBytes = 1ull << 30;

struct TraceOp {  // a cpu_op (or user_annotation) event
  std::string name;
  double ts = 0, dur = 0;  // microseconds
  std::int64_t pid = 0, tid = 0;
  nlohmann::json args;  // "Input Dims", "Input type", "Concrete Inputs", comms fields
};

struct TraceLaunch {  // a cuda_runtime / cuda_driver event that carries a correlation id
  double ts = 0;
  std::int64_t pid = 0, tid = 0, correlation = 0;
};

struct TraceKernel {
  std::string name;
  double ts = 0, dur = 0;  // microseconds
  std::int64_t device = 0, stream = 0, correlation = -1;
  nlohmann::json args;  // newer PyTorch puts NCCL's message sizes here
};

struct KinetoTrace {
  std::string device_name;  // deviceProperties[0].name ("" when the trace has none)
  int sm_count = 0;
  std::uint64_t device_memory = 0;  // totalGlobalMem, bytes
  std::string runtime, driver;      // cuda_runtime_version / cuda_driver_version
  std::int64_t base_time_ns = 0;    // baseTimeNanoseconds: when it was recorded
  bool record_shapes = false;       // the trace says record_shapes=1
  std::vector<TraceOp> ops;
  std::vector<TraceLaunch> launches;
  std::vector<TraceKernel> kernels;
  std::size_t malformed = 0;  // events kept out: no name, no numeric ts/dur
};

// The file's text, inflated when it starts with the gzip magic. Throws
// InputError naming `flag` and the file: missing, unreadable, over
// `max_bytes`, a truncated or corrupt gzip stream.
std::string read_trace_text(const std::string& path, const std::string& flag,
                            std::uint64_t max_bytes = kMaxTraceBytes);

// Parses the JSON text; throws InputError naming `origin`: not JSON, no
// traceEvents array, no GPU kernel in it.
KinetoTrace parse_kineto_trace(const std::string& text, const std::string& origin);

// For each kernel (index into trace.kernels), the operators that enclosed its
// launch on the launching thread, outermost first (indices into trace.ops);
// empty when the launch is missing or no operator was open.
std::vector<std::vector<std::size_t>> enclosing_ops(const KinetoTrace& trace);

// Kernels that ran while a kernel on another stream of the same device ran:
// their durations include the other's contention for the GPU.
std::vector<bool> overlapped_kernels(const KinetoTrace& trace);

}  // namespace ringsim
