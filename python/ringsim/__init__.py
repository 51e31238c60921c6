"""ringsim from Python: how ring attention (context parallelism) behaves on a cluster.

Every function takes the flags of the matching ``ringsim`` subcommand as keyword
arguments, dashes as underscores (``kv_heads=8`` is ``--kv-heads 8``; ``causal=False``
is ``--no-causal``; a list repeats a flag, e.g. ``straggler=["3:2"]``; ``pass_`` is
``--pass``), and returns
the object ``ringsim ... --json`` prints, as a dict. The flags are checked by the
CLI's own parsers, so bad input raises :class:`InputError` with the CLI's exact
one-line message (without the ``ringsim: error:`` prefix).

What runs where (docs/python.md): the closed forms (``run(engine="analytic")``,
``minblock``, ``plan``, ``infer(engine="analytic")``, ``verify``, ``catalog``) run in
this process; every SimGrid simulation (``run``/``infer`` with ``engine="simgrid"``,
``plan(recheck=N)``, each ``sweep`` point) runs in a child ``ringsim`` process,
because SimGrid allows one engine per process. Children use this build's
``ringsim`` (``$RINGSIM_BIN`` overrides it).
"""

import json
import os
import re
import tempfile

from . import _ringsim
from ._ringsim import InputError

InputError.__module__ = __name__
InputError.__doc__ = "Bad input: the message is the ringsim CLI's one-line error."

# Child runs started inside the C++ libraries (plan --recheck, sweep points)
# find ringsim through proc::ringsim_exe(), which reads $RINGSIM_BIN first;
# from python3 its other guesses (this program, its siblings) would miss.
os.environ.setdefault("RINGSIM_BIN", _ringsim.BUILD_RINGSIM_BIN)

__version__ = _ringsim.VERSION  # `ringsim --version`'s number

__all__ = ["InputError", "catalog", "run", "minblock", "plan", "infer", "verify", "sweep",
           "records", "__version__"]

# Flags that name a file the command writes: "-" (standard output) would
# redirect this process's own stdout in an in-process command, so it is refused.
_OUTPUT_FLAGS = {"trace", "csv", "out", "lse_out"}
# Boolean flags whose default is on, so False must be said: "--causal,!--no-causal".
_NEGATABLE = {"causal"}


def _text(value):
    """A flag's value as the command line would carry it."""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _flag_args(flags):
    """Keyword arguments to `--flag value` arguments, in the order given."""
    args = []
    for key, value in flags.items():
        if key == "json":
            raise TypeError("json: the functions always return the --json object")
        if value is None:
            continue
        # A trailing underscore escapes a Python keyword: pass_="bwd" is --pass bwd.
        key = key.rstrip("_")
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
            continue
        if value is False:
            if key in _NEGATABLE:
                args.append("--no-" + key.replace("_", "-"))
            continue  # other switches are off unless given
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            text = _text(v)
            if key in _OUTPUT_FLAGS and text == "-":
                raise InputError(
                    f"{flag}: '-' (standard output) is not available from Python; give a file path")
            # "--latency=-1": a value that starts with a dash is still this flag's value.
            args += [f"{flag}={text}"] if text.startswith("-") else [flag, text]
    return args


