#!/usr/bin/env bash
# Set-up (packages + build) then every test: `scripts/test.sh`.
# Tests that need a GPU report SKIPPED with the reason when none is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
# The documented examples marked `# slow` (full sweeps, `experiment all`,
# calibrate: about 40 minutes on 2 cores) are left to
# `ctest --test-dir build -L docs-slow`; CTEST_ARGS replaces this choice.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${JOBS:-$(nproc)}" ${CTEST_ARGS:--LE docs-slow}
