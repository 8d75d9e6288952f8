"""Similarity (issue 21, item 1): a renamed-and-reformatted copy ranks above two independent correct
solutions of the same exercise, which share the contract's lines and are not flagged; the stub never
counts; known sources (the reference) are compared too; the CLI writes the side-by-side page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.cohort.similarity import (DISCLAIMER, THRESHOLD, Source, compare_sources, known_sources, normalise)

ROOT = Path(__file__).resolve().parent.parent

ORIGINAL = '''import numpy as np


def softmax(x, axis=-1):
    """Stable softmax."""
    top = np.amax(x, axis=axis, keepdims=True)
    top[np.isneginf(top)] = 0  # all -inf slices
    weights = np.exp(x - top)
    norm = np.sum(weights, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = weights / norm
    return np.nan_to_num(probs, nan=0.0).astype(x.dtype, copy=False)
'''

# the same file renamed, reformatted, re-commented and re-documented
COPY = '''import numpy as xp

# my own softmax, written from scratch
def softmax(values, axis = -1):
    """Computes softmax along an axis.

    Subtracts the maximum first so that exp never overflows.
    """
    m = xp.amax(values,
                axis=axis, keepdims=True)
    m[xp.isneginf(m)] = 0
    e = xp.exp(values - m)   # exponentials
    s = xp.sum(e, axis=axis,
               keepdims=True)
    with xp.errstate(invalid="ignore",
                     divide="ignore"):
        p = (e / s)
    return xp.nan_to_num(p, nan=0.0).astype(values.dtype, copy=False)
'''

# an independent correct solution: moves the axis last and works row by row in log space
INDEPENDENT = '''import numpy as np


def _rows(a):
    best = a.max(axis=-1, keepdims=True)
    best[~np.isfinite(best)] = 0.0
    logz = np.log(np.exp(a - best).sum(axis=-1, keepdims=True)) + best
    res = np.exp(a - logz)
    res[np.isnan(res)] = 0.0
    return res


def softmax(x, axis=-1):
    moved = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    return np.moveaxis(_rows(moved), -1, axis).astype(x.dtype)
'''

# another independent one: a loop over the flattened slices with logaddexp
INDEPENDENT_2 = '''import numpy as np


def softmax(x, axis=-1):
    a = np.swapaxes(x, axis, -1)
    flat = a.reshape(-1, a.shape[-1]).astype(np.float64)
    rows = []
    for r in flat:
        lse = np.logaddexp.reduce(r) if r.size else 0.0
        rows.append(np.zeros_like(r) if np.isneginf(lse) else np.exp(r - lse))
    out = np.array(rows).reshape(a.shape)
    return np.swapaxes(out, axis, -1).astype(x.dtype)
'''


def _stubs():
    return known_sources("softmax")[1]


def test_a_renamed_and_reformatted_copy_normalises_to_the_same_text():
    assert normalise(ORIGINAL) == normalise(COPY)
    assert "Stable softmax" not in normalise(ORIGINAL) and "numpy.amax" in normalise(COPY)


def test_the_copy_ranks_above_independent_solutions_which_are_not_flagged():
    cands = [Source(n, "candidate", t) for n, t in
             (("orig", ORIGINAL), ("copy", COPY), ("indep", INDEPENDENT), ("indep2", INDEPENDENT_2))]
    pairs = compare_sources("softmax", cands, [], stubs=_stubs())
    by = {frozenset((p.a, p.b)): p for p in pairs}
    copied = by[frozenset(("orig", "copy"))]
    assert pairs[0] is copied and copied.flagged and copied.score > 0.95
    others = [p for p in pairs if p is not copied]
    assert all(not p.flagged for p in others), [(p.a, p.b, p.score) for p in others]
    assert by[frozenset(("indep", "indep2"))].score < THRESHOLD and max(p.score for p in others) < copied.score - 0.3
    assert "<mark>" in copied.html_a and "<mark>" in copied.html_b


def test_the_stubs_own_lines_never_count():
    stub = (ROOT / "exercises/softmax/stub.py").read_text()
    pairs = compare_sources("softmax", [Source("s1", "candidate", stub), Source("s2", "candidate", stub)], [],
                            stubs=_stubs())
    assert pairs[0].score == 0.0 and not pairs[0].flagged
    alone = compare_sources("softmax", [Source("s1", "candidate", stub), Source("s2", "candidate", stub)], [])
    assert alone[0].score == 1.0  # without the stub as boilerplate the same files are one copy


def test_a_copy_of_the_reference_is_flagged_against_the_reference():
    known, stubs = known_sources("softmax")
    reference = next(k for k in known if k.label == "reference/softmax.py")
    renamed = re.sub(r"\bx\b", "logits_in", reference.text).replace("    ", "  ")
    assert renamed != reference.text
    pairs = compare_sources("softmax", [Source("eve", "candidate", renamed), Source("ann", "candidate", INDEPENDENT)],
                            known, stubs=stubs)
    top = pairs[0]
    assert (top.a, top.kind, top.flagged) == ("eve", "reference", True) and top.b == "reference/softmax.py"
    assert sum(1 for p in pairs if p.kind == "mistake" and p.a == "eve") == 1  # one closest mutant, not the bank
    assert not any(p.flagged for p in pairs if p.a == "ann")


@pytest.mark.parametrize("exercise", ["softmax", "attention_scores", "mha", "causal_mask", "kv_cache", "gqa",
                                      "positional_encoding", "rope", "transformer_block", "flash_attention"])
def test_the_repositorys_independent_correct_samples_are_not_flagged(exercise):
    samples = sorted((ROOT / "submissions/samples" / exercise).glob("correct_*.py"))
    cands = [Source(p.stem, "candidate", p.read_text()) for p in samples]
    known, stubs = known_sources(exercise)
    pairs = compare_sources(exercise, cands, [k for k in known if k.kind != "sample"], stubs=stubs)
    assert len(cands) >= 5 and not [p.to_json() for p in pairs if p.flagged]


def test_cli_similarity_ranks_flags_and_writes_the_side_by_side_page(tmp_path):
    root = tmp_path / "cohort"
    root.mkdir()
    for name, text in (("orig", ORIGINAL), ("copy", COPY), ("indep", INDEPENDENT)):
        (root / f"{name}.py").write_text(text)
    public = tmp_path / "public"
    public.mkdir()
    (public / "blog_softmax.py").write_text(INDEPENDENT_2.replace("rows", "acc"))
    page = tmp_path / "sim.html"
    result = CliRunner().invoke(main, ["similarity", str(root), "--exercise", "softmax", "--against", str(public),
                                       "-o", str(page)])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.output.splitlines() if "~" in ln]
    assert lines[0].startswith("FLAG") and {"orig", "copy"} <= set(lines[0].split())
    assert sum(ln.startswith("FLAG") for ln in lines) == 1
    assert DISCLAIMER in result.output
    html = page.read_text()
    assert "never a verdict" in html and "<mark>" in html and "public/blog_softmax.py" in html
    as_json = CliRunner().invoke(main, ["similarity", str(root), "--exercise", "softmax", "--json", "-o", str(page)])
    doc = json.loads(as_json.output)
    assert doc[0]["flagged"] and {doc[0]["a"], doc[0]["b"]} == {"orig", "copy"}
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = CliRunner().invoke(main, ["similarity", str(empty), "-o", str(page)])
    assert bad.exit_code == 2 and bad.output.startswith("error: nothing to compare")
