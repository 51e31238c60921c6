#!/usr/bin/env python3
"""The docs' two checkers on made-up output: check_output.py (a transcript's
shown output) and json_keys.py (docs/json.md's keys and the frozen list),
each rule once where it passes and once where it must fail."""
import contextlib
import io
import os
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_output as co  # noqa: E402
import json_keys as jk  # noqa: E402


class Lines(unittest.TestCase):
    def ok(self, exp, got, rel=0.0):
        return co.match_lines(exp.split("\n"), got.split("\n"), rel) is None

    def test_numbers_match_to_the_digits_shown(self):
        self.assertTrue(self.ok("TTFT 74.4 s", "TTFT 74.398 s"))
        self.assertFalse(self.ok("TTFT 74.4 s", "TTFT 74.46 s"))
        self.assertFalse(self.ok("min block 4226", "min block 4738"))
        self.assertTrue(self.ok("x 1.245e-04", "x 1.2449e-04"))

    def test_tolerance_widens_the_match(self):
        self.assertFalse(self.ok("err 2.0e-07", "err 3.6e-07"))
        self.assertTrue(self.ok("err 2.0e-07", "err 3.6e-07", rel=1.0))

    def test_blanks_collapse_but_text_must_agree(self):
        self.assertTrue(self.ok("rank  config   dp", "rank config      dp   "))
        self.assertFalse(self.ok("zigzag cp 16", "ring cp 16"))
        self.assertFalse(self.ok("fwd 21-62; bwd 11-62", "fwd 21-62; bwd 11-62none"))

    def test_ellipsis_lines_and_inline(self):
        self.assertTrue(self.ok("a\n...\nd", "a\nb\nc\nd"))
        self.assertTrue(self.ok("a\n...", "a\nb"))
        self.assertFalse(self.ok("a\nd", "a\nb\nd"))
        self.assertTrue(self.ok("O ... 1.245e-04", "O 3.1e-07 2.2e-07 1.245e-04"))
        self.assertFalse(self.ok("O ... 1.245e-04", "O 3.1e-07 2.2e-07 9.9e-04"))

    def test_more_output_than_shown_fails_without_ellipsis(self):
        self.assertFalse(self.ok("a", "a\nb"))
        self.assertFalse(self.ok("a\nb", "a"))


class Json(unittest.TestCase):
    def diff(self, exp, got):
        return co.json_diff(co.load_expected(exp), co.load(got), 0.0)

    def test_subset_with_ellipsis(self):
        got = '{"min_block": 1040.0, "min_seq_per_device": 6240.0, "rows": []}'
        self.assertIsNone(self.diff('{"min_block": 1040.0, ...}', got))
        self.assertIn("min_block", self.diff('{"min_block": 1040.0, ...}', '{"rows": []}'))
        self.assertIn("does not show", self.diff('{"min_block": 1040.0}', got))

    def test_numbers_round_as_shown(self):
        self.assertIsNone(self.diff('{"c": 2080.0}', '{"c": 2079.9999999999995}'))
        self.assertIsNotNone(self.diff('{"c": 2080.0}', '{"c": 2081}'))
        self.assertIsNotNone(self.diff('{"s": "ring"}', '{"s": "zigzag"}'))

    def test_arrays(self):
        self.assertIsNone(self.diff('[1, ...]', '[1, 2, 3]'))
        self.assertIsNotNone(self.diff('[1, 2]', '[1, 2, 3]'))


DOC = """# made up
**The version.** schema_version is 1.

## `fake`

```sh
fake-ringsim
```

| object | keys |
|---|---|
| top | `a`, `b`, `inner`, `rows`, `schema_version` |
| `inner` | `c` |
| `rows[]` | `params` |
| `rows[].params` | `<flag>` (data) |
"""
GOOD = ('{"a": 1, "b": null, "schema_version": 1, "inner": {"c": 2},'
        ' "rows": [{"params": {"--devices": "8", "x": {"y": 1}}}]}')


class Keys(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.bin = os.path.join(self.dir, "bin")
        os.mkdir(self.bin)
        self.doc = os.path.join(self.dir, "json.md")
        self.write(DOC)
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(jk.freeze(self.doc, self.dir), 0)  # version 1's keys

    def write(self, doc):
        with open(self.doc, "w") as f:
            f.write(doc)

    def program(self, printed):
        path = os.path.join(self.bin, "fake-ringsim")
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\ncat <<'EOF'\n{printed}\nEOF\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)

    def check(self, doc=DOC):
        """(exit code, what it printed)"""
        self.write(doc)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = jk.check(self.doc, self.bin, self.dir, "fake")
        return rc, out.getvalue()

    def test_agreeing_doc_passes(self):
        self.program(GOOD)
        self.assertEqual(self.check(), (0, self.check()[1]))
        self.assertIn("7 documented keys", self.check()[1])

    def test_undocumented_key_fails(self):
        self.program(GOOD.replace('"c": 2', '"c": 2, "new": 3'))
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("inner: `new` is printed but not documented", out)

    def test_key_no_command_prints_fails(self):
        self.program(GOOD.replace('"b": null, ', ""))
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("top: `b` is documented but no command printed it", out)

    def test_removed_key_fails_even_when_the_doc_follows(self):
        self.program(GOOD.replace('"b": null, ', ""))
        doc = DOC.replace("`a`, `b`,", "`a`,")
        rc, out = self.check(doc)
        self.assertEqual(rc, 1)
        self.assertIn("`b` left the doc, but schema_version 1 froze it", out)
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(jk.freeze(self.doc, self.dir), 1)  # refused: v1 keeps b
        # With the version bumped (doc, program) and v2 frozen, it passes.
        doc2 = doc.replace("schema_version is 1", "schema_version is 2")
        self.write(doc2)
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(jk.freeze(self.doc, self.dir), 0)
        self.program(GOOD.replace('"b": null, ', "").replace('"schema_version": 1', '"schema_version": 2'))
        self.assertEqual(self.check(doc2)[0], 0)

    def test_wrong_version_fails(self):
        self.program(GOOD.replace('"schema_version": 1', '"schema_version": 2'))
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("schema_version 2 printed, the doc says 1", out)

    def test_missing_program_skips_with_the_reason(self):
        rc, out = self.check(DOC.replace("fake-ringsim", "ringsim-nothere"))
        self.assertEqual(rc, 77)
        self.assertIn("SKIPPED: ringsim-nothere is not built", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
