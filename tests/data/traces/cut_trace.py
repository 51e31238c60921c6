#!/usr/bin/env python3
"""Cut a published torch.profiler trace to what `ringsim profile --from-trace`
reads, for test data: GPU kernels, CUDA launches and CPU operators with the
args that name shapes, masks, launches and NCCL messages. Everything else (the
exporter's metadata with its environment, python_function events, flow arrows,
memory events, call stacks) is left out, and the output is written with sorted
keys and gzip's mtime 0, so the same input gives the same bytes.

    cut_trace.py IN.json[.gz] OUT.json.gz [MS]

MS keeps only the events that start within MS milliseconds of the first.
"""
import gzip
import json
import sys

KEEP_CATS = {"kernel", "Kernel", "cpu_op", "Operator", "user_annotation",
             "cuda_runtime", "cuda_driver", "Runtime", "Driver"}
KEEP_ARGS = {"Input Dims", "Input type", "Concrete Inputs", "External id", "correlation",
             "device", "stream", "grid", "block", "Collective name", "In msg nelems",
             "Out msg nelems", "Group size", "dtype"}
KEEP_TOP = {"schemaVersion", "deviceProperties", "record_shapes", "cuda_runtime_version",
            "cuda_driver_version", "baseTimeNanoseconds", "displayTimeUnit"}


def cut(doc, window_ms=None):
    events = []
    kept = [e for e in doc.get("traceEvents", []) if e.get("cat") in KEEP_CATS and e.get("ph") == "X"]
    t0 = min((e["ts"] for e in kept), default=0)
    for e in kept:
        if window_ms is not None and e["ts"] - t0 > window_ms * 1e3:
            continue
        out = {k: e[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur") if k in e}
        args = {k: v for k, v in e.get("args", {}).items() if k in KEEP_ARGS}
        if args:
            out["args"] = args
        events.append(out)
    top = {k: v for k, v in doc.items() if k in KEEP_TOP}
    top["traceEvents"] = events
    return top


def main():
    src, dst = sys.argv[1], sys.argv[2]
    window = float(sys.argv[3]) if len(sys.argv) > 3 else None
    opener = gzip.open if open(src, "rb").read(2) == b"\x1f\x8b" else open
    with opener(src, "rt") as f:
        doc = json.load(f)
    text = json.dumps(cut(doc, window), sort_keys=True, separators=(",", ":"))
    with open(dst, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        f.write(text.encode())


if __name__ == "__main__":
    main()