def _error_message(err):
    """The CLI's one-line error (without its prefix), or the last line it wrote."""
    lines = [line for line in err.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("ringsim: error: "):
            return line[len("ringsim: error: "):]
    return lines[-1] if lines else ""


def _result(args, code, out, err, failure=""):
    """The JSON a command printed, or the exception its exit code means."""
    if code == 2:
        raise InputError(_error_message(err))
    if code == 130:
        raise KeyboardInterrupt(f"ringsim {args[0]}: interrupted")
    if out.strip():
        try:
            # verify exits 1 when the check fails and still prints its object.
            return json.loads(out)
        except ValueError:
            pass
    why = failure or _error_message(err) or f"exit {code}"
    raise RuntimeError(f"ringsim {' '.join(args)}: {why}")


def _in_process(args):
    code, out, err = _ringsim.cli(args)
    return _result(args, code, out, err)


def _child(args, timeout_s):
    code, out, err, failure = _ringsim.child(args, float(timeout_s or 0))
    return _result(args, code, out, err, failure)


def catalog(**flags):
    """The hardware catalog as ``ringsim hardware --json`` prints it.

    Returns a dict with ``devices``, ``interconnects``, ``clusters``, ``kernels`` and
    ``models`` (lists of dicts with names, numbers and sources). ``catalog="FILE.json"``
    merges a catalog file as ``--catalog`` does. Runs in this process.
    """
    return _in_process(["hardware", *_flag_args(flags), "--json"])


def run(engine="simgrid", timeout_s=None, **flags):
    """One ring configuration, as ``ringsim run --json``.

    ``engine="simgrid"`` (the CLI's default) simulates the cluster in a child
    ``ringsim`` process (SimGrid allows one engine per process) and returns its
    summary; ``engine="analytic"`` evaluates the closed forms in this process.
    Flags are ``ringsim run``'s: ``devices``, ``block``, ``layout``, ``model``,
    ``gpu``, ``cluster``, ``kernel``, ``trace``, ... ``timeout_s`` bounds the child.

    >>> ringsim.run(devices=256, block=4096)["time_s"]
    """
    args = ["run", *_flag_args({"engine": engine, **flags}), "--json"]
    if engine == "analytic":
        return _in_process(args)
    # The typed RunSpec crosses the process boundary (parse_run_args, then
    # to_args): flags the CLI would refuse raise here, before any child starts.
    return _child(_ringsim.run_args(args), timeout_s)


def minblock(**flags):
    """The smallest block whose compute hides its transfer, as ``ringsim minblock --json``.

    With no flags: Ring Attention's Table 2 (``paper_table2``) and the catalog's
    devices x interconnects (``rows``). ``flops=..., bandwidth=...`` give one pair by hand
    (``min_block``, ``columns``). Runs in this process.
    """
    return _in_process(["minblock", *_flag_args(flags), "--json"])


def plan(inference=False, **flags):
    """Capacity planning, as ``ringsim plan --json``.

    Training (default): needs ``gpus`` and ``context`` (or ``max_context=True``); returns
    ``configs`` ranked by step time, ``recheck`` and the request. ``recheck=N``
    re-runs the top N configs' attention with SimGrid in child processes.
    ``inference=True`` plans long-context inference (``plan --inference``): TP x CP
    splits ranked by time to first token. The search runs in this process.
    """
    return _in_process(["plan", *_flag_args({"inference": inference, **flags}), "--json"])


def infer(engine="analytic", timeout_s=None, **flags):
    """Long-context inference, as ``ringsim infer --json``: TTFT, decode time per token,
    tokens/s and memory per GPU. Needs ``context`` and ``gpus``.

    ``engine="analytic"`` (default here; the CLI's default is simgrid) runs the closed
    forms in this process; ``engine="simgrid"`` also plays the phases on the simulated
    cluster, in a child ``ringsim infer`` process (one SimGrid engine per process).
    There is no typed spec for infer, so that child gets the flags as given and
    validates them itself; its error line becomes :class:`InputError`.
    """
    args = ["infer", *_flag_args({"engine": engine, **flags}), "--json"]
    if engine == "analytic":
        return _in_process(args)
    return _child(args, timeout_s)


def verify(q=None, k=None, v=None, **flags):
    """Ring attention against the float64 reference on NumPy arrays, as ``ringsim verify``.

    ``q``: [seq, heads, head_dim]; ``k``, ``v``: [seq, kv_heads, head_dim]; float16,
    float32 (fp32 compute) or float64 (fp64 compute), any memory order (copied C-contiguous).
    Without arrays, random inputs of ``block``, ``heads``, ``head_dim`` ... are used.
    Flags: ``devices`` (4), ``layout`` ("ring"), ``causal`` (True), ``pass_="fwdbwd"``
    (``pass`` is a Python keyword), ``mode="train"|"prefill"|"decode"``, ``cached``,
    ``variant``, ``decode_tokens``, ``tolerance_factor``, ...

    Returns the ``--json`` object (``matches``, ``errors`` per tensor, ``work``, ...) with
    ``o`` ([seq, heads, head_dim]) and ``lse`` ([seq, heads]) added as NumPy arrays.
    Runs in this process; the arrays travel as .npy files in a temporary folder, read
    by the CLI's own reader, so messages are the CLI's for files named q.npy, k.npy, v.npy.
    """
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="ringsim-verify-") as tmp:
        prefix = tmp + os.sep
        args = ["verify"]
        for name, array in (("q", q), ("k", k), ("v", v)):
            if array is not None:
                path = prefix + name + ".npy"
                np.save(path, np.ascontiguousarray(array))
                args += ["--" + name, path]
        args += ["--out", prefix + "o.npy", "--lse-out", prefix + "lse.npy"]
        args += [*_flag_args(flags), "--json"]
        code, out, err = _ringsim.cli(args)
        # Name the temporary files as the caller knows them: q.npy, not /tmp/.../q.npy.
        out, err = out.replace(prefix, ""), err.replace(prefix, "")
        result = _result(args, code, out, err)
        result["o"] = np.load(prefix + "o.npy")
        result["lse"] = np.load(prefix + "lse.npy")
    return result


