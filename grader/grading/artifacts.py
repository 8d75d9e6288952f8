"""Small arrays kept in a scorecard for the interviewer's HTML report.

Today: heatmaps of attention weights. For each *public* check, the first step whose golden
(float64 reference) output holds an array of attention-weight shape (at least 2-D, every value in
[0, 1], each row along the last axis summing to 1 or, for a fully masked row, to 0) contributes one
2-D slice of the candidate's array and of the reference's, cropped to ``MAX_SIDE`` x ``MAX_SIDE``.
Nothing here knows an exercise: the test is on the values. Hidden checks never contribute, and the
candidate view drops the whole section (``Scorecard.candidate_view``).

Failing checks come first, at most ``MAX_HEATMAPS`` per scorecard, so a scorecard grows by a few
kilobytes at most.
"""

from __future__ import annotations

import math
from typing import Iterator, Sequence

import numpy as np

from grader.run.channel import RunResults, StepResult
from grader.grading.exercise import Exercise
from grader.run.plan import Plan
from grader.grading.scorecard import CheckResult

MAX_SIDE = 16
MAX_HEATMAPS = 6
SIGNIFICANT_DIGITS = 6


def _leaves(desc: dict | None, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], dict]]:
    """``(path, descriptor)`` of every array in a result descriptor (tuples are walked)."""
    if not desc:
        return
    if desc.get("kind") == "array":
        yield path, desc
    elif desc.get("kind") == "tuple":
        for i, item in enumerate(desc.get("items", [])):
            yield from _leaves(item, (*path, i))


def looks_like_weights(a: np.ndarray) -> bool:
    """Whether ``a`` has the shape and values of attention weights (see the module docstring)."""
    if a.ndim < 2 or a.dtype.kind != "f" or a.shape[-1] < 2 or a.shape[-2] < 1 or a.size == 0:
        return False
    if not np.all(np.isfinite(a)) or a.min() < -1e-6 or a.max() > 1 + 1e-6:
        return False
    rows = a.sum(axis=-1)
    return bool(np.all(np.isclose(rows, 1.0, atol=1e-4) | np.isclose(rows, 0.0, atol=1e-4)))


def _matrix(a: np.ndarray) -> list[list[float | None]]:
    """The leading 2-D slice of ``a``, cropped, as JSON numbers (non-finite values as null)."""
    m = np.asarray(a, dtype=np.float64)[(0,) * (a.ndim - 2)][:MAX_SIDE, :MAX_SIDE]
    return [[float(f"{v:.{SIGNIFICANT_DIGITS}g}") if math.isfinite(v) else None for v in row] for row in m.tolist()]


def _array_at(result: StepResult | None, desc_path: tuple[int, ...]) -> np.ndarray | None:
    if result is None:
        return None
    desc = result.report.get("output")
    for i in desc_path:
        if not desc or desc.get("kind") != "tuple" or i >= len(desc.get("items", [])):
            return None
        desc = desc["items"][i]
    if not desc or desc.get("kind") != "array":
        return None
    return result.arrays.get(desc["key"])


def heatmaps(plan: Plan, checks: Sequence[CheckResult], candidate: RunResults,
             golden: RunResults) -> list[dict]:
    """One heatmap entry per public check that has attention weights (see the module docstring)."""
    public = [c for c in checks if c.visibility == "public"]
    ordered = [c for c in public if c.verdict != "passed"] + [c for c in public if c.verdict == "passed"]
    found = []
    for check in ordered:
        if len(found) >= MAX_HEATMAPS:
            break
        for step in plan.steps:
            if step.check != check.id or step.judge is None or step.id not in golden.steps:
                continue
            entry = _entry(step, golden.steps[step.id], candidate.steps.get(step.id))
            if entry:
                found.append(entry)
                break
    return found


def _entry(step, golden: StepResult, got: StepResult | None) -> dict | None:
    for path, _desc in _leaves(golden.report.get("output")):
        ref = _array_at(golden, path)
        if ref is None or not looks_like_weights(ref):
            continue
        cand = _array_at(got, path)
        if cand is None or tuple(cand.shape) != tuple(ref.shape) or cand.dtype.kind not in "fiub":
            return None
        lead = ", ".join("0" for _ in range(ref.ndim - 2))
        rows, cols = min(ref.shape[-2], MAX_SIDE), min(ref.shape[-1], MAX_SIDE)
        return {"check": step.check, "step": step.id, "case": step.describe,
                "output": "output" + "".join(f"[{i}]" for i in path),
                "shape": [int(n) for n in ref.shape],
                "slice": f"[{lead + ', ' if lead else ''}:{rows}, :{cols}]",
                "candidate": _matrix(cand), "reference": _matrix(ref)}
    return None


def collect_artifacts(exercise: Exercise, plan: Plan, checks: Sequence[CheckResult], candidate: RunResults,
                      golden: RunResults) -> dict | None:
    """The ``artifacts`` section of a scorecard, or None when there is nothing to keep.

    Never raises: the report's decorations must not change a grade. A fault here is recorded as
    ``{"error": ...}`` so it is seen, not hidden.
    """
    try:
        maps = heatmaps(plan, checks, candidate, golden)
    except Exception as exc:  # noqa: BLE001 - an optional section never fails grading
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"heatmaps": maps} if maps else None
