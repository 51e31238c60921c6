#!/usr/bin/env python3
"""docs/json.md against the programs: every key a command's `--json` prints
is in the doc's table for that command, every key in the table is printed by
one of the section's commands, and no key of the frozen list of this
schema_version (tests/docs/json-keys-vN.txt) has left the doc, so a key is
removed or renamed only with a schema_version bump (models/core/schema.hpp).

usage:
  json_keys.py DOC BIN_DIR FROZEN_DIR SECTION   check one section (one ctest each)
  json_keys.py DOC BIN_DIR FROZEN_DIR --sections   list the doc's sections (name TAB slow|fast)
  json_keys.py DOC BIN_DIR FROZEN_DIR --freeze     write json-keys-vN.txt from the doc
  json_keys.py DOC BIN_DIR FROZEN_DIR --draft SECTION   print table rows from the outputs

A section is a `## \\`name\\`` heading of DOC; its ```sh block holds the commands
that are run (each must exit 0; `ringsim`, `ringsim-*` and `mpirun` from
BIN_DIR, in a scratch directory); its table rows are `| object | keys |`:
the object as `top` or a backticked path (`verdict`, `rows[].params`: `[]`
for the objects in an array), the keys as backticked words; a key `<what>`
in angle brackets stands for keys that are data (a flag, a device name), and
nothing below it is checked. Exit 0 when they agree, 1 with every
difference, 77 (skipped) with the reason when a program the section needs is
not built."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile


def sections(doc):
    """{name: {"commands": [...], "rows": {path: set(keys)}, "wild": set(paths)}}"""
    out, cur, in_sh, fence = {}, None, False, False
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    for line in text.split("\n"):
        m = re.match(r"^## `([^`]+)`", line)
        if m:
            cur = out.setdefault(m.group(1), {"commands": [], "rows": {}, "wild": set()})
            continue
        if line.startswith("```"):
            fence = not fence
            in_sh = fence and line.strip() in ("```sh", "```bash")
            continue
        if cur is None:
            continue
        if in_sh and line.strip() and not line.lstrip().startswith("#"):
            cur["commands"].append(line.strip())
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) >= 2 and not set(cells[0]) <= set("-: "):
            path = cells[0].strip("`")
            if path in ("object",):
                continue
            path = "" if path == "top" else path
            keys = set(re.findall(r"`([^`]+)`", cells[1]))
            wild = {k for k in keys if k.startswith("<")}
            if wild:
                cur["wild"].add(path)
            cur["rows"].setdefault(path, set()).update(keys - wild)
    return out


def walk(value, path, found, wild):
    """found[path] = the keys of every object at path (`[]` for array items),
    except below a path whose keys are data (wild)."""
    if isinstance(value, dict):
        found.setdefault(path, set())
        if path in wild:
            return
        for k, v in value.items():
            found[path].add(k)
            walk(v, f"{path}.{k}" if path else k, found, wild)
    elif isinstance(value, list):
        for v in value:
            walk(v, f"{path}[]", found, wild)


def comment_free(cmd):
    """The command without its trailing `# ...` comment: a `#` after a blank,
    outside quotes (the shell's rule), so operators (`>`, `&&`) stay operators."""
    quote, escaped = None, False
    for i, c in enumerate(cmd):
        if escaped:
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or cmd[i - 1] in " \t"):
            return cmd[:i].rstrip()
    return cmd


