"""The contract's masks: nonzero / True may attend, so a mask of 0 / 3 or of 0 / 0.5 / -2.0 must act like
the bool mask it stands for (/work/shared/EXERCISES.md, "Conventions"). Every exercise that takes a mask
grades such a mask in the check that judges numeric masks, in every track, and a solution that lets only
``mask == 1`` attend fails exactly that check: the bank's ``mask_equals_one`` mutant of the track (the
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


@pytest.mark.parametrize("exercise_id,track,check", CASES)
def test_mask_equals_one_fails_only_the_numeric_mask_check(exercise_id, track, check, tmp_path):
    path = mutant_file(exercise_id, "mask_equals_one", tmp_path, track=track)
    assert failed(judge_in_process(exercise_id, path, track=track)) == {check}


def test_mask_equals_one_in_mhas_own_style_fails_only_the_numeric_mask_check():
    """mha's sample is its own style (an additive finfo.min bias, then the weights multiplied by the mask)."""
    assert failed(judge_in_process("mha", SAMPLES / "mha" / "bug_mask_equals_one.py")) == {"numeric_mask"}
