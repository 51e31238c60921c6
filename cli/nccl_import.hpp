#pragma once
// `ringsim hardware --import-nccl-tests FILE... --cluster NAME --out FILE`:
// the user's own nccl-tests outputs as a catalog overlay (docs/own-cluster.md).
#include <string>
#include <vector>

#include "models/core/catalog.hpp"

namespace ringsim::cli {

struct NcclImportFlags {
  std::vector<std::string> files;  // FILE or KIND=FILE
  std::string cluster, out;
  std::string catalog;  // --catalog, an input the overlay may not replace ("" none)
  bool json = false;
};

// Reads every file, writes the overlay to `out` (patch entries for the
// cluster's intra- and inter-node interconnects) and prints what it fitted,
// each measured point replayed through the collectives model with the overlay.
int import_nccl_tests(const NcclImportFlags& f, const Catalog& cat);

}  // namespace ringsim::cli
