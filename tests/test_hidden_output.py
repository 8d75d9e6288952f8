"""Output printed during hidden steps never reaches the candidate view (issue #13): the runner tags
what the submission prints by plan step; the interviewer view keeps everything."""

from __future__ import annotations

import hashlib

import numpy as np

from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan

PRINTER = """
import hashlib
import numpy as np
print("imported")

def softmax(x, axis=-1):
    print("INPUT", hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest())
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))
    s = e.sum(axis=axis, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1), 0).astype(x.dtype)
"""


def _input_digests(seed: int) -> tuple[set[str], set[str]]:
    """sha256 of every input array of the plan's public and hidden steps, computed from the plan's own
    arrays here on the host (a transposed argument is the same logical array)."""
    exercise = get_exercise("softmax")
    visibility = {c.id: c.visibility for c in exercise.checks}
    public, hidden = set(), set()
    for step in build_plan(exercise, seed).steps:
        for arg in step.wire.get("args", []):
            if "array" in arg:
                arr = _plan_arrays(seed)[arg["array"]]
                digest = hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()
                (public if visibility.get(step.check) == "public" else hidden).add(digest)
    return public, hidden - public


_ARRAYS: dict[int, dict] = {}


def _plan_arrays(seed: int) -> dict:
    if seed not in _ARRAYS:
        _ARRAYS[seed] = build_plan(get_exercise("softmax"), seed).arrays
    return _ARRAYS[seed]


def test_candidate_view_holds_no_hidden_input_and_the_interviewer_view_all(grade_source):
    seed = 9
    card = grade_source("softmax", PRINTER, seed=seed)
    assert card.status == "graded" and card.score == card.max_score
    public, hidden = _input_digests(seed)
    assert public and hidden
    interviewer = card.output["text"]
    candidate = card.candidate_view().output["text"]
    printed = {line.split()[1] for line in interviewer.splitlines() if line.startswith("INPUT ")}
    assert hidden & printed, "the submission printed no hidden input: the test would prove nothing"
    assert public & printed
    shown = {line.split()[1] for line in candidate.splitlines() if line.startswith("INPUT ")}
    assert not shown & hidden  # not one hidden input reaches the candidate
    assert shown == public & printed  # every public one does
    assert "imported" in candidate  # output at import is the candidate's own
    assert "[output printed during hidden cases is never shown]" in candidate  # one fixed sentence
    assert card.candidate_view().seed is None
    assert "candidate_text" not in card.candidate_view().to_json()["output"]


def test_a_card_without_the_split_shows_the_candidate_nothing(grade_source):
    from dataclasses import replace

    card = grade_source("softmax", PRINTER, seed=2)
    legacy = replace(card, output={"text": card.output["text"], "truncated": False}, public=None)
    assert legacy.candidate_view().output == {"text": "", "truncated": False}
