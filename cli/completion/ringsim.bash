# bash completion for ringsim: subcommands, each subcommand's flags, and the
# values of name flags (--gpu, --model, --layout, ...), all asked of ringsim
# itself (`ringsim __complete [CMD [FLAG]]`), so they follow the installed
# program. Installed by `cmake --install` into share/bash-completion/completions.
_ringsim() {
  local cur prev cmd i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) if [[ ${COMP_WORDS[i-1]} != -* ]]; then cmd=${COMP_WORDS[i]}; break; fi ;;
    esac
  done
  local words
  if [[ $prev == --* ]]; then
    words=$("${COMP_WORDS[0]}" __complete "${cmd:-run}" "$prev" 2>/dev/null)
    if [[ -n $words ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
      return
    fi
    case $prev in
      --trace|--csv|--out|--catalog|--profile|--config|--q|--k|--v|--lse-out|--grid)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return ;;
    esac
  fi
  if [[ -z $cmd && $cur != -* ]]; then
    words=$("${COMP_WORDS[0]}" __complete 2>/dev/null)
  elif [[ $cmd == help ]]; then
    words=$("${COMP_WORDS[0]}" __complete help 2>/dev/null)
  else
    words=$("${COMP_WORDS[0]}" __complete "${cmd:-run}" 2>/dev/null)
  fi
  mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -F _ringsim ringsim
