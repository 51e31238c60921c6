#pragma once
// Reads a small input file (catalog, profile) whole. Refuses what is not a
// regular file - a directory, /dev/zero, a FIFO that never ends - and files
// above `max_bytes`, so a wrong path gives one line instead of a hang or an
// exhausted memory (the .npy and trace readers do the same).
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/core/errors.hpp"

namespace ringsim {

inline std::string read_input_file(const std::string& flag, const std::string& path,
                                   std::uintmax_t max_bytes) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    throw InputError(fmt::format("{}: cannot open '{}'", flag, path));
  if (!std::filesystem::is_regular_file(st))
    throw InputError(fmt::format("{}: '{}' is not a regular file", flag, path));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read '{}': {}", flag, path, ec.message()));
  if (size > max_bytes)
    throw InputError(fmt::format("{}: '{}' is {} bytes, more than the {} MiB such a file can need",
                                 flag, path, size, max_bytes >> 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open '{}'", flag, path));
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace ringsim
