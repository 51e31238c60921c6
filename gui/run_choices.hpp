#pragma once
// The choices of the run panel, from the same catalog and model list that
// `ringsim` itself validates against (models/), so the panel offers only names
// the simulator accepts.
#include <QStringList>

namespace ringsim::gui {

struct RunChoices {
  QStringList layouts, passes, gpus, interconnects, models, kernels;
};

RunChoices run_choices();

}  // namespace ringsim::gui
