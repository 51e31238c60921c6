"""Ctrl-C and kill in the ringsim Python module (docs/python.md, "Ctrl-C").

Each test starts a fresh python3 that imports ringsim and makes a call that runs a child
``ringsim`` for seconds; this test sends it a real signal mid-call (os.kill, as a
terminal's Ctrl-C or a `kill` would) and reads what the script reports. The call must stop
its children and raise KeyboardInterrupt, from the main thread and with worker threads;
afterwards the process's signal handlers must be exactly Python's again (read with
sigaction through ctypes), so a second Ctrl-C is plain Python's KeyboardInterrupt; a
SIGTERM ends the interpreter as it would without ringsim; an interrupted sweep keeps
every finished row in its journal.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ringsim

# What every script starts with: the handler addresses the OS holds, and a check that
# no child process of this interpreter is left.
PRELUDE = textwrap.dedent("""
    import ctypes, json, os, signal, sys, threading, time
    import ringsim
    libc = ctypes.CDLL(None, use_errno=True)

    def handlers():
        out = {}
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            buf = ctypes.create_string_buffer(256)  # struct sigaction: the handler first
            assert libc.sigaction(sig, None, buf) == 0
            out[int(sig)] = int.from_bytes(buf.raw[:8], "little")
        return out

    def children():
        kids = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                            kids.append(int(pid))
                except OSError:
                    pass
        return kids

    def report(**kw):
        print(json.dumps(kw), flush=True)

    # 'ready' once n children run: each call installs its signal forwarding before it
    # starts its child, so a signal sent after 'ready' reaches every call (a fixed
    # delay was not enough on a loaded machine).
    def ready_when_children(n):
        def wait():
            deadline = time.monotonic() + 120
            while len(children()) < n and time.monotonic() < deadline:
                time.sleep(0.005)
            print("ready", flush=True)
        threading.Thread(target=wait, daemon=True).start()

    BEFORE = handlers()
    # A simulation that takes seconds in its child ringsim.
    SLOW = dict(devices=1024, block=16384)
""")


def start(body):
    """python3 running PRELUDE + body; returns the process once it printed 'ready'."""
    script = PRELUDE + textwrap.dedent(body)
    # Unbuffered bytes: a buffered readline may read past 'ready' into lines that
    # communicate() (which reads the pipe itself) would then never see.
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, bufsize=0, env=dict(os.environ))
    line = p.stdout.readline().decode()
    assert line.strip() == "ready", (line, p.stderr.read().decode())
    return p


def finish(p, timeout=120):
    out, err = (b.decode() for b in p.communicate(timeout=timeout))
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    return p.returncode, lines, err


def interrupt_mid_call(p, sig=signal.SIGINT, settle=0.2):
    """The signal once the calls run (the script printed 'ready': their children are up)."""
    time.sleep(settle)
    p.send_signal(sig)


def wait_for_rows(journal, n, limit_s=120):
    """Until the journal holds n rows after its header line."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            with open(journal) as f:
                if len(f.read().splitlines()) > n:
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.005)
    raise AssertionError(f"{journal}: fewer than {n} rows after {limit_s} s")


def test_ctrl_c_during_a_child_run_raises_keyboardinterrupt_and_restores_python():
    p = start("""
        ready_when_children(1)
        try:
            ringsim.run(**SLOW)
            report(result="finished")
        except KeyboardInterrupt:
            report(result="KeyboardInterrupt", children=children(),
                   restored=handlers() == BEFORE,
                   default=signal.getsignal(signal.SIGINT) is signal.default_int_handler)
        # A second Ctrl-C, after the call: plain Python.
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
            report(second="nothing")
        except KeyboardInterrupt:
            report(second="KeyboardInterrupt")
    """)
    interrupt_mid_call(p)
    code, lines, err = finish(p)
    assert code == 0, err
    assert lines[0] == {"result": "KeyboardInterrupt", "children": [], "restored": True,
                        "default": True}, err
    assert lines[1] == {"second": "KeyboardInterrupt"}


def test_ctrl_c_with_worker_threads_stops_every_call():
    p = start("""
        results = []
        def work():
            try:
                ringsim.run(**SLOW)
                results.append("finished")
            except KeyboardInterrupt:
                results.append("KeyboardInterrupt")
        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        ready_when_children(3)
        try:
            for t in threads:
                t.join()
            main = "joined"
        except KeyboardInterrupt:
            main = "KeyboardInterrupt"
        for t in threads:
            t.join()
        report(main=main, threads=sorted(results), children=children(),
               restored=handlers() == BEFORE)
    """)
    interrupt_mid_call(p)
    code, lines, err = finish(p)
    assert code == 0, err
    assert lines[0] == {"main": "KeyboardInterrupt", "threads": ["KeyboardInterrupt"] * 3,
                        "children": [], "restored": True}, err


def test_calls_from_threads_leave_no_handler_installed():
    # No signal at all: many overlapping calls in threads, then the handlers are Python's.
    p = start("""
        def work(i):
            ringsim.run(devices=8, block=256 * (1 + i % 3))
            ringsim.run(engine="analytic", devices=8)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("ready", flush=True)
        report(restored=handlers() == BEFORE, children=children())
    """)
    code, lines, err = finish(p)
    assert code == 0, err
    assert lines[0] == {"restored": True, "children": []}


def test_sigterm_during_a_call_ends_the_interpreter_as_plain_python():
    p = start("""
        ready_when_children(1)
        ringsim.run(**SLOW)
        report(result="finished")
    """)
    interrupt_mid_call(p, signal.SIGTERM)
    code, lines, err = finish(p)
    assert code == -signal.SIGTERM, (code, lines, err)
    assert lines == []


def test_interrupted_sweep_keeps_its_rows_for_the_rerun(tmp_path):
    if not ringsim._ringsim.HAVE_SWEEP:
        pytest.skip("SKIPPED: this build has no sweep library (sweep/), so _ringsim has no sweep")
    out = str(tmp_path / "rows.jsonl")
    axes = {"block": "1K..16K:x2"}
    p = start(f"""
        print("ready", flush=True)
        try:
            ringsim.sweep({axes!r}, devices=256, out={out!r}, frame=False)
            report(result="finished")
        except KeyboardInterrupt:
            report(result="KeyboardInterrupt", restored=handlers() == BEFORE)
    """)
    # Not after a fixed time: on a fast machine the whole sweep ends within seconds. Once
    # the first point is journalled, the others are still running or waiting.
    wait_for_rows(out, 1)
    p.send_signal(signal.SIGINT)
    code, lines, err = finish(p)
    assert code == 0, err
    assert lines[0] == {"result": "KeyboardInterrupt", "restored": True}, err
    with open(out) as f:
        kept = f.read().splitlines()
    assert 2 <= len(kept) < 6, kept  # the header, then some of the 5 points
    assert json.loads(kept[0])["journal"] == "ringsim-sweep-journal-1"
    rows = [json.loads(l) for l in kept[1:]]
    assert all(r["status"] == "ok" for r in rows), "a point stopped by Ctrl-C was journalled"
    # The rerun keeps them and computes the rest.
    done = ringsim.sweep(axes, devices=256, out=out, frame=False)
    assert len(done) == 5 and all(r["status"] == "ok" for r in done)
    for r in rows:
        r.pop("check")
        assert done[r["index"]] == r
