#pragma once
// The version of every JSON document ringsim prints (`--json` of run,
// minblock, plan, verify, hardware, infer, experiment, ringsim-mpi, and the
// profile files): the top-level key "schema_version". Raise it when a key is
// renamed, removed or changes meaning; adding a key keeps it. Readers that
// refuse a missing key (RunSummary::from_json) refuse a missing version too.
namespace ringsim {
inline constexpr int kJsonSchemaVersion = 2;
}  // namespace ringsim
