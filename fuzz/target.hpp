#pragma once
// One fuzz target = one function `int ringsim::fuzz::NAME(const uint8_t*, size_t)`.
// Built with RINGSIM_FUZZ_MAIN (fuzz/CMakeLists.txt) the file also defines
// libFuzzer's entry point; without it, tests/fuzz replays the kept corpus and
// every found crash through the same function with the ordinary compiler, so
// a fixed bug stays fixed in every build, not only in the clang fuzz build.
//
// A target returns normally when the input was handled correctly: accepted
// and valid, or refused with one InputError line. Anything else is a finding:
// it calls `finding()`, which aborts so libFuzzer saves the reproducer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace ringsim::fuzz {

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "ringsim fuzz finding: %s\n", what.c_str());
  std::abort();
}

// An InputError's message is what the CLI prints after "ringsim: error: ".
// `one_line`: the reader promises a single line by itself (npy, trace quote
// file bytes carefully); catalog and profile messages quote JSON strings, which
// may hold "\n", and rely on run_cli flattening them (the cli target checks
// what is actually printed).
inline void check_message(const char* target, const std::string& msg, bool one_line) {
  if (msg.empty()) finding(std::string(target) + ": empty error message");
  if (one_line && msg.find('\n') != std::string::npos)
    finding(std::string(target) + ": error message spans lines: " + msg);
}

}  // namespace ringsim::fuzz

#ifdef RINGSIM_FUZZ_MAIN
#define RINGSIM_FUZZ_ENTRY(name)                                                \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* d, std::size_t n) { \
    return ringsim::fuzz::name(d, n);                                           \
  }
#else
#define RINGSIM_FUZZ_ENTRY(name)
#endif
