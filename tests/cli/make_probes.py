#!/usr/bin/env python3
"""Generates the red-team probe table of docs/bad-input.md ("Probes").

Every flag of every subcommand, read from `ringsim SUB --help` (its type name says what
kind of value it takes: INT, TOKENS, FLOAT, NAME, FILE, ...), is given the bad values of its
kind, no value at all, and an empty value; a few subcommand-level probes (config files,
grid files, journals, repeated flags) are added by hand. Each probe runs as a child of the
real program in a scratch copy of tests/cli/data, and the script:

- writes every probe refused with exit 2 and one error line as a table row (the command,
  the exit code, the line), between the markers in docs/bad-input.md, which
  tests/cli/test_probes.cpp then runs in-process on every build;
- prints every probe that did anything else on stderr, for review: an exit other than 0
  and 2, a crash, a timeout, more than one line, a line that does not name the flag, and
  the accepted ones (a bad value taken as good is a finding too).

usage: tests/cli/make_probes.py BUILD/bin/ringsim [--write]   (--write: update the doc)
"""

import concurrent.futures
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "docs", "bad-input.md")
BEGIN, END = "<!-- probes:begin -->", "<!-- probes:end -->"

# What each subcommand needs besides the probed flag, so the probe reaches that flag's
# check and, were it accepted, would finish in milliseconds (no SimGrid, no timing).
BASE = {
    "run": ["--engine", "analytic"],
    "minblock": [],
    "hardware": [],
    "plan": ["--gpus", "16", "--context", "128K"],
    "infer": ["--model", "llama3-8b", "--context", "128K", "--gpus", "16", "--engine",
              "analytic"],
    "sweep": ["--devices", "2,4", "--block", "256", "--engine", "analytic"],
    "verify": [],
    "profile": ["--out", "p.json", "--blocks", "16", "--head-dims", "16", "--dtypes", "fp32",
                "--repeats", "1", "--no-backward"],
    "experiment": ["--list"],
    "calibrate": ["--profile", "profile-good.json", "--ranks", "2"],
}
# sweep: its own flags only (the run flags are run's probes; a sweep refuses a bad base
# flag the same way, tested by a few hand-written probes below).
SWEEP_OWN = {"--grid", "--out", "--jobs", "--timeout", "--plot", "--plot-metric", "--plot-x",
             "--plot-series"}
OUTPUTS = {"--trace", "--csv", "--out", "--lse-out", "--plot"}

# Bad values by the type name --help shows.
INT = ["four", "-1", "1.5", "99999999999999999999"]
BAD = {
    "INT": INT,
    "TOKENS (K/M binary)": ["4Q", "-4K", "1.5K"],
    "BYTES (K/M/G binary)": ["4Q", "-1G", "0.5G"],
    "INT|auto": ["automatic", "-2"],
    "FLOAT": ["nan", "-inf", "1e999", "fast"],
    "FRACTION": ["nan", "1.5", "-0.1"],
    "SECONDS": ["nan", "-1", "1e999", "soon"],
    "FLOP/S": ["inf", "-1e15", "fast"],
    "BYTES/S": ["inf", "0", "wide"],
    "PRICE": ["-2", "free", "nan"],
    "NAME": ["nope", "RING"],
    "on|off": ["maybe", "ON"],
    "FILE": ["nope.json", ".", "/dev/zero"],
    "DIR": ["catalog-good.json"],
    "PREFIX": ["/nonexistent/p"],
    "LIST": ["16,,32", "x,y"],
    "LENGTHS|FILE|DIST": ["8,x", "8,0", "fixed:0", "uniform:9..3", "lognormal:2K", "gauss:3",
                          "nope.txt"],
    "DIMS": ["4x", "0x4", "axb"],
    "DEVICE:FACTOR": ["3", "3:0", "x:2", "3:nan"],
    "LINK:FACTOR": ["nic7", "nic7:-1", ":2"],
    "KEY=VALUE": ["foo", "=1", "devices.h100-sxm=1", "devices.h100-sxm.gemm_efficiency=nan"],
}
OUTPUT_BAD = [".", "/nonexistent/x.json"]

