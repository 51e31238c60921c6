#!/usr/bin/env bash
# `pip install --no-build-isolation .` as docs/python.md says, into a fresh venv
# of each interpreter given (the build's, and the python3 first on PATH when it
# is another: a pyenv or conda one), offline (--no-index), reusing this build's
# module; then the README's Python example in that venv, and ringsim.__version__
# against `ringsim -V`. An interpreter whose extension suffix differs from the
# build's would make the backend compile its own module (minutes): it is left
# out with a line saying so.
#   pip_install_check.sh SOURCE_DIR BUILD_DIR RINGSIM_BIN PYTHON...
set -u
src=$1 build=$2 bin=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
want=$("$bin" -V | awk '{print $2}')
built=$(ls "$build"/python/ringsim/_ringsim*.so 2>/dev/null | head -1)
[[ -n $built ]] || { echo "SKIPPED: no _ringsim module in $build/python/ringsim"; exit 77; }
tested=0
for name in "$@"; do
  py=$(command -v "$name") || continue
  suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  if [[ $built != *"$suffix" ]]; then
    echo "left out: $py (extension suffix $suffix, the build's module is $(basename "$built"))"
    continue
  fi
  venv=$work/venv$tested
  "$py" -m venv "$venv" || { echo "FAILED: $py -m venv"; exit 1; }
  (cd "$src" && RINGSIM_BUILD_DIR=$build "$venv/bin/pip" install -q --no-build-isolation \
    --no-index .) || { echo "FAILED: pip install into a venv of $py"; exit 1; }
  # Away from the tree: the venv's copy is the one imported.
  out=$(cd "$work" && env -u PYTHONPATH "$venv/bin/python" -c \
    "import ringsim; print(ringsim.__version__, ringsim.run(devices=256, block=4096)['time_s'])") ||
    { echo "FAILED: the README's Python example in a venv of $py"; exit 1; }
  where=$(cd "$work" && env -u PYTHONPATH "$venv/bin/python" -c "import ringsim; print(ringsim.__file__)")
  [[ $where == "$venv"/* ]] || { echo "FAILED: imported $where, not the venv's copy"; exit 1; }
  read -r version time <<<"$out"
  [[ $version == "$want" ]] || { echo "FAILED: ringsim.__version__ $version, ringsim -V $want"; exit 1; }
  [[ $time =~ ^[0-9.e+-]+$ ]] || { echo "FAILED: run()['time_s'] printed '$time'"; exit 1; }
  echo "ok: $py: pip install --no-build-isolation . into a venv; ringsim $version, run() $time s"
  tested=$((tested + 1))
done
[[ $tested -gt 0 ]] || { echo "SKIPPED: no interpreter given shares the build's extension suffix"; exit 77; }
