"""A probe's first size is never charged for the submission's one-time set-up (``PlanBuilder.warm_up``).

The plan runs each probe's first size once, unmeasured, before its measured sweep, so a library's
lazy initialisation (``numpy.ma``'s first use, torch's first op, a cache built on the first call) is
paid outside the measured steps even when the probe steps run alone (a runner restarted just before
the probes). The warm-up copies are unmeasured, build their own objects and are no value steps.
"""
import textwrap

import pytest

from grader.grading.diagnosis import value_steps
from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan, run_in_process
from grader.judge.judges import JudgeContext
from grader.judge.verdicts import Verdict
from grader.run.instruments import install_numpy_hooks
from grader.run.plan import WARM_UP_PREFIX
from grader.run.runner import load_submission

# A correct softmax whose first call builds a 1 MiB table it keeps (a lazily initialised library, in
# miniature): 1 MiB is 67x the reference's peak at the smallest row length (15.6 kB), allowed 8x.
LAZY = textwrap.dedent('''
    import numpy as np

    _CACHE = {}


    def softmax(x, axis=-1):
        if "table" not in _CACHE:
            _CACHE["table"] = np.arange(1 << 17, dtype=np.float64)
        x = np.asarray(x)
        top = np.max(x, axis=axis, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        e = np.exp(x - top)
        s = np.sum(e, axis=axis, keepdims=True)
        return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
''')


def _memory_scaling_of_probe_steps_alone(path, warm_up: bool):
    """The ``memory_scaling`` outcome of softmax with only that probe's steps run, in this process."""
    ex = get_exercise("softmax")
    plan = build_plan(ex, 0)
    plan.steps = [s for s in plan.steps if s.check == "memory_scaling"
                  and (warm_up or not s.meta.get("warm_up"))]
    install_numpy_hooks()
    expected = run_in_process(plan.wire(), plan.arrays, ex.load_reference())
    module = load_submission(str(path), f"warm_up_{path.stem}_{warm_up}")
    got = run_in_process(plan.wire(), plan.arrays, module, str(path))
    step = next(s for s in plan.steps if s.judge is not None)
    ctx = JudgeContext(step=step, plan=plan, got=got.steps.get(step.id), expected=expected.steps[step.id],
                       golden=expected.steps[step.id], candidate_steps=got.steps,
                       expected_steps=expected.steps, golden_steps=expected.steps)
    return step.judge(ctx)


@pytest.mark.parametrize("warm_up", [True, False])
def test_a_first_call_set_up_is_not_charged_to_the_smallest_size(tmp_path, warm_up):
    path = tmp_path / "lazy_softmax.py"
    path.write_text(LAZY)
    outcome = _memory_scaling_of_probe_steps_alone(path, warm_up)
    assert outcome.details["method"] == "count"
    if warm_up:
        assert outcome.verdict == Verdict.PASSED, outcome.message
        assert max(outcome.details["ratios"]) < 2.0  # the per-call peak only: the table is never seen
    else:  # without the warm-up the 1 MiB table lands in the first size: what the warm-up prevents
        assert outcome.details["candidate"][0] > (1 << 20)
        assert outcome.details["ratios"][0] > outcome.details["max_ratio"]
        # the ratio bound reads the larger half of the sweep (grader.judge.probes.judge_series), where
        # the table is a small part of the peak: a second defence, so the check still passes
        assert max(outcome.details["ratios"][len(outcome.details["ratios"]) // 2:]) < outcome.details["max_ratio"]
        assert outcome.verdict == Verdict.PASSED, outcome.message


@pytest.mark.parametrize("exercise_id", ["softmax", "kv_cache", "flash_attention"])
def test_warm_up_copies_the_first_size_unmeasured_with_its_own_objects(exercise_id):
    ex = get_exercise(exercise_id)
    plan = build_plan(ex, 0)
    ids = [s.id for s in plan.steps]
    for probe in ex.probes:
        warm = [s for s in plan.steps if s.check == probe.check and s.meta.get("warm_up")]
        # the first size's own steps follow the warm-up, up to its last measured step, unchanged
        measured_first = [s.id for s in plan.steps if s.check == probe.check and "measure" in s.wire
                          and s.meta["size"] == probe.sizes[0]]
        start = ids.index(warm[-1].id) + 1
        first = plan.steps[start:ids.index(measured_first[-1]) + 1]
        assert ids.index(warm[0].id) == start - len(warm) and len(warm) == len(first)
        assert [w.id for w in warm] == [WARM_UP_PREFIX + s.id for s in first]
        for w, s in zip(warm, first):
            assert "measure" not in w.wire and w.judge is None
            assert {k: v for k, v in w.wire.items() if k not in ("id", "save_as", "target")} == \
                {k: v for k, v in s.wire.items() if k not in ("id", "save_as", "target", "measure")}
            if s.wire["op"] == "construct":
                assert w.wire["save_as"] == WARM_UP_PREFIX + s.wire["save_as"]
            if s.wire["op"] in ("method", "getattr"):
                assert w.wire["target"] == WARM_UP_PREFIX + s.wire["target"]
    assert not any(i.startswith(WARM_UP_PREFIX) for i in value_steps(plan))