# Probes written by hand: files that are not what they claim, journals of other sweeps,
# grids a sweep cannot run, flags given twice. (kind, command words after `ringsim`)
HAND = [
    ("--config", "bad TOML", ["--config", "config-syntax.toml", "--engine", "analytic"]),
    ("--config", "an array for a single value", ["--config", "config-array.toml"]),
    ("--config", "a key given twice", ["--config", "config-twice.toml"]),
    ("--config", "an unterminated string", ["--config", "config-unterminated.toml"]),
    ("--config", "binary bytes", ["--config", "config-binary.toml"]),
    ("--config", "a dotted section", ["--config", "config-nested.toml"]),
    ("--config", "a value without a key", ["--config", "config-no-key.toml"]),
    ("--devices", "a switch value for a count (config)", ["--config", "config-bool.toml",
                                                          "--engine", "analytic"]),
    ("--config", "help as a key", ["--config", "config-help.toml"]),
    ("--devices", "a value out of range (config)", ["--config", "config-zero.toml", "--engine",
                                                    "analytic"]),
    ("--devices", "a full-width digit (config)", ["--config", "config-fullwidth.toml",
                                                  "--engine", "analytic"]),
    ("--block", "a number beyond a double (config)", ["--config", "config-huge-number.toml",
                                                      "--engine", "analytic"]),
    ("--trace", "an output in a missing directory (config)", ["--config", "config-output.toml"]),
    ("--recheck", "a negative re-check count (config)", ["plan", "--config", "config-plan.toml"]),
    ("--config", "a switch given a word", ["--config", "config-switch.toml"]),
    ("--block", "a layout rule broken (config)", ["--config", "config-rule.toml", "--engine",
                                                  "analytic"]),
    ("--config", "keys for another subcommand", ["plan", "--config", "config-good.toml"]),
    ("--config", "two files", ["--config", "config-good.toml", "--config", "config-good.toml"]),
    ("--config", "a directory", ["--config", "."]),
    ("--config", "an endless device", ["--config", "/dev/zero"]),
    ("--config", "bad TOML under a sweep", ["sweep", "--config", "config-syntax.toml",
                                            "--devices", "2,4"]),
    ("--config", "a key infer does not have", ["infer", "--config", "config-zero.toml"]),
    ("--grid", "truncated JSON", ["sweep", "--grid", "grid-truncated.json"]),
    ("--grid", "no axes", ["sweep", "--grid", "grid-no-axes.json"]),
    ("--grid", "axes as an array", ["sweep", "--grid", "grid-axes-array.json"]),
    ("--grid", "an axis a sweep cannot set", ["sweep", "--grid", "grid-not-sweepable.json"]),
    ("--grid", "an empty axis", ["sweep", "--grid", "grid-empty-axis.json"]),
    ("--grid", "base as an array", ["sweep", "--grid", "grid-base-array.json"]),
    ("--grid", "a nested value", ["sweep", "--grid", "grid-nested-value.json"]),
    ("--grid", "a range backwards", ["sweep", "--grid", "grid-backwards.json"]),
    ("--devices", "ten million points (grid)", ["sweep", "--grid", "grid-too-many.json"]),
    ("--block", "every point refused (grid)", ["sweep", "--grid", "grid-all-refused.json",
                                               "--engine", "analytic"]),
    ("--grid", "a base flag a sweep cannot set", ["sweep", "--grid",
                                                  "grid-base-not-sweepable.json"]),
    ("--grid", "a JSON array", ["sweep", "--grid", "grid-array.json"]),
    ("--grid", "an empty file", ["sweep", "--grid", "grid-empty.json"]),
    ("--grid", "a null axis", ["sweep", "--grid", "grid-null.json"]),
    ("--devices", "a list on the command line too (grid)", ["sweep", "--grid",
                                                            "grid-backwards.json", "--devices",
                                                            "2,4"]),
    ("--grid", "a directory", ["sweep", "--grid", "."]),
    ("--out", "a journal of an older ringsim (no header)", ["sweep", "--devices", "2,4",
                                                             "--engine", "analytic", "--out",
                                                             "journal-old.jsonl"]),
    ("--out", "a journal of binary bytes", ["sweep", "--devices", "2,4", "--engine", "analytic",
                                            "--out", "journal-binary.jsonl"]),
    ("--out", "a journal header whose check fails", ["sweep", "--devices", "2,4", "--engine",
                                                     "analytic", "--out",
                                                     "journal-bad-check.jsonl"]),
    ("--out", "the catalog as the journal", ["sweep", "--devices", "2,4", "--engine", "analytic",
                                             "--catalog", "catalog-good.json", "--out",
                                             "catalog-good.json"]),
    ("--gpu", "every point refused by a base flag (sweep)", ["sweep", "--devices", "2,4",
                                                             "--engine", "analytic", "--gpu",
                                                             "nope"]),
    ("--block", "every point refused by a layout rule (sweep)", ["sweep", "--devices", "2,4",
                                                                 "--block", "255", "--layout",
                                                                 "zigzag", "--engine",
                                                                 "analytic"]),
    ("--devices", "one flag as two axes (sweep)", ["sweep", "--devices", "2,4", "--devices",
                                                   "8,16", "--engine", "analytic"]),
    ("--catalog", "a list for a flag a sweep cannot vary", ["sweep", "--devices", "2,4",
                                                            "--catalog", "a.json,b.json"]),
    ("--devices", "a geometric range from zero (sweep)", ["sweep", "--devices", "0..8:x2"]),
    ("--devices", "a range step of zero (sweep)", ["sweep", "--devices", "1..8:+0"]),
    ("--layout", "a range of names (sweep)", ["sweep", "--layout", "ring..zigzag"]),
    ("--devices", "a flag given twice", ["--devices", "8", "--devices", "16", "--engine",
                                         "analytic"]),
    ("--engine", "a choice given twice", ["--engine", "analytic", "--engine", "simgrid"]),
    ("--cp", "a million CP ranks (infer size guard)", ["infer", "--model", "llama3-405b",
                                                       "--context", "1M", "--gpus", "1M",
                                                       "--engine", "analytic", "--json"]),
    ("--cp", "128K CP ranks (plan --inference size guard)", ["plan", "--inference", "--gpus",
                                                             "1M", "--context", "1M", "--cp",
                                                             "128K", "--tp", "8", "--json"]),
]


