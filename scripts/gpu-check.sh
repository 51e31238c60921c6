#!/usr/bin/env bash
# scripts/gpu-check.sh OUTDIR
#   On a machine with an NVIDIA GPU: build the CUDA kernels (Release, sm_90 unless
#   RINGSIM_CUDA_ARCH says otherwise), run the GPU tests, the CUDA profile and the
#   kernel benchmark, and leave everything in OUTDIR. Needs no network. Each step
#   has a time limit; a failed step is recorded and the rest still run. Budget: 8 min.
# scripts/gpu-check.sh --prepare-deps DIR
#   On a Debian machine with the project's packages: copy GoogleTest's sources and
#   nlohmann_json's headers to DIR (default .gpudeps), for GPU machines without them
#   (carry DIR along; the standalone build finds it at the repository root).
#
# OUTDIR receives at most 8 files, since the device tool returns no more:
#   summary.txt  tests.log  bench.json  profile-cuda.json  bench.log  build.log
#   env.txt  gpu-check.tar.gz (every log, both nvidia-smi reports, the SASS summary)
# Environment: RINGSIM_CUDA_ARCH (90), RINGSIM_JOBS (16), RINGSIM_GPU_BUILD (build dir),
# RINGSIM_GPU_CHECK_BUDGET (470 s), RINGSIM_GPU_CHECK_MODE=standalone (skip the full
# project), RINGSIM_STANDALONE_CMAKE_ARGS (extra cmake flags for the standalone build).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [[ "${1:-}" == "--prepare-deps" ]]; then
  DEPS=${2:-$ROOT/.gpudeps}
  mkdir -p "$DEPS/include"
  cp -r /usr/src/googletest "$DEPS/googletest"
  cp -r /usr/include/nlohmann "$DEPS/include/nlohmann"
  grep -qx '/.gpudeps/' "$ROOT/.git/info/exclude" 2>/dev/null ||
    echo '/.gpudeps/' >>"$ROOT/.git/info/exclude"
  echo "gpu-check: dependencies copied to $DEPS ($(du -sh "$DEPS" | cut -f1))"
  exit 0
fi

