"""Sweep journals from Python (docs/sweep.md, "The journal"): the same header check as the
CLI's, so a journal computed under other base flags is refused with the CLI's line, and
force_new keeps it aside; an output that is no .jsonl file is refused before any point."""

import json

import pytest

import ringsim


def needs_sweep():
    if not ringsim._ringsim.HAVE_SWEEP:
        pytest.skip("SKIPPED: this build has no sweep library (sweep/), so _ringsim has no sweep")


def test_journal_under_other_flags_is_refused_and_force_new_keeps_it(tmp_path):
    needs_sweep()
    out = str(tmp_path / "rows.jsonl")
    axes = {"devices": "2,4"}
    first = ringsim.sweep(axes, engine="analytic", block=256, gpu="h100-sxm", out=out,
                          frame=False)
    with open(out) as f:
        kept = f.read()
    assert json.loads(kept.splitlines()[0])["base"]["--gpu"] == "h100-sxm"
    with pytest.raises(ringsim.InputError) as e:
        ringsim.sweep(axes, engine="analytic", block=256, gpu="a100-80gb", out=out, frame=False)
    assert str(e.value) == (f"--out {out}: its rows were computed under other settings (--gpu: "
                            "h100-sxm in the journal, a100-80gb now); rerun with those, or add "
                            "--force-new to keep it and start a new journal beside it")
    # The same settings resume: nothing runs again, the same rows come back.
    assert ringsim.sweep(axes, engine="analytic", block=256, gpu="h100-sxm", out=out,
                         frame=False) == first
    other = ringsim.sweep(axes, engine="analytic", block=256, gpu="a100-80gb", out=out,
                          frame=False, force_new=True)
    assert "a100" in other[0]["summary"]["hardware"]
    with open(tmp_path / "rows.1.jsonl") as f:
        assert f.read() == kept


def test_output_that_is_no_journal_is_refused(tmp_path):
    needs_sweep()
    for bad in ("-", str(tmp_path / "rows.csv")):
        with pytest.raises(ringsim.InputError) as e:
            ringsim.sweep({"devices": "2,4"}, engine="analytic", out=bad, frame=False)
        assert str(e.value) == f"--out {bad}: name a .jsonl file (the journal)"
