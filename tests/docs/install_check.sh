#!/usr/bin/env bash
# `cmake --install` as the README says (cmake/Install.cmake): installs this
# build into a fresh prefix, runs the installed ringsim from another directory
# (no build tree, no source tree on hand), and checks each installed program's
# man page when help2man built them; without help2man that check reports
# SKIPPED with the reason (exit 77) after the rest passed.
#   install_check.sh BUILD_DIR PREFIX HAVE_MAN(ON|OFF) PROGRAM...
set -u
build=$1 prefix=$2 have_man=$3
shift 3
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" || { echo "FAILED: cmake --install"; exit 1; }
for p in "$@"; do
  [[ -x $prefix/bin/$p ]] || { echo "FAILED: $prefix/bin/$p not installed"; exit 1; }
done
elsewhere=$(mktemp -d)
trap 'rm -rf "$elsewhere"' EXIT
(cd "$elsewhere" && env -u RINGSIM_BIN PATH=/usr/bin:/bin "$prefix/bin/ringsim" --devices 8 --block 1024) ||
  { echo "FAILED: installed ringsim from $elsewhere"; exit 1; }
if [[ $have_man != ON ]]; then
  echo "SKIPPED: man pages: help2man was not found at configure time (Debian: help2man)"
  exit 77
fi
for p in "$@"; do
  [[ $p == ringsim-mpi-nccl ]] && continue
  page=$prefix/share/man/man1/$p.1
  [[ -s $page ]] || { echo "FAILED: $page missing"; exit 1; }
  grep -q '^\.TH' "$page" || { echo "FAILED: $page is not a man page"; exit 1; }
done
echo "installed: $* and their man pages under $prefix"
