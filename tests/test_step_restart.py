"""One hanging step no longer costs every later check (issue #12, item 11): after a run ends on its
time limit part-way through the plan, the runner is restarted on the steps after the hung one."""

from __future__ import annotations

import numpy as np
import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan
from grader.grading.restart import MAX_RUNS, continuation
from grader.sandbox.base import Limits

# Hangs where the per-step alarm cannot reach it (SIGALRM blocked, as C code that never returns to
# the interpreter would), on the one 3-D input that holds a row of only -inf; correct everywhere else.
# (One case: each such hang costs a whole run, and the grading's budget is twice the run limit.)
HANGS_ON_ALL_NEG_INF = """
import signal
import numpy as np

def softmax(x, axis=-1):
    if x.dtype == np.float64 and x.ndim == 3 and np.isneginf(x).all(axis=axis).any():
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM, signal.SIGPROF])
        while True:
            pass
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))
    s = e.sum(axis=axis, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1), 0).astype(x.dtype)
"""


def _steps(*specs):
    """Wire steps from ``(id, op, target, objects used as args)``."""
    return [{"id": i, "op": op, "target": t, "args": [{"object": o} for o in objs]} for i, op, t, objs in specs]


def test_continuation_replays_the_objects_later_steps_need():
    steps = _steps(("c1", "construct", "Cache", ()), ("m1", "method", "c1", ()), ("f1", "call", "softmax", ()),
                   ("hung", "call", "softmax", ()), ("m2", "method", "c1", ()), ("f2", "call", "softmax", ()))
    rest, unrun = continuation(steps, "hung")
    assert [s["id"] for s in rest] == ["c1", "m1", "m2", "f2"] and unrun == []


def test_continuation_leaves_unrun_what_depends_on_the_hung_step():
    steps = _steps(("c1", "construct", "Cache", ()), ("hung", "method", "c1", ()), ("m2", "method", "c1", ()),
                   ("c2", "construct", "Other", ("c1",)), ("m3", "method", "c2", ()), ("f", "call", "softmax", ()))
    rest, unrun = continuation(steps, "hung")
    assert [s["id"] for s in rest] == ["f"]
    assert unrun == ["m2", "c2", "m3"]  # c1's state after the hung step is unknown, and c2 is built from it
    with pytest.raises(KeyError):
        continuation(steps, "nope")


@pytest.mark.slow
def test_a_solution_that_hangs_on_one_edge_case_still_earns_every_other_check(grade_source):
    exercise = get_exercise("softmax")
    seed = 8
    # Which steps hang, from the plan's own inputs (independently of any verdict).
    plan = build_plan(exercise, seed)
    hanging = {s.id: s.check for s in plan.steps
               if any(plan.arrays[a["array"]].dtype == np.float64 and plan.arrays[a["array"]].ndim == 3
                      and np.isneginf(plan.arrays[a["array"]]).all(axis=-1).any()
                      for a in s.wire.get("args", []) if "array" in a)}
    assert len(hanging) == 1, hanging  # each hang costs one run
    limits = Limits(wall_seconds=4.0, cpu_seconds=30, step_seconds=1.0)
    card = grade_source("softmax", HANGS_ON_ALL_NEG_INF, seed=seed, limits=limits)
    verdicts = {c.id: c.verdict for c in card.checks}
    hung_checks = set(hanging.values())
    assert {v for c, v in verdicts.items() if c in hung_checks} == {"timeout"}
    earned = {c: v for c, v in verdicts.items() if c not in hung_checks}
    assert earned and set(earned.values()) == {"passed"}, verdicts  # every check after a hang still counts
    assert card.status == "graded" and "restarted" in card.status_message
    assert card.score == sum(c.max_points for c in card.checks if c.id not in hung_checks)
    budget = card.sandbox["budget"]  # the hang, the restart and the hidden part shared one budget
    assert budget["first_hang"]["step"] == next(iter(hanging)) and budget["spent_s"] <= 2 * limits.wall_seconds
    assert f"The first call that hung was step {next(iter(hanging))}" in card.status_message
