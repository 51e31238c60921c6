#!/usr/bin/env bash
# Finds every runnable example in the README and the docs and writes one ctest
# per example. An example is a command line (`\` continues it) in a ```sh
# block, or a `$ CMD` line in any other block (a transcript), whose program is
# ringsim, ringsim-*, mpirun, python3, scripts/..., build/bin/... (or printf
# and echo, which write an input file for the next example); the ```python
# blocks of a doc together, as one python3 session; its
# trailing comment may carry markers (parse_markers below). The lines after a
# `$ CMD` line, up to the next `$ ` line or the block's end, are the output the
# doc shows: written beside the command (cmd/*.expected) and compared with what
# it prints by check_output.py (tesh-like: `...` skips, numbers match to the
# digits shown or within a `# tolerance N%` marker). Run by ctest itself (tests/docs/CMakeLists.txt,
# TEST_INCLUDE_FILES), so an edited doc is picked up on the next ctest without
# a rebuild.
#
# usage: extract_examples.sh SRC_DIR OUT_DIR RUNNER BUILD_DIR BIN_DIR PY_DIR TIMEOUT SLOW_TIMEOUT PYTHON
# writes OUT_DIR/examples.cmake (add_test lines for ctest) and OUT_DIR/cmd/*.sh
# (each example's command, exactly as the doc writes it) and OUT_DIR/cmd/*.expected
# (the output a transcript shows).
set -uf  # -f: a doc's [--flag] is text, not a glob
src=$1 out=$2 runner=$3 build=$4 bin=$5 pydir=$6 timeout=$7 slow_timeout=$8 python=${9:-}
mkdir -p "$out/cmd"
find "$out/cmd" -maxdepth 1 -type f \( -name '*.sh' -o -name '*.expected' \) -delete
cm="$out/examples.cmake.new"
: >"$cm"

