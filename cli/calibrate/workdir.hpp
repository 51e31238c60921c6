#pragma once
// Whether `ringsim calibrate` may remove its working folder when it ends.
// The report prints commands to re-run each prediction; when the kernel
// profiles were measured by this run (no --profile given) those commands read
// them from the folder, so a temporary folder is removed only when nothing
// printed points into it. The report then says the folder was kept and why.
#include <string>

namespace ringsim::cli::calibrate {

struct WorkdirPolicy {
  bool temporary = false;  // no --workdir: a folder under /tmp
  bool keep_flag = false;  // --keep
  bool probed = false;     // profiles measured into the folder (no --profile)

  bool remove() const { return temporary && !keep_flag && !probed; }
  bool kept() const { return !remove(); }
  // One line for the report; empty when the folder is gone (nothing printed points into it).
  std::string note(const std::string& dir) const {
    if (remove()) return {};
    if (!temporary) return "workdir " + dir + ": profiles and traces of every configuration\n";
    if (keep_flag) return "workdir " + dir + " kept (--keep): profiles and traces\n";
    return "workdir " + dir +
           " kept: the commands above read the kernel profiles measured there (remove it when "
           "done; --workdir DIR chooses the folder, --profile FILE skips the probes)\n";
  }
};

}  // namespace ringsim::cli::calibrate
