#include "gui/run_choices.hpp"

#include "models/core/catalog.hpp"
#include "models/core/workload.hpp"

namespace ringsim::gui {

namespace {
QStringList to_list(const std::vector<std::string>& v) {
  QStringList out;
  for (const auto& s : v) out << QString::fromStdString(s);
  return out;
}
}  // namespace

RunChoices run_choices() {
  RunChoices c;
  try {
    c.layouts = to_list(layout_names());
    c.passes = to_list(pass_names());
    const Catalog& cat = Catalog::embedded();
    c.gpus = to_list(cat.device_names());
    c.interconnects = to_list(cat.interconnect_names());
    c.kernels = to_list(cat.kernel_names());
    for (const ModelShape& m : model_shapes()) c.models << QString::fromStdString(m.name);
  } catch (const std::exception&) {
    // The embedded data is checked by the models tests; if it ever fails to
    // load, the panel still works with free-text entries.
  }
  return c;
}

}  // namespace ringsim::gui
