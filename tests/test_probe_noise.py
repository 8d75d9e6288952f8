"""Complexity verdicts must not flip when the machine is busy: they rest on counts, not clocks.

Grades a correct and a wrong-complexity sample 10 times each while two other processes keep both
cores busy, and asserts the complexity verdicts never change.
"""
import multiprocessing
import time

import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission

pytestmark = pytest.mark.slow

CASES = [
    ("softmax", "correct_logsumexp.py", "memory_scaling", "passed"),
    ("softmax", "bug_pairwise_quadratic.py", "memory_scaling", "failed"),
    ("kv_cache", "correct_concat.py", "decode_complexity", "passed"),
    ("kv_cache", "bug_recompute_kv.py", "decode_complexity", "failed"),
]


def _spin(deadline: float) -> None:
    x = 0
    while time.monotonic() < deadline:
        x += 1


@pytest.fixture
def busy_cores():
    deadline = time.monotonic() + 600
    procs = [multiprocessing.Process(target=_spin, args=(deadline,), daemon=True) for _ in range(2)]
    for p in procs:
        p.start()
    yield
    for p in procs:
        p.terminate()
        p.join()


@pytest.mark.parametrize("exercise_id, sample, check, expected", CASES)
def test_no_verdict_flips_under_load(busy_cores, request, exercise_id, sample, check, expected):
    ex = get_exercise(exercise_id)
    path = request.config.rootpath / "submissions" / "samples" / exercise_id / sample
    runs = 10 if exercise_id == "softmax" else 4
    seen = []
    for seed in range(runs):
        card = grade_submission(ex, path, sandbox="process", seed=seed)
        seen.append(next(c.verdict for c in card.checks if c.id == check))
    assert seen == [expected] * runs
