#pragma once
// Errors that come from outside input (flags, files). The CLI prints what() on
// one line and exits 2; library code never exits.
#include <stdexcept>
#include <string>

namespace ringsim {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace ringsim
