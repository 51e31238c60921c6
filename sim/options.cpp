#include "sim/options.hpp"

namespace ringsim::sim {

const std::vector<std::string>& network_model_names() {
  static const std::vector<std::string> n{"exact", "lv08"};
  return n;
}
std::string to_string(NetworkModel m) {
  return network_model_names()[static_cast<int>(m)];
}

const std::vector<std::string>& symmetry_names() {
  static const std::vector<std::string> n{"auto", "on", "off"};
  return n;
}
std::string to_string(Symmetry s) {
  return symmetry_names()[static_cast<int>(s)];
}

const std::vector<std::string>& recurrence_names() {
  static const std::vector<std::string> n{"auto", "on", "off"};
  return n;
}
std::string to_string(Recurrence r) {
  return recurrence_names()[static_cast<int>(r)];
}

}  // namespace ringsim::sim
