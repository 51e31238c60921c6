# fish completion for ringsim: the words come from `ringsim __complete [CMD
# [FLAG]]` (subcommands, a subcommand's flags, a name flag's values), so they
# follow the installed program. Installed by `cmake --install` into
# share/fish/vendor_completions.d.
function __ringsim_words
    set -l tokens (commandline -opc)
    set -l cmd ""
    set -l prev ""
    for t in $tokens[2..-1]
        if not string match -q -- '-*' $t; and not string match -q -- '--*' $prev
            set cmd $t
            break
        end
        set prev $t
    end
    set -l last $tokens[-1]
    if string match -q -- '--*' $last
        set -l values ($tokens[1] __complete (test -n "$cmd"; and echo $cmd; or echo run) $last 2>/dev/null)
        if test (count $values) -gt 0
            printf '%s\n' $values
            return
        end
    end
    if test -z "$cmd"
        $tokens[1] __complete 2>/dev/null
        $tokens[1] __complete run 2>/dev/null
    else if test "$cmd" = help
        $tokens[1] __complete help 2>/dev/null
    else
        $tokens[1] __complete $cmd 2>/dev/null
    end
end
complete -c ringsim -f -a '(__ringsim_words)'