if [[ $# -ne 1 ]]; then
  echo "usage: scripts/gpu-check.sh OUTDIR | --prepare-deps [DIR]" >&2
  exit 2
fi
mkdir -p "$1"
OUTDIR=$(cd "$1" && pwd)
WORK=$(mktemp -d /tmp/ringsim-gpu-check.XXXXXX)
BUILD=${RINGSIM_GPU_BUILD:-$ROOT/build-gpu-check}
ARCH=${RINGSIM_CUDA_ARCH:-90}
JOBS=${RINGSIM_JOBS:-16}
T0=$(date +%s)
declare -a SUMMARY=()
FAILED=0

BUDGET=${RINGSIM_GPU_CHECK_BUDGET:-470}  # seconds for everything, under the 8 minutes

# step [-a] NAME LIMIT_S CMD...: runs CMD (a command or one of the functions below)
# in a child bash with `set -euo pipefail`, output to $WORK/NAME.log, limited to
# LIMIT_S and to what is left of the budget. -a: advisory, a failure does not fail
# the whole check (sanitizers, the CLI path).
step() {
  local advisory=0
  if [[ $1 == -a ]]; then
    advisory=1
    shift
  fi
  local name=$1 limit=$2
  shift 2
  local left=$((BUDGET - ($(date +%s) - T0)))
  if ((left < 10)); then
    SUMMARY+=("$(printf '%-14s %-18s' "$name" "SKIPPED (no time)")")
    ((advisory)) || FAILED=1
    return 0
  fi
  ((limit > left)) && limit=$left
  local t=$(date +%s) rc=0
  echo "== $name (limit ${limit}s)"
  timeout --kill-after=10 "$limit" bash -c 'set -euo pipefail; "$@"' _ "$@" >"$WORK/$name.log" 2>&1 ||
    rc=$?
  local dt=$(($(date +%s) - t)) verdict=ok
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    verdict="TIMED OUT"
  elif [[ $rc -ne 0 ]]; then
    verdict="FAILED (exit $rc)"
  fi
  [[ $verdict == ok || $advisory == 1 ]] || FAILED=1
  ((advisory)) && [[ $verdict != ok ]] && verdict="$verdict, advisory"
  SUMMARY+=("$(printf '%-14s %-18s %4ds' "$name" "$verdict" "$dt")")
  echo "   $name: $verdict in ${dt}s"
  tail -n 3 "$WORK/$name.log" | sed 's/^/   | /'
  return 0
}

environment() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  git -C "$ROOT" status --short 2>/dev/null | head -20 | sed 's/^/  dirty: /' || true
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv || true
  command -v nvcc >/dev/null && nvcc --version | tail -2 || echo "nvcc: not on PATH"
  cmake --version | head -1
  ${CXX:-c++} --version | head -1
  nproc
}

configure() {
  export PATH=$PATH:/usr/local/cuda/bin
  # The whole project first (it also builds `ringsim` for `ringsim profile --device cuda`);
  # if its dependencies are missing here, the CUDA parts alone.
  # RINGSIM_GPU_CHECK_MODE=standalone skips the first attempt.
  if [[ ${RINGSIM_GPU_CHECK_MODE:-auto} != standalone ]] && cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
    -DRINGSIM_GUI=OFF -DRINGSIM_MPI=OFF -DRINGSIM_BENCHMARKS=OFF \
    -DRINGSIM_CUDA_PTXAS_VERBOSE=ON; then
    echo full >"$WORK/mode"
  else
    echo "full project did not configure; building kernels/cuda/standalone"
    rm -rf "$BUILD"
    cmake -S "$ROOT/kernels/cuda/standalone" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DRINGSIM_CUDA_PTXAS_VERBOSE=ON ${RINGSIM_STANDALONE_CMAKE_ARGS:-}
    echo standalone >"$WORK/mode"
  fi
}

build() {
  cmake --build "$BUILD" -j"$JOBS" --target ringsim_cuda test_gpu test_gpu_emu bench_cuda \
    ringsim_cuda_profile
}

build_cli() {  # only in a full-project build; for the `ringsim profile --device cuda` path
  if [[ $(cat "$WORK/mode") == full ]]; then
    cmake --build "$BUILD" -j"$JOBS" --target ringsim
  else
    echo "standalone build: no ringsim CLI"
  fi
}

sass_summary() {
  local lib
  lib=$(find "$BUILD" -name 'libringsim_cuda.a' | head -1)
  echo "library: $lib"
  grep -E "Compiling entry|registers|spill" "$WORK/build.log" | sed 's/ptxas info *: //' || true
  if command -v cuobjdump >/dev/null; then
    # Tensor-core instructions per kernel: the attention kernels must show HMMA.
    cuobjdump -sass "$lib" | awk '/Function :/ {f=$3} /HMMA/ {n[f]++} END {for (k in n) print n[k], "HMMA in", k}'
  else
    echo "cuobjdump: not found"
  fi
}

cli_profile() {
  local cli="$BUILD/bin/ringsim"
  [[ -x $cli ]] || { echo "no ringsim CLI in this build"; return 0; }
  "$cli" profile --device cuda --quick --out "$WORK/profile-cli.json" ||
    echo "ringsim profile --device cuda failed (the CLI may not be wired yet)"
}

sanitizer() {
  # Small cases only: memcheck for out-of-bounds global/shared accesses, racecheck
  # for shared-memory hazards (the cp.async double buffer). Works on Firecracker
  # machines, not under gVisor (KINDS.md).
  command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer: not found"; return 0; }
  local rc=0
  compute-sanitizer --tool memcheck --error-exitcode 3 "$BUILD/bin/test_gpu" \
    --gtest_filter='Gpu.Forward*:Gpu.BackwardBf16D64Full:Gpu.MergeOf*:Gpu.RingEmulatorZigzag' || rc=1
  compute-sanitizer --tool racecheck --error-exitcode 3 "$BUILD/bin/test_gpu" \
    --gtest_filter='Gpu.ForwardFloatOutput:Gpu.BackwardBf16D64Full' || rc=1
  return $rc
}

export -f environment configure build build_cli sass_summary cli_profile sanitizer
export ROOT WORK BUILD ARCH JOBS

step env 30 environment
nvidia-smi -q >"$WORK/nvidia-smi-before.txt" 2>&1 || true
step configure 120 configure
step build 240 build
step tests 150 "$BUILD/bin/test_gpu" --gtest_output="json:$WORK/test_gpu.json"
step emu-tests 60 "$BUILD/bin/test_gpu_emu"
step bench 90 "$BUILD/bin/bench_cuda" --json "$WORK/bench.json"
step profile 120 "$BUILD/bin/ringsim_cuda_profile" --out "$WORK/profile-cuda.json"
step sass 30 sass_summary
step -a build-cli 120 build_cli
step -a cli-profile 60 cli_profile
# Last, with what time is left: the sanitizers are slow and only add evidence.
step -a sanitizer 300 sanitizer
nvidia-smi -q >"$WORK/nvidia-smi-after.txt" 2>&1 || true

{
  echo "ringsim gpu-check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(($(date +%s) - T0)) s, build mode: $(cat "$WORK/mode" 2>/dev/null || echo none)"
  printf '%s\n' "${SUMMARY[@]}"
  echo
  echo "-- tests"
  grep -m1 "no usable" "$WORK/tests.log" 2>/dev/null || true
  grep -E "^\[ +(OK|FAILED) +\]|^\[  (PASSED|SKIPPED) +\] [0-9]+ tests?|^  (O|LSE|dQ|dK|dV) |Failure" \
    "$WORK/tests.log" 2>/dev/null | head -120 || true
  echo
  echo "-- bench"
  grep -vE "^$" "$WORK/bench.log" 2>/dev/null || true
  echo
  echo "-- kernels (registers, spills, HMMA)"
  grep -E "HMMA|Compiling entry|registers|spill" "$WORK/sass.log" 2>/dev/null |
    sed -E 's/Compiling entry function .(_Z[A-Za-z0-9_]*). for .(sm_[0-9a-z]+)./\2 \1/' | head -60 || true
  echo
  echo "-- sanitizer"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$WORK/sanitizer.log" 2>/dev/null || true
} >"$WORK/summary.txt"

cp "$WORK/summary.txt" "$OUTDIR/"
[[ -f $WORK/env.log ]] && cp "$WORK/env.log" "$OUTDIR/env.txt"
for f in tests.log bench.log build.log bench.json profile-cuda.json; do
  [[ -f $WORK/$f ]] && cp "$WORK/$f" "$OUTDIR/" || true
done
tar -czf "$OUTDIR/gpu-check.tar.gz" -C "$WORK" .
cat "$WORK/summary.txt"
echo "gpu-check: results in $OUTDIR"
exit $FAILED
