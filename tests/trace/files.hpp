#pragma once
// Files for the trace tests: a per-process temporary path and a whole file read
// back, shared by the format and the rules programs.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ringsim::trace {

inline std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("ringsim-trace-" + name + "-" + std::to_string(::getpid()) + ".json"))
      .string();
}

inline std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace ringsim::trace
