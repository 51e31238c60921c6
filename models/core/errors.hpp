#pragma once
// Errors that come from outside input (flags, files). The CLI prints what() on
// one line and exits 2; library code never exits.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ringsim {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "" if `s` is printable, else why not, naming `key`: names and notes in the
// catalog and profiles are printed, and a control character (a line break, a
// terminal escape) would split a one-line message or drive the terminal.
inline std::string unprintable(std::string_view key, std::string_view s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char buf[80];
      std::snprintf(buf, sizeof buf,
                    "' holds a control character (byte 0x%02x); text must be printable", u);
      std::string why(1, '\'');
      why.append(key).append(buf);
      return why;
    }
  }
  return "";
}

// An error message as the one line it is printed on: messages quote file
// contents (names, keys, paths) that may hold line breaks or terminal control
// codes. Line breaks and tabs become spaces; other control characters print
// as \xNN, so nothing in a file can split the line or drive the terminal.
inline std::string one_line(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ringsim