def run_section(sec, bin_dir):
    """The parsed JSON of each command's stdout, or a list of errors."""
    docs, errors = [], []
    scratch = tempfile.mkdtemp(prefix="ringsim-json-")
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    try:
        for cmd in sec["commands"]:
            p = subprocess.run(["bash", "-c", comment_free(cmd)], cwd=scratch, env=env,
                               capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                errors.append(f"`{cmd}` exited {p.returncode}: {p.stderr.strip()[-300:]}")
                continue
            try:
                docs.append(json.loads(p.stdout))
            except ValueError as x:
                errors.append(f"`{cmd}`: stdout is not one JSON object ({x})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return docs, errors


def frozen_keys(frozen_dir, version):
    path = os.path.join(frozen_dir, f"json-keys-v{version}.txt")
    if not os.path.exists(path):
        return None, path
    keys = set()
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for line in lines:
        if line.strip() and not line.startswith("#"):
            keys.add(tuple(line.rstrip("\n").split("\t")))
    return keys, path


def doc_triples(secs):
    t = set()
    for name, sec in secs.items():
        for path, keys in sec["rows"].items():
            t |= {(name, path, k) for k in keys}
        t |= {(name, path, "<data>") for path in sec["wild"]}
    return t


def doc_version(doc):
    with open(doc, encoding="utf-8") as f:
        m = re.search(r"schema_version[^0-9]*is (\d+)", f.read())
    return int(m.group(1)) if m else None


def needs(sec, bin_dir):
    """The reason a section cannot run on this build, or None."""
    for cmd in sec["commands"]:
        for w in shlex.split(cmd, comments=True):
            if w.startswith("ringsim") and not os.access(os.path.join(bin_dir, w), os.X_OK):
                return f"{w} is not built in this build ({bin_dir})"
            if w == "mpirun" and not shutil.which("mpirun"):
                return "mpirun not found"
    return None


def check(doc, bin_dir, frozen_dir, name):
    secs = sections(doc)
    if name not in secs:
        print(f"FAILED: {doc} has no section ## `{name}`")
        return 1
    sec = secs[name]
    why = needs(sec, bin_dir)
    if why:
        print(f"SKIPPED: {why}")
        return 77
    outputs, errors = run_section(sec, bin_dir)
    found = {}
    for o in outputs:
        walk(o, "", found, sec["wild"])
        v = o.get("schema_version") if isinstance(o, dict) else None
        if v is not None and v != doc_version(doc):
            errors.append(f"schema_version {v} printed, the doc says {doc_version(doc)}")
    documented = sec["rows"]
    for path in sorted(set(found) | set(documented)):
        label = path or "top"
        got, want = found.get(path), documented.get(path)
        if got is None:
            errors.append(f"{label}: documented, but no command of the section printed it")
            continue
        if want is None:
            errors.append(f"{label}: printed ({', '.join(sorted(got))}), but the doc has no row for it")
            continue
        for k in sorted(got - want):
            errors.append(f"{label}: `{k}` is printed but not documented (adding a key keeps "
                          f"the schema_version: add it to the doc and to the frozen list)")
        for k in sorted(want - got):
            errors.append(f"{label}: `{k}` is documented but no command printed it")
    version = doc_version(doc)
    frozen, fpath = frozen_keys(frozen_dir, version)
    if frozen is None:
        errors.append(f"schema_version {version} has no frozen key list ({fpath}): a new version "
                      f"freezes its keys with `json_keys.py ... --freeze`")
    else:
        gone = sorted(t for t in frozen if t[0] == name and t not in doc_triples({name: sec}))
        for _, path, k in gone:
            errors.append(f"{path or 'top'}: `{k}` left the doc, but schema_version {version} "
                          f"froze it ({os.path.basename(fpath)}); removing or renaming a key "
                          f"bumps schema_version (models/core/schema.hpp)")
        added = sorted(t for t in doc_triples({name: sec}) if t not in frozen)
        for _, path, k in added:
            errors.append(f"{path or 'top'}: `{k}` is documented but not in "
                          f"{os.path.basename(fpath)} (added keys are frozen too: --freeze)")
    if errors:
        print(f"FAILED: docs/json.md section `{name}` and the programs disagree:")
        for e in errors:
            print("  " + e)
        return 1
    n = sum(len(k) for k in documented.values())
    print(f"`{name}`: {len(sec['commands'])} commands, {n} documented keys, all printed; "
          f"none of schema_version {version}'s frozen keys gone")
    return 0


def freeze(doc, frozen_dir):
    version = doc_version(doc)
    frozen, fpath = frozen_keys(frozen_dir, version)
    triples = doc_triples(sections(doc))
    if frozen is not None and not frozen <= triples:
        print(f"refused: {fpath} has keys the doc no longer has; bump schema_version first")
        return 1
    with open(fpath, "w", encoding="utf-8") as f:
        f.write(f"# The JSON keys of schema_version {version} (docs/json.md; section, object, key).\n")
        f.write("# Written by tests/docs/json_keys.py --freeze; a key removed from it bumps the version.\n")
        for t in sorted(triples):
            f.write("\t".join(t) + "\n")
    print(f"wrote {fpath}: {len(triples)} keys")
    return 0


def draft(doc, bin_dir, name):
    sec = sections(doc)[name]
    outputs, errors = run_section(sec, bin_dir)
    for e in errors:
        print("#", e)
    found = {}
    for o in outputs:
        walk(o, "", found, sec["wild"])
    for path in sorted(found):
        keys = ", ".join(f"`{k}`" for k in sorted(found[path]))
        print(f"| {'`' + path + '`' if path else 'top'} | {keys} |")
    return 0


def main():
    doc, bin_dir, frozen_dir, what = sys.argv[1:5]
    bin_dir = os.path.abspath(bin_dir)
    if what == "--sections":
        for name, sec in sections(doc).items():
            slow = any(re.search(r"#.*\bslow\b", c) for c in sec["commands"])
            print(f"{name}\t{'slow' if slow else 'fast'}")
        return 0
    if what == "--freeze":
        return freeze(doc, frozen_dir)
    if what == "--draft":
        return draft(doc, bin_dir, sys.argv[5])
    return check(doc, bin_dir, frozen_dir, what)


if __name__ == "__main__":
    sys.exit(main())
