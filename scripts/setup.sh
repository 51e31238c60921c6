#!/usr/bin/env bash
# One-step set-up on Debian 12 as root: installs the packages ringsim needs
# (only those missing), then configures and builds into ./build.
#   scripts/setup.sh              # packages + Release build
#   BUILD_DIR=b CMAKE_ARGS=... scripts/setup.sh
#   SKIP_BUILD=1 scripts/setup.sh # packages only
#   SKIP_INSTALL=1 scripts/setup.sh # as root, no `cmake --install` into /usr/local
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  libsimgrid-dev libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  qt6-base-dev qt6-svg-dev qt6-charts-dev libgl-dev
  # Qt6Charts' CMake config requires Qt6OpenGL's, which qt6-base-dev leaves out:
  # without it ringsim-plot is skipped and experiments write no PNG.
  libqt6opengl6-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # bench_kernels' practical peak: the best single-thread GEMM this machine's packages offer.
  libopenblas-dev
  libopenmpi-dev openmpi-bin
  # Sweep journals: SHA-256 of the catalog/profile/config files and of each row (libcrypto).
  libssl-dev
  # The ringsim program's malloc: the simulator's many small SimGrid objects (cli/CMakeLists.txt).
  libjemalloc-dev
  clang clang-format libclang-rt-14-dev
  # The Python module (python/, docs/python.md) and its tests; python3-venv for
  # `pip install .` into a venv (its test makes one).
  pybind11-dev python3-dev python3-pytest python3-numpy python3-venv
  # Locale sources: the tests compile de_DE (a ',' decimal separator) into a
  # scratch folder with localedef to show numbers parse alike under any locale.
  locales
  # Man pages from each program's --help (cmake/Install.cmake; optional).
  help2man
  # A compiler cache outside the clone: rebuilds and CI runs of unchanged
  # sources skip the compile (cmake/Ccache.cmake; optional).
  ccache
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: error: missing packages and not root; run as root or install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

[ "${SKIP_BUILD:-0}" = "1" ] && exit 0
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$JOBS"
echo "setup: built into $BUILD_DIR (programs in $BUILD_DIR/bin)"

# As root, the programs and man pages go on the PATH (/usr/local/bin,
# /usr/local/share/man), so the docs' `ringsim ...`, `ringsim-mpi ...` run as
# written; reinstalled by every run, so never older than this build.
if [ "$(id -u)" -eq 0 ] && [ "${SKIP_INSTALL:-0}" != "1" ]; then
  cmake --install "$BUILD_DIR" >/dev/null
  echo "setup: installed ringsim and its siblings into /usr/local/bin (SKIP_INSTALL=1 to skip)"
else
  echo "setup: not installed (not root, or SKIP_INSTALL=1); run $BUILD_DIR/bin/ringsim, or cmake --install $BUILD_DIR --prefix DIR"
fi

# The Python module: importable without PYTHONPATH, with numpy, by the
# interpreter it was built for: CMake's Python3_EXECUTABLE, the system
# /usr/bin/python3 unless CMAKE_ARGS chose another, which is also the one the
# Debian python3-numpy package above installs numpy for. A .pth file naming
# $BUILD_DIR/python goes into that interpreter's site-packages (rewritten each
# time, so this is idempotent; the last build set up wins), never into
# whichever python3 is first on PATH (a pyenv or conda one has no numpy and
# may have another ABI).
PY_DIR="$(cd "$BUILD_DIR" && pwd)/python"
PY=$(sed -n 's/^_*Python3_EXECUTABLE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -1)
PY=${PY:-/usr/bin/python3}
if [ ! -d "$PY_DIR/ringsim" ]; then
  echo "setup: Python module: not built (see the 'ringsim: Python module' line above)"
elif [ "$(id -u)" -eq 0 ]; then
  SITE=$("$PY" -c 'import site; print(site.getsitepackages()[0])')
  mkdir -p "$SITE"
  echo "$PY_DIR" >"$SITE/ringsim.pth"
  if "$PY" -c 'import ringsim, numpy' 2>/dev/null; then
    echo "setup: Python module: wrote $SITE/ringsim.pth ($PY_DIR); $PY -c 'import ringsim, numpy' works"
  else
    echo "setup: Python module: wrote $SITE/ringsim.pth, but '$PY -c \"import ringsim, numpy\"' fails" >&2
  fi
  ON_PATH=$(command -v python3 || true)
  if [ -n "$ON_PATH" ] && [ "$(readlink -f "$ON_PATH")" != "$(readlink -f "$PY")" ]; then
    echo "setup: note: python3 on PATH is $ON_PATH, not $PY (the module's); run $PY, or put /usr/bin first on PATH"
  fi
else
  echo "setup: Python module: not root, so no .pth file; use PYTHONPATH=$PY_DIR with $PY"
fi
