"""The ringsim Python module (python/, docs/python.md) against the ringsim program.

Every dict the module returns must be the object `ringsim ... --json` prints for the
same flags, and every refusal the CLI's message: the module runs the CLI's own code,
so these tests compare with the program itself (run with subprocess).
Run by ctest as `python.pytest` (PYTHONPATH=build/python).
"""

import json
import os
import signal
import subprocess

import numpy as np
import pytest

import ringsim

# The program of the same build (set by CMake); else the one the module's children use.
BIN = os.environ.get("RINGSIM_TEST_BIN") or ringsim._ringsim.BUILD_RINGSIM_BIN


def cli_json(*args):
    r = subprocess.run([BIN, *args, "--json"], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def cli_error(*args):
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    assert r.returncode == 2, (r.returncode, r.stderr)
    prefix = "ringsim: error: "
    line = r.stderr.strip().splitlines()[0]
    assert line.startswith(prefix), line
    return line[len(prefix):]


def test_import_and_docstrings():
    for f in (ringsim.catalog, ringsim.run, ringsim.minblock, ringsim.plan, ringsim.infer,
              ringsim.verify, ringsim.sweep):
        assert f.__doc__ and len(f.__doc__) > 40, f.__name__
    assert issubclass(ringsim.InputError, Exception)


def test_catalog_lists_h100_and_models():
    c = ringsim.catalog()
    assert "h100-sxm" in [d["name"] for d in c["devices"]]
    for key in ("devices", "interconnects", "clusters", "kernels", "models"):
        assert c[key], key
    assert "llama3-8b" in [m["name"] for m in c["models"]]
    assert c == cli_json("hardware")


def test_run_analytic_equals_cli():
    py = ringsim.run(engine="analytic", devices=64, block=8192, layout="zigzag", causal=False)
    cli = cli_json("run", "--engine", "analytic", "--devices", "64", "--block", "8192",
                   "--layout", "zigzag", "--no-causal")
    assert py == cli
    assert py["engine"] == "analytic"
    assert py["causal"] is False


def test_run_simgrid_in_a_child_equals_cli():
    py = ringsim.run(devices=16, block=2048)
    assert py["engine"] == "simgrid"
    assert py == cli_json("run", "--devices", "16", "--block", "2048")
    # Two simulations in one Python process: each has its own child (one engine per process).
    assert ringsim.run(engine="simgrid", devices=8, block=2048)["engine"] == "simgrid"
    # proc::run's signal forwarding must not stay installed in Python.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("engine", ["analytic", "simgrid"])
def test_bad_input_raises_the_cli_message(engine):
    with pytest.raises(ringsim.InputError) as e:
        ringsim.run(engine=engine, devices=0)
    assert str(e.value).startswith("--devices:")
    assert str(e.value) == cli_error("run", "--engine", engine, "--devices", "0")
    # Names checked against the catalog: in the child for simgrid, here for analytic.
    with pytest.raises(ringsim.InputError) as e:
        ringsim.run(engine=engine, gpu="no-such-gpu")
    assert str(e.value) == cli_error("run", "--engine", engine, "--gpu", "no-such-gpu")
    # A flag the CLI does not have.
    with pytest.raises(ringsim.InputError) as e:
        ringsim.run(engine=engine, no_such_flag=1)
    assert str(e.value) == cli_error("run", "--engine", engine, "--no-such-flag", "1")


def test_bad_engine_and_output_to_stdout():
    with pytest.raises(ringsim.InputError) as e:
        ringsim.run(engine="fast")
    assert str(e.value) == cli_error("run", "--engine", "fast")
    with pytest.raises(ringsim.InputError, match="standard output"):
        ringsim.run(engine="analytic", trace="-")


def test_minblock():
    r = ringsim.minblock()
    assert {"paper_table2", "rows", "assumptions"} <= r.keys()
    assert r == cli_json("minblock")
    pair = ringsim.minblock(flops=989e12, bandwidth=50e9)
    assert pair.keys() == r.keys()  # one shape whatever the flags
    assert pair["rows"][0]["paper"] == pytest.approx(989e12 / 50e9)
    assert pair == cli_json("minblock", "--flops", "989e12", "--bandwidth", "50e9")
    with pytest.raises(ringsim.InputError) as e:
        ringsim.minblock(flops=1e15)
    assert str(e.value) == cli_error("minblock", "--flops", "1e15")


def test_plan_training_and_inference():
    r = ringsim.plan(gpus=64, context="128K")
    assert {"configs", "recheck", "engine"} <= r.keys() and r["configs"]
    assert r == cli_json("plan", "--gpus", "64", "--context", "128K")
    i = ringsim.plan(inference=True, gpus=16, context="128K")
    assert i["mode"] == "inference" and i["configs"]
    assert i == cli_json("plan", "--inference", "--gpus", "16", "--context", "128K")
    with pytest.raises(ringsim.InputError) as e:
        ringsim.plan(context="128K")
    assert str(e.value) == cli_error("plan", "--context", "128K")


def test_infer_both_engines():
    a = ringsim.infer(context="128K", gpus=16)
    assert a["engine"] == "analytic" and {"analytic", "memory", "variant"} <= a.keys()
    assert a == cli_json("infer", "--engine", "analytic", "--context", "128K", "--gpus", "16")
    s = ringsim.infer(engine="simgrid", context="128K", gpus=16)
    assert s["engine"] == "simgrid" and "simgrid" in s
    with pytest.raises(ringsim.InputError) as e:
        ringsim.infer(engine="simgrid", gpus=16)
    assert str(e.value) == cli_error("infer", "--gpus", "16")


def reference_attention(q, k, v, causal):
    """float64 softmax attention with GQA: o [S, H, D], lse [S, H]."""
    S, H, D = q.shape
    group = H // k.shape[1]
    o = np.empty((S, H, D))
    lse = np.empty((S, H))
    for h in range(H):
        s = q[:, h, :] @ k[:, h // group, :].T / np.sqrt(D)
        if causal:
            s = np.where(np.tril(np.ones((S, S), dtype=bool)), s, -np.inf)
        m = s.max(axis=1, keepdims=True)
        p = np.exp(s - m)
        lse[:, h] = (m + np.log(p.sum(axis=1, keepdims=True)))[:, 0]
        o[:, h, :] = (p / p.sum(axis=1, keepdims=True)) @ v[:, h // group, :]
    return o, lse


@pytest.mark.parametrize("layout", ["ring", "zigzag"])
def test_verify_numpy_float64_matches_full_attention(layout):
    rng = np.random.default_rng(7)
    S, H, KV, D = 64, 4, 2, 16
    q, k, v = (rng.standard_normal((S, h, D)) for h in (H, KV, KV))
    r = ringsim.verify(q, k, v, devices=4, layout=layout)
    assert r["matches"] is True and r["compute"] == "fp64"
    assert all(e["ok"] for e in r["errors"])
    assert r["o"].shape == (S, H, D) and r["o"].dtype == np.float64
    assert r["lse"].shape == (S, H)
    o, lse = reference_attention(q, k, v, causal=True)
    np.testing.assert_allclose(r["o"], o, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r["lse"], lse, rtol=0, atol=1e-12)


def test_verify_float32_non_contiguous_and_tolerance():
    rng = np.random.default_rng(3)
    q = np.asfortranarray(rng.standard_normal((32, 2, 8)).astype(np.float32))
    k = rng.standard_normal((32, 2, 8)).astype(np.float32)
    v = rng.standard_normal((32, 2, 8)).astype(np.float32)
    r = ringsim.verify(q, k, v, devices=4, causal=False)
    assert r["matches"] is True and r["compute"] == "fp32" and r["o"].dtype == np.float32
    o, _ = reference_attention(q.astype(np.float64), k.astype(np.float64),
                               v.astype(np.float64), causal=False)
    np.testing.assert_allclose(r["o"], o, atol=1e-5)
    # A tolerance far below fp32 rounding: the check must fail, and say so.
    strict = ringsim.verify(q, k, v, devices=4, causal=False, tolerance_factor=1e-9)
    assert strict["matches"] is False
    assert not all(e["ok"] for e in strict["errors"])


def test_verify_bad_arrays_and_inference_modes():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((16, 2, 16))
    k = rng.standard_normal((16, 2, 8))
    with pytest.raises(ringsim.InputError) as e:
        ringsim.verify(q, k, k)
    assert str(e.value) == "--k k.npy: head_dim 8 differs from --q's 16"
    with pytest.raises(ringsim.InputError) as e:
        ringsim.verify(q)
    assert str(e.value).startswith("--q/--k/--v:")
    pre = ringsim.verify(mode="prefill", devices=4, block=8, cached=16, variant="pass-q")
    assert pre["matches"] is True and pre["mode"] == "prefill" and pre["variant"] == "pass-q"
    dec = ringsim.verify(mode="decode", devices=4, cached=32)
    assert dec["matches"] is True and dec["mode"] == "decode"


def test_sweep_rows_and_records():
    if not ringsim._ringsim.HAVE_SWEEP:
        pytest.skip("SKIPPED: this build has no sweep library (sweep/), so _ringsim has no sweep")
    rows = ringsim.sweep({"devices": "8,16", "layout": ["ring", "zigzag"]}, jobs=2,
                         engine="analytic", block=2048, frame=False)
    assert [r["params"] for r in rows] == [
        {"--devices": d, "--layout": l} for d in ("8", "16") for l in ("ring", "zigzag")]
    assert all(r["status"] == "ok" for r in rows)
    one = ringsim.run(engine="analytic", devices=16, layout="zigzag", block=2048)
    assert rows[3]["summary"]["time_s"] == one["time_s"]
    recs = ringsim.records(rows)
    # Typed as the CLI reads them: numbers, not the strings the journal keeps.
    assert recs[0]["devices"] == 8 and recs[0]["layout"] == "ring" and "time_s" in recs[0]
    assert ringsim._typed("2K") == 2048 and ringsim._typed("1e15") == 1e15
    assert ringsim._typed("0.5") == 0.5 and ringsim._typed("fa3") == "fa3"
    # A point the CLI refuses is a failed row with its message; the others still run.
    bad = ringsim.sweep({"devices": [0, 8]}, engine="analytic", frame=False)
    assert bad[0]["status"] == "failed" and bad[0]["error"].startswith("--devices:")
    assert bad[1]["status"] == "ok"


def test_sweep_dataframe_when_pandas_imports():
    if not ringsim._ringsim.HAVE_SWEEP:
        pytest.skip("SKIPPED: this build has no sweep library (sweep/), so _ringsim has no sweep")
    pandas = pytest.importorskip("pandas", reason="SKIPPED: pandas is not installed; "
                                 "sweep() then returns a list of row dicts (tested above)")
    df = ringsim.sweep({"block": "1K..4K:x2"}, engine="analytic", devices=8)
    assert isinstance(df, pandas.DataFrame)
    assert list(df["block"]) == [1024, 2048, 4096] and "time_s" in df.columns
    assert df["block"].dtype.kind == "i" and df["time_s"].dtype.kind == "f"


def test_version_is_the_cli_version():
    r = subprocess.run([BIN, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ringsim " + ringsim.__version__
    assert ringsim.__version__.count(".") == 2
