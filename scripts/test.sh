#!/usr/bin/env bash
# Set-up (packages + build) then every test: `scripts/test.sh`.
# Tests that need a GPU report SKIPPED with the reason when none is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
# Every test, the documented examples included (those marked `# slow`: full
# sweeps, `experiment all`, calibrate: 253 s at -j2 on 2 shared cores; CTEST_ARGS="-LE docs-slow" skips them).
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${JOBS:-$(nproc)}" ${CTEST_ARGS:-}
