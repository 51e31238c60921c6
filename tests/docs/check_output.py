#!/usr/bin/env python3
"""Compares what a documented example printed with the output its doc shows,
in the spirit of SimGrid's tesh files (tests/docs/extract_examples.sh writes
the expected lines of each `$ CMD` transcript beside its command).

usage: check_output.py EXPECTED STDOUT STDERR [TOLERANCE]

Text: the expected lines against what the command printed on stdout, then on
stderr. Runs of blanks count as one blank (a wider number shifts a column).
A line `...` skips any number of printed lines; `...` inside a line matches
any text. A number matches when it is within half a unit of the last digit
the doc prints (so a doc may round), or within TOLERANCE (relative, e.g.
0.05; 0 unless the example's `# tolerance 5%` marker says so), for numbers
that depend on the machine (kernel rounding errors, measured times).

JSON: when the expected text starts with `{` or `[`, it and stdout are read
as JSON and compared as trees: every shown key must be there with a matching
value; `...` as the last member of an object or array allows more members,
otherwise the key sets (array lengths) must be equal.

Exit 0 when they match; 1 with the first difference, the expected and the
printed text otherwise."""
import json
import re
import sys

NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
ELLIPSIS = "\u2026more\u2026"  # stands for `...` inside JSON while it is parsed


def half_unit(text):
    """Half a unit in the last digit `text` prints: 0.05 for 74.4, 0.5 for 4226."""
    mant, _, exp = text.lower().partition("e")
    frac = mant.split(".")[1] if "." in mant else ""
    return 0.5 * 10.0 ** (-len(frac) + (int(exp) if exp else 0))


def numbers_match(exp_text, got_text, rel):
    e, g = float(exp_text), float(got_text)
    return abs(g - e) <= half_unit(exp_text) * (1 + 1e-9) or abs(g - e) <= rel * abs(e)


def line_pattern(exp):
    """A regex for one expected line (blanks collapsed): its text literal,
    each number any number (captured, compared after), `...` any text."""
    rx, nums = "", []
    for k, piece in enumerate(exp.split("...")):
        if k:
            rx += ".*?"
        last = 0
        for m in NUM.finditer(piece):
            rx += re.escape(piece[last : m.start()]) + "(" + NUM.pattern + ")"
            nums.append(m.group())
            last = m.end()
        rx += re.escape(piece[last:])
    return re.compile("^" + rx + "$"), nums


def line_matches(exp, got, rel):
    pattern, nums = line_pattern(" ".join(exp.split()))
    m = pattern.match(" ".join(got.split()))
    return bool(m) and all(numbers_match(n, m.group(k + 1), rel) for k, n in enumerate(nums))


def match_lines(exp, got, rel):
    """None when they match; else (i, j): the expected line i that could
    not be matched, at the printed line j, the farthest the match got (`...`
    lines match any run of printed lines, shortest first)."""
    memo, far = {}, [(0, 0)]

    def go(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        far[0] = max(far[0], (i, j))
        if i == len(exp):
            ok = j == len(got)
        elif exp[i].strip() == "...":
            ok = any(go(i + 1, k) for k in range(j, len(got) + 1))
        else:
            ok = j < len(got) and line_matches(exp[i], got[j], rel) and go(i + 1, j + 1)
        memo[(i, j)] = ok
        return ok

    return None if go(0, 0) else far[0]


class Num:
    """A JSON number with the text it was written as (for the rounding rule)."""

    def __init__(self, text):
        self.text = text


def load(text):
    return json.loads(text, parse_float=Num, parse_int=Num)


def load_expected(text):
    text = re.sub(r",\s*\.\.\.\s*}", f', "{ELLIPSIS}": null}}', text)
    text = re.sub(r"{\s*\.\.\.\s*}", f'{{"{ELLIPSIS}": null}}', text)
    text = re.sub(r",\s*\.\.\.\s*]", f', "{ELLIPSIS}"]', text)
    text = re.sub(r"\[\s*\.\.\.\s*]", f'["{ELLIPSIS}"]', text)
    return load(text)


def json_diff(e, g, rel, path="$"):
    """A line naming the first difference, or None."""
    if isinstance(e, dict):
        if not isinstance(g, dict):
            return f"{path}: the doc shows an object, the command printed {json.dumps(g, default=str)[:80]}"
        more = ELLIPSIS in e
        for k, v in e.items():
            if k == ELLIPSIS:
                continue
            if k not in g:
                return f"{path}.{k}: shown in the doc, missing from the output"
            d = json_diff(v, g[k], rel, f"{path}.{k}")
            if d:
                return d
        if not more:
            extra = sorted(set(g) - set(e))
            if extra:
                return f"{path}: the output has keys the doc does not show: {', '.join(extra)} (end the object with `...` to allow them)"
        return None
    if isinstance(e, list):
        if not isinstance(g, list):
            return f"{path}: the doc shows an array"
        more = bool(e) and e[-1] == ELLIPSIS
        items = e[:-1] if more else e
        if len(g) < len(items) or (not more and len(g) != len(items)):
            return f"{path}: the doc shows {len(items)} items, the output has {len(g)}"
        for k, v in enumerate(items):
            d = json_diff(v, g[k], rel, f"{path}[{k}]")
            if d:
                return d
        return None
    if isinstance(e, Num):
        if not isinstance(g, Num) or not numbers_match(e.text, g.text, rel):
            return f"{path}: the doc shows {e.text}, the output has {getattr(g, 'text', g)}"
        return None
    if e != g:
        return f"{path}: the doc shows {json.dumps(e)}, the output has {json.dumps(g, default=str)}"
    return None


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main():
    exp_file, out_file, err_file = sys.argv[1:4]
    rel = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    expected, out, err = (read(p) for p in (exp_file, out_file, err_file))
    if expected.lstrip()[:1] in ("{", "["):
        try:
            e = load_expected(expected)
        except ValueError as x:
            print(f"FAILED: the doc's JSON does not parse ({x}); `...` may end an object or array")
            return 1
        try:
            g = load(out)
        except ValueError as x:
            print(f"FAILED: the doc shows JSON, the command's stdout is not JSON ({x})")
            return 1
        d = json_diff(e, g, rel)
        if d:
            print(f"FAILED: output differs from the doc: {d}")
            return 1
        print("output matches the doc (JSON)")
        return 0
    exp_lines = expected.rstrip("\n").split("\n")
    got_lines = (out + err).rstrip("\n").split("\n") if (out + err).strip() else []
    bad = match_lines(exp_lines, got_lines, rel)
    if bad is None:
        print(f"output matches the doc ({len(exp_lines)} lines)")
        return 0
    i, j = bad
    doc = exp_lines[i] if i < len(exp_lines) else "(the doc's output ends here)"
    printed = got_lines[j] if j < len(got_lines) else "(the output ends here)"
    print(f"FAILED: output differs from the doc at its line {i + 1} of {len(exp_lines)}:")
    print(f"  doc:     {doc}")
    print(f"  printed: {printed}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
