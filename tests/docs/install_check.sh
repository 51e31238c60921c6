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
# Shell completion: the three scripts where their shells look, each asking the
# installed ringsim for its words.
for f in share/bash-completion/completions/ringsim share/zsh/site-functions/_ringsim \
  share/fish/vendor_completions.d/ringsim.fish; do
  [[ -s $prefix/$f ]] || { echo "FAILED: $prefix/$f (shell completion) not installed"; exit 1; }
done
words=$(PATH=$prefix/bin:/usr/bin:/bin bash -c "source '$prefix/share/bash-completion/completions/ringsim'
  COMP_WORDS=(ringsim pl); COMP_CWORD=1; _ringsim; echo \"\${COMPREPLY[*]}\"")
[[ $words == plan ]] || { echo "FAILED: bash completion of 'ringsim pl' gave '$words', not 'plan'"; exit 1; }
words=$(PATH=$prefix/bin:/usr/bin:/bin bash -c "source '$prefix/share/bash-completion/completions/ringsim'
  COMP_WORDS=(ringsim plan --gpu mi); COMP_CWORD=3; _ringsim; echo \"\${COMPREPLY[*]}\"")
[[ $words == mi300x ]] || { echo "FAILED: bash completion of '--gpu mi' gave '$words'"; exit 1; }
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
for cmd in run minblock hardware plan infer sweep verify profile experiment calibrate validate; do
  page=$prefix/share/man/man1/ringsim-$cmd.1
  [[ -s $page ]] || { echo "FAILED: $page (the $cmd subcommand's man page) missing"; exit 1; }
  grep -q -- '\\-\\-help' "$page" || { echo "FAILED: $page lists no flags"; exit 1; }
done
# Every page has the sections a man page reader looks for, and cites the
# installed documentation, never the source tree's docs/ folder.
for page in "$prefix"/share/man/man1/*.1; do
  for section in EXAMPLES '"EXIT STATUS"' '"SEE ALSO"'; do
    grep -q "^\.SH $section" "$page" || { echo "FAILED: $page has no $section section"; exit 1; }
  done
  if grep -q '[^a-z/]docs/' "$page"; then
    echo "FAILED: $page cites docs/ of the source tree: $(grep -m1 '[^a-z/]docs/' "$page")"; exit 1
  fi
done
[[ -s $prefix/share/doc/ringsim/validation.md && -s $prefix/share/doc/ringsim/README.md ]] ||
  { echo "FAILED: the documentation is not installed under $prefix/share/doc/ringsim"; exit 1; }
echo "installed: $*, their man pages, one per ringsim subcommand and the shell completion under $prefix"
