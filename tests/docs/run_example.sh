#!/usr/bin/env bash
# Runs one documented example as written (tests/docs/extract_examples.sh adds
# one ctest per example and lists the markers).
#
#   run_example.sh setup SRC BUILD SCRATCH
#     A fresh scratch dir per doc: a copy of the source tree (no .git, no build
#     dirs), so an example that writes `experiments/results` or `docs/images`
#     writes into the copy, never into the source; `build` points at this build,
#     so `build/bin/ringsim` is the program under test.
#   run_example.sh run SRC BUILD BIN PYDIR SCRATCH CMDFILE EXPECT NEEDS [TOLERANCE]
#     Runs CMDFILE with bash in SCRATCH, BIN first on PATH and PYDIR on
#     PYTHONPATH; passes when it exits EXPECT and, where the doc shows its
#     output (CMDFILE's .expected beside it), prints that output
#     (check_output.py; TOLERANCE: relative, for numbers that depend on the
#     machine). Exit 77 (ctest: skipped) with a
#     `SKIPPED: reason` line when NEEDS names hardware this machine lacks or a
#     part this build left out.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=$1
shift

if [[ $mode == setup ]]; then
  src=$1 build=$2 scratch=$3
  rm -rf "$scratch"
  mkdir -p "$scratch"
  build_rel=""
  case "$build/" in "$src"/*) build_rel=${build#"$src"/} ;; esac
  excludes=(--exclude=./.git --exclude='./build' --exclude='./build-*')
  [[ -n $build_rel ]] && excludes+=(--exclude="./$build_rel")
  tar -C "$src" "${excludes[@]}" -cf - . | tar -C "$scratch" -xf - || exit 1
  ln -s "$build" "$scratch/build"
  echo "scratch: $scratch (copy of $src; build -> $build)"
  exit 0
fi

src=$1 build=$2 bin=$3 pydir=$4 scratch=$5 cmdfile=$6 expect=$7 needs=$8 tol=${9:-0}
cmd=$(cat "$cmdfile")
echo "example: $cmd"
skip() {
  echo "SKIPPED: $*"
  exit 77
}

for need in $needs; do
  case "$need" in
    none) ;;
    gpu)
      nvidia-smi -L 2>/dev/null | grep -q '^GPU' || skip "needs a GPU (nvidia-smi finds none)" ;;
    display)
      [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} ]] || skip "needs a display (interactive window; no DISPLAY)" ;;
    cluster) skip "needs a cluster (a hostfile of other machines)" ;;
    cores:*)
      want=${need#cores:}
      [[ $(nproc) -ge $want ]] || skip "needs $want cores / MPI slots, this machine has $(nproc)" ;;
    never:*) ;;  # reason may hold spaces: handled below
    unknown:*)
      echo "FAILED: unknown marker '${need#unknown:}' (tests/docs/extract_examples.sh lists the markers)"
      exit 1 ;;
  esac
done
if [[ $needs == *never:* ]]; then skip "not run: ${needs#*never:}"; fi

# Parts this build may have left out: a skip names the part, never silent.
words=" $(tr -s '[:space:]' ' ' <<<"$cmd") "
for prog in ringsim-gui ringsim-plot ringsim-mpi-nccl ringsim-mpi; do
  if [[ $words == *[/\ ]"$prog "* ]]; then
    [[ -x $bin/$prog ]] || skip "$prog is not built in this build ($build)"
  fi
done
if [[ $words == *" mpirun "* ]]; then
  command -v mpirun >/dev/null || skip "mpirun not found"
  # ringsim-mpi is built exactly when MPI is (RINGSIM_MPI), and so is `ringsim sweep` over MPI.
  [[ -x $bin/ringsim-mpi ]] || skip "this build has no MPI parts (RINGSIM_MPI=OFF or no MPI found)"
fi
if [[ $words == *"import ringsim"* && ! -f $pydir/ringsim/__init__.py ]]; then
  skip "the Python module is not built in this build ($build)"
fi

# As a user on a fresh machine: no helpful variables from the caller's shell
# (the docs' MPI commands must work as root as written).
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM QT_QPA_PLATFORM RINGSIM_BIN
# `python3` is the interpreter the module was built for (CMake's Python3_EXECUTABLE,
# /usr/bin/python3 on Debian), as on a fresh machine, not a pyenv or conda one
# earlier on the caller's PATH (without numpy, another ABI).
py_dir=""
[[ -n ${RINGSIM_DOCS_PYTHON:-} ]] && py_dir="$(dirname "$RINGSIM_DOCS_PYTHON"):"
export PATH="$bin:$py_dir$PATH" PYTHONPATH="$pydir${PYTHONPATH:+:$PYTHONPATH}"
cd "$scratch" || exit 1
expected=${cmdfile%.sh}.expected
if [[ ! -f $expected ]]; then
  bash -c "$cmd" </dev/null
  rc=$?
else
  # The doc shows the output: keep stdout and stderr apart (JSON is read from
  # stdout), show both in the log, then compare.
  got=$(mktemp -d)
  trap 'rm -rf "$got"' EXIT
  bash -c "$cmd" </dev/null >"$got/out" 2>"$got/err"
  rc=$?
  cat "$got/out"
  cat "$got/err" >&2
fi
if [[ $rc != "$expect" ]]; then
  echo "FAILED: exit $rc, the doc says $expect ($cmdfile)"
  exit 1
fi
echo "exit $rc, as documented"
if [[ -f $expected ]]; then
  "${RINGSIM_DOCS_PYTHON:-python3}" "$here/check_output.py" "$expected" "$got/out" \
    "$got/err" "$tol" || { echo "($expected; tests/docs/check_output.py has the rules)"; exit 1; }
fi
exit 0