def _axis_text(values):
    """An axis as ``ringsim sweep`` takes it: "8,64", "2K..32K:x2", or a list."""
    if isinstance(values, (list, tuple)):
        return ",".join(_text(v) for v in values)
    return _text(values)


_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _typed(text):
    """A swept flag's value as the CLI reads it: "8" -> 8, "2K" -> 2048 (binary, as
    ``--block`` takes it), "1e15" -> 1e15, "zigzag" -> "zigzag"."""
    m = re.fullmatch(r"(\d+)([KMGTkmgt]?)", text)
    if m:
        return int(m.group(1)) * _BINARY.get(m.group(2).upper(), 1)
    if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        return float(text)
    return text


def records(rows):
    """Sweep rows flattened: one dict per point with each swept flag (``devices``, ...)
    typed as the CLI reads it (``block`` "2K" is the int 2048), ``status``, ``error`` and
    every scalar of the run summary (``time_s``, ...)."""
    out = []
    for row in rows:
        rec = {flag.lstrip("-").replace("-", "_"): _typed(value)
               for flag, value in row["params"].items()}
        rec["status"] = row["status"]
        rec["error"] = row.get("error", "")
        for key, value in row.get("summary", {}).items():
            if not isinstance(value, (dict, list)):
                rec.setdefault(key, value)
        out.append(rec)
    return out


def sweep(axes, jobs=1, out=None, timeout_s=None, frame=None, force_new=False, **base_flags):
    """A grid of ``ringsim run`` configurations, one child process per point.

    ``axes``: {flag: values}, flags as keyword names or ``--flags`` (``{"devices":
    "8,64,512", "layout": ["ring", "zigzag"]}``; ranges as ``ringsim sweep`` takes them:
    ``"2K..32K:x2"``, ``"1..8"``), first axis slowest. ``base_flags``: every other flag of
    ``ringsim run``. ``jobs``: children at once; ``out``: a JSONL journal (a rerun
    resumes from it; one computed under other base flags, catalog, profile or version is
    refused with :class:`InputError`, unless ``force_new=True`` keeps it aside as
    ``FILE.N.jsonl`` and starts anew); ``timeout_s``: per point. Ctrl-C stops the points
    in flight and raises ``KeyboardInterrupt``; the rows finished so far stay in ``out``.

    Returns a pandas DataFrame of :func:`records` when pandas imports (and ``frame`` is
    not False), else the list of row dicts (``index``, ``key``, ``params``, ``status``,
    ``summary`` or ``error``) in grid order. A point the CLI refuses is a failed row.
    """
    if not _ringsim.HAVE_SWEEP:
        raise NotImplementedError("this build has no sweep library (sweep/); rebuild _ringsim")
    axis_list = []
    for flag, values in axes.items():
        name = flag if flag.startswith("--") else "--" + flag.replace("_", "-")
        axis_list.append((name, _axis_text(values)))
    base = _flag_args(base_flags)
    rows = [json.loads(t) for t in
            _ringsim.sweep(base, axis_list, int(jobs), out or "", float(timeout_s or 0),
                           bool(force_new))]
    if frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if frame:
            raise
        return rows
    return pandas.DataFrame(records(rows))
