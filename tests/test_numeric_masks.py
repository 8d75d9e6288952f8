"""The contract's masks: nonzero / True may attend, so a mask of 0 / 3 or of 0 / 0.5 / -2.0 must act like
the bool mask it stands for (/work/shared/EXERCISES.md, "Conventions"). Every exercise that takes a mask
grades such a mask in the check that judges numeric masks, in every track, and a solution that lets only
``mask == 1`` attend fails exactly that check and the hidden cases (which hold the same numeric kinds,
issue 24 item 6): the bank's ``mask_equals_one`` mutant of the track (the
one-line samples that repeated a correct sample became that mutant; each exercise's test writes its
edit into a correct style and asserts replay names it there), and mha's own-style sample."""

import numpy as np
import pytest

from attention_helpers import ROOT, failed, judge_in_process
from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan
from mutant_helpers import mutant_file

SAMPLES = ROOT / "submissions" / "samples"

# (exercise, track, the check that judges numeric masks)
CASES = [
    ("attention_scores", "numpy", "mask_numeric"),
    ("attention_scores", "torch", "mask_numeric"),
    ("mha", "torch", "numeric_mask"),
    ("gqa", "torch", "masks"),
    ("gqa", "numpy", "masks"),
    ("transformer_block", "torch", "numeric_mask"),
    ("transformer_block", "numpy", "numeric_mask"),
]


def _mask_values(plan, check: str) -> set[float]:
    """Every value held by the mask arguments of the cases of ``check``."""
    values: set[float] = set()
    for step in plan.steps:
        if step.check != check:
            continue
        for arg in step.wire.get("args", []):
            if isinstance(arg, dict) and arg.get("label") == "mask":
                values |= {float(v) for v in np.unique(plan.arrays[arg.get("array") or arg["tensor"]])}
    return values


@pytest.mark.parametrize("exercise_id,track,check", CASES)
def test_numeric_mask_check_holds_nonzero_values_other_than_one(exercise_id, track, check):
    ex = get_exercise(exercise_id, track=track)
    for seed in (1, 2):
        values = _mask_values(build_plan(ex, seed), check)
        assert 0.0 in values and 1.0 in values, values  # the 0/1 cases are still there
        assert values - {0.0, 1.0}, f"{exercise_id}/{track}: {check} only ever sees 0/1 masks"
    if exercise_id != "mha":  # mha's own mask cases (0 / 3) predate the float and negative values
        assert {3.0, 0.5, -2.0} <= _mask_values(build_plan(ex, 1), check)


#: the hidden check of each exercise, whose cases hold numeric masks too (``HIDDEN`` below)
HIDDEN_CHECK = {"attention_scores": "hidden_cases", "mha": "hidden_values", "gqa": "hidden_values",
                "transformer_block": "hidden_values"}


@pytest.mark.parametrize("exercise_id,track,check", CASES)
def test_mask_equals_one_fails_only_the_numeric_mask_checks(exercise_id, track, check, tmp_path):
    """The public check that judges numeric masks and the hidden cases, which hold them too (item 6)."""
    path = mutant_file(exercise_id, "mask_equals_one", tmp_path, track=track)
    assert failed(judge_in_process(exercise_id, path, track=track)) == {check, HIDDEN_CHECK[exercise_id]}


def test_mask_equals_one_in_mhas_own_style_fails_only_the_numeric_mask_checks():
    """mha's sample is its own style (an additive finfo.min bias, then the weights multiplied by the mask)."""
    assert failed(judge_in_process("mha", SAMPLES / "mha" / "bug_mask_equals_one.py")) == {"numeric_mask",
                                                                                           "hidden_values"}


# -- hidden cases as varied as public ones (issue 24, item 6) ----------------------------------------

# (exercise, track, the hidden check whose cases take a mask)
HIDDEN = [
    ("attention_scores", "numpy", "hidden_cases"),
    ("attention_scores", "torch", "hidden_cases"),
    ("mha", "torch", "hidden_values"),
    ("mha", "numpy", "hidden_values"),
    ("gqa", "torch", "hidden_values"),
    ("gqa", "numpy", "hidden_values"),
    ("transformer_block", "torch", "hidden_values"),
    ("transformer_block", "numpy", "hidden_values"),
    ("sliding_window_attention", "torch", "hidden_masks"),
    ("sliding_window_attention", "numpy", "hidden_masks"),
]


def _mask_kinds(plan, check: str) -> set[str]:
    """The numeric kinds among the masks of the cases of ``check``: ``0/1 int`` (an integer mask of 0 and
    1), ``0/3`` (a mask holding 3), ``0/0.5/-2`` (a float mask holding 0.5 and -2.0); ``bool`` too."""
    kinds: set[str] = set()
    for step in plan.steps:
        if step.check != check:
            continue
        for arg in step.wire.get("args", []):
            if not (isinstance(arg, dict) and arg.get("label") == "mask"):
                continue
            stored = plan.arrays[arg.get("array") or arg["tensor"]]
            dtype = np.dtype(arg.get("dtype") or stored.dtype.name) if arg.get("dtype") != "bool" else np.dtype(bool)
            values = {float(v) for v in np.unique(stored)}
            if dtype == bool:
                kinds.add("bool")
            elif np.issubdtype(dtype, np.integer) and values == {0.0, 1.0}:
                kinds.add("0/1 int")
            if 3.0 in values and values <= {0.0, 3.0}:
                kinds.add("0/3")
            if {0.5, -2.0} <= values and values <= {0.0, 0.5, -2.0}:
                kinds.add("0/0.5/-2")
    return kinds


@pytest.mark.parametrize("exercise_id,track,check", HIDDEN)
def test_hidden_cases_hold_every_numeric_mask_kind(exercise_id, track, check):
    ex = get_exercise(exercise_id, track=track)
    assert ex.check(check).visibility == "hidden"
    for seed in (1, 2, 11):
        kinds = _mask_kinds(build_plan(ex, seed), check)
        assert {"0/1 int", "0/3", "0/0.5/-2"} <= kinds, f"{exercise_id}/{track} seed {seed}: {sorted(kinds)}"


def test_every_exercise_that_takes_a_mask_is_listed_for_its_hidden_cases():
    """A masked exercise added later must join HIDDEN (and get numeric masks in its hidden cases)."""
    from grader.grading.exercise import exercise_ids  # noqa: PLC0415

    masked = set()
    for exercise_id in exercise_ids():
        for track in ("numpy", "torch"):
            plan = build_plan(get_exercise(exercise_id, track=track), 1)
            if any(isinstance(a, dict) and a.get("label") == "mask" for s in plan.steps
                   if s.check in {c.id for c in get_exercise(exercise_id, track=track).checks
                                  if c.visibility == "hidden"} for a in s.wire.get("args", [])):
                masked.add((exercise_id, track))
    assert masked == {(e, t) for e, t, _ in HIDDEN}