# CMake quoted arguments: backslash, quote and dollar escaped, ';' made ','
# (it would split a list). Sets the array QA to the quoted words.
q() {
  local s
  QA=()
  for s in "$@"; do
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//\$/\\\$}
    s=${s//;/,}
    QA+=("\"$s\"")
  done
}

# Is this the kind of command the docs test runs? Its program (the first word
# after VAR=value assignments) decides.
is_example() {
  local w
  for w in $1; do
    case "$w" in
      [A-Za-z_]*=*) continue ;;
      ringsim | ringsim-* | mpirun | python3 | scripts/* | build/bin/* | ./build/bin/* | printf | echo) return 0 ;;
      *) return 1 ;;
    esac
  done
  return 1
}

# The trailing comment of a shell line (in COMMENT): text after the first #
# that starts a word outside quotes; empty when none.
comment_of() {
  local s=$1 i c sq=0 dq=0 prev=' '
  COMMENT=""
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    if [[ $c == "'" && $dq == 0 ]]; then sq=$((1 - sq))
    elif [[ $c == '"' && $sq == 0 ]]; then dq=$((1 - dq))
    elif [[ $c == '#' && $sq == 0 && $dq == 0 && ( $prev == ' ' || $prev == $'\t' ) ]]; then
      COMMENT=${s:i+1}
      return
    fi
    prev=$c
  done
}

# Markers in a trailing comment, parts separated by ';' (case-insensitive):
#   exit N | exits N        the exit status the example is documented to give
#   slow ...                label docs-slow and the long timeout
#   needs a GPU ...         skipped (with the reason) unless nvidia-smi finds a GPU
#   needs N cores | needs N MPI slots   skipped unless this machine has N cores
#   needs a display         skipped unless $DISPLAY or $WAYLAND_DISPLAY is set
#   needs a cluster ...     always skipped (a hostfile of other machines)
#   not run: REASON         always skipped, with REASON
#   the test suite ...      always skipped: the command runs every test, this one among them
#   tolerance N%            the shown output's numbers may differ by N% (machine-dependent)
# Any other part that starts with "needs" is an error, so no example is
# skipped by a marker the runner does not understand.
expect=0 needs="" slow=0 tol=0
parse_markers() {
  expect=0 needs="" slow=0 tol=0
  local c=$1 part low IFS=';'
  for part in $c; do
    part=${part#"${part%%[![:space:]]*}"}
    part=${part%"${part##*[![:space:]]}"}
    low=${part,,}
    if [[ $low =~ ^exits?\ ([0-9]+)$ ]]; then expect=${BASH_REMATCH[1]}
    elif [[ $low == slow* ]]; then slow=1
    elif [[ $low =~ ^tolerance\ ([0-9.]+)%$ ]]; then tol=$(awk -v p="${BASH_REMATCH[1]}" 'BEGIN { print p / 100 }')
    elif [[ $low =~ ^not\ run:\ *(.*)$ ]]; then needs+="never:${part#*:} "
    elif [[ $low == "the test suite"* ]]; then needs+="never: the test suite, which runs this example "
    elif [[ $low == needs* ]]; then
      if [[ $low == *cluster* ]]; then needs+="cluster "
      elif [[ $low == *gpu* ]]; then needs+="gpu "
      elif [[ $low =~ ^needs\ ([0-9]+)\ (cores|mpi\ slots) ]]; then needs+="cores:${BASH_REMATCH[1]} "
      elif [[ $low == *display* ]]; then needs+="display "
      else needs+="unknown:$part "
      fi
    fi
  done
}

emit() {  # doc line command
  local doc=$1 line=$2 cmd=$3 name doc_id file prev_var labels=docs to=$timeout
  name="docs:$doc:$line"
  doc_id=${doc//[\/.]/_}
  file="$out/cmd/${doc_id}_$line.sh"
  printf '%s\n' "$cmd" >"$file"
  comment_of "${cmd##*$'\n'}"  # a continued command's comment is on its last line
  parse_markers "$COMMENT"
  if [[ $slow == 1 ]]; then labels=docs-slow to=$slow_timeout; fi
  q "$name" "$runner" "$src" "$build" "$bin" "$pydir" "$out/scratch/$doc_id" "$file" "$expect" \
    "${needs:-none}" "$tol"
  printf 'add_test(%s bash %s run %s)\n' "${QA[0]}" "${QA[1]}" "${QA[*]:2}" >>"$cm"
  q "$name" "docs-$doc_id" "RINGSIM_DOCS_PYTHON=$python"
  local qn=${QA[0]} qf=${QA[1]} qe=${QA[2]}
  printf 'set_tests_properties(%s PROPERTIES LABELS %s TIMEOUT %s SKIP_RETURN_CODE 77 FIXTURES_REQUIRED %s RESOURCE_LOCK %s ENVIRONMENT %s' \
    "$qn" "$labels" "$to" "$qf" "$qf" "$qe" >>"$cm"
  # Examples of one doc run in its order, in one scratch dir: a later example
  # may read what an earlier one wrote (a trace, then the GUI on it).
  prev_var="prev_${doc_id//[^A-Za-z0-9_]/_}"  # a variable name: own-cluster.md has a dash
  if [[ -n ${!prev_var:-} ]]; then
    q "${!prev_var}"
    printf ' DEPENDS %s' "${QA[0]}" >>"$cm"
  fi
  printf ')\n' >>"$cm"
  printf -v "$prev_var" '%s' "$name"
  count=$((count + 1))
  LAST_FILE=$file
}

setup_doc() {  # doc: the fixture that makes the doc's scratch dir
  local doc=$1 doc_id
  doc_id=${doc//[\/.]/_}
  q "docs:$doc:setup" "$runner" "$src" "$build" "$out/scratch/$doc_id" "docs-$doc_id"
  printf 'add_test(%s bash %s setup %s)\n' "${QA[0]}" "${QA[1]}" "${QA[*]:2:3}" >>"$cm"
  printf 'set_tests_properties(%s PROPERTIES LABELS "docs;docs-slow" FIXTURES_SETUP %s RESOURCE_LOCK %s)\n' \
    "${QA[0]}" "${QA[5]}" "${QA[5]}" >>"$cm"
}

count=0
cd "$src" || exit 1
set +f
docs=(README.md docs/*.md */README.md */*/README.md)
set -f
for doc in "${docs[@]}"; do
  [[ -f $doc ]] || continue
  # docs/json.md's commands are run by its own tests (json:SECTION, json_keys.py),
  # which read their JSON; running them here too would only double the time.
  [[ $doc == docs/json.md ]] && continue
  setup_written=0
  fence="" in_block=0 n=0 pending="" pending_line=0 skipping=0 py="" py_line=0 expected=""
  while IFS= read -r raw || [[ -n $raw ]]; do
    n=$((n + 1))
    if [[ $raw =~ ^[[:space:]]*\`\`\`(.*)$ ]]; then
      if [[ $in_block == 0 ]]; then in_block=1 fence=${BASH_REMATCH[1]}; else in_block=0 fence=""; fi
      pending="" skipping=0 expected=""
      continue
    fi
    [[ $in_block == 1 ]] || continue
    # ```python blocks: one session per doc (later blocks use earlier names),
    # run as one example named by its first block's line.
    if [[ $fence == python ]]; then
      [[ $py_line == 0 ]] && py_line=$((n - 1))
      py+=$raw$'\n'
      continue
    fi
    line=$raw
    if [[ $skipping == 1 ]]; then  # a continued line of a command that is not an example
      [[ $line == *\\ ]] || skipping=0
      continue
    fi
    if [[ -n $pending ]]; then
      pending+=$'\n'"$line"
    else
      # A ```sh block: every command line. Any other block: `$ CMD` lines (a
      # transcript: the command, then what it printed).
      case "$fence" in
        sh | bash | shell) line=${line#"${line%%[![:space:]]*}"} ;;
        *)
          if [[ $line != '$ '* ]]; then
            # What the last `$ CMD` printed, as the doc shows it.
            [[ -n $expected ]] && printf '%s\n' "$raw" >>"$expected"
            continue
          fi
          expected=""
          line=${line#\$ }
          ;;
      esac
      if ! is_example "$line"; then
        [[ $line == *\\ ]] && skipping=1
        continue
      fi
      pending=$line pending_line=$n
    fi
    if [[ $pending == *\\ ]]; then continue; fi  # continued on the next line
    if [[ $setup_written == 0 ]]; then setup_doc "$doc"; setup_written=1; fi
    emit "$doc" "$pending_line" "$pending"
    pending=""
    case "$fence" in sh | bash | shell) ;; *) expected=${LAST_FILE%.sh}.expected ;; esac
  done <"$doc"
  if [[ -n $py ]]; then
    if [[ $setup_written == 0 ]]; then setup_doc "$doc"; setup_written=1; fi
    emit "$doc" "$py_line" "python3 - <<'RINGSIM_DOC_PY'"$'\n'"${py}RINGSIM_DOC_PY"
  fi
done
mv "$cm" "$out/examples.cmake"
echo "docs examples: $count" >&2