def parse_help(ringsim, sub):
    """(flag, type name) of each option of `ringsim SUB --help` that takes a value."""
    text = subprocess.run([ringsim, sub, "--help"], capture_output=True, text=True).stdout
    flags = []
    for line in text.splitlines():
        m = re.match(r"^  (-[\w-]+(?:,--[\w!-]+)*)(?: (.+?))?(?:\s{2,}.*)?$", line)
        if not m:
            continue
        names = [n for n in m.group(1).split(",") if n.startswith("--")]
        kind = (m.group(2) or "").split("=")[0].strip()
        if kind.endswith(" ..."):
            kind = kind[:-4]
        if not names or names[0] in ("--help", "--help-all") or not kind or kind.startswith("("):
            continue
        flags.append((names[0], kind))
    return flags


def probes(ringsim):
    out = []
    for sub, base in BASE.items():
        for flag, kind in parse_help(ringsim, sub):
            if sub == "sweep" and flag not in SWEEP_OWN:
                continue
            rest = list(base)
            if flag in rest:  # the probed flag replaces the base's value
                i = rest.index(flag)
                del rest[i:i + 2]
            values = OUTPUT_BAD if flag in OUTPUTS else BAD.get(kind, [])
            for v in values:
                out.append((f"{sub} {flag}: {kind} '{v}'", flag, [sub, *rest, flag, v]))
            out.append((f"{sub} {flag}: no value", flag, [sub, *rest, flag]))
            if sub == "run":
                out.append((f"{sub} {flag}: empty value", flag, [sub, *rest, flag, ""]))
    for flag, kind, words in HAND:
        out.append((f"{flag}: {kind}", flag, words))
    return out


def run(ringsim, cwd, words):
    try:
        r = subprocess.run([ringsim, *words], cwd=cwd, capture_output=True, text=True,
                           timeout=30, errors="replace")
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


# Lists that grow with the catalog are checked as a prefix (a final "..."), as in the
# tables above, so a new device does not break a row.
GROWING = re.compile(r"(unknown (?:device|model|kernel|cluster|interconnect) '[^']*'; "
                     r"choose one of: ).*")


def expected(line):
    return GROWING.sub(r"\1...", line)


def cell(text):
    return "`" + text.replace("|", "\\|") + "`"


def command(words):
    """The command as the doc's table writes it: spaces split, 'quotes' keep one word."""
    parts = []
    for w in words:
        parts.append("''" if w == "" else (f"'{w}'" if (" " in w or "'" in w) else w))
    return "ringsim " + " ".join(parts)


def main():
    ringsim = os.path.abspath(sys.argv[1])
    write = "--write" in sys.argv[2:]
    scratch = tempfile.mkdtemp(prefix="ringsim-probes-")
    data = os.path.join(scratch, "data")
    shutil.copytree(os.path.join(HERE, "data"), data)
    todo = probes(ringsim)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda p: run(ringsim, data, p[2]), todo))
    rows, review = [], []
    for (kind, flag, words), (code, out, err) in zip(todo, results):
        lines = err.splitlines()
        one = code == 2 and len(lines) == 1 and lines[0].startswith("ringsim: error: ") \
            and out == ""
        names = not flag or flag in err or flag.lstrip("-") in err
        if one and names and "`" not in err:
            rows.append(f"| {kind.replace('|', '/')} | {cell(command(words))} | 2 | "
                        f"{cell(expected(lines[0]))} |")
        else:
            review.append(f"{code}: {command(words)}\n    {err.strip()[:300]}")
    shutil.rmtree(scratch)
    print(f"probes: {len(todo)}, refused with one line naming the flag: {len(rows)}, "
          f"to review: {len(review)}", file=sys.stderr)
    for r in review:
        print("REVIEW " + r, file=sys.stderr)
    table = ["| probe | command | exit | stderr |", "|---|---|---|---|", *rows]
    if not write:
        print("\n".join(table))
        return
    doc = open(DOC).read()
    a, b = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    open(DOC, "w").write(doc[:a] + "\n" + "\n".join(table) + "\n" + doc[b:])


if __name__ == "__main__":
    main()
