"""Complexity verdicts must not flip when the machine is busy: they rest on counts, not clocks.

Two parts, both while two other processes keep both cores busy:

* a correct and a wrong-complexity sample graded through the sandbox several times each: the
  complexity verdicts never change;
* every correct sample of every exercise and track (``correct_*.py``) has its probe steps run
  in-process, twice: every probe passes, by counting (``method == "count"``, never the timing
  fallback), with the same figures both times; every bug sample whose ``Must fail:`` line names a
  probe's check fails it with a margin of at least 2x over the bound (ratio or slope).
"""
import functools
import multiprocessing
import time
from pathlib import Path

import pytest

from grader.cohort.selfcheck import expected_failures
from grader.grading.exercise import exercise_ids, get_exercise
from grader.grading.grade import build_plan, grade_submission, run_in_process
from grader.judge.judges import JudgeContext
from grader.run.instruments import install_numpy_hooks
from grader.run.runner import load_submission

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
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


def _samples(prefix: str) -> list:
    found = []
    for ex_id in exercise_ids():
        base = get_exercise(ex_id)
        if not base.probes:
            continue
        folder = ROOT / "submissions" / "samples" / ex_id
        tracks = [(None, folder)] + [(d.name, d) for d in sorted(folder.iterdir()) if d.is_dir()]
        for track, where in tracks:
            for path in sorted(where.glob(f"{prefix}_*.py")):
                found.append(pytest.param(ex_id, track, path, id=f"{ex_id}-{track or 'default'}-{path.stem}"))
    return found


@functools.lru_cache(maxsize=None)
def _reference_probes(exercise_id: str, track: str | None, seed: int) -> tuple:
    """``(exercise, plan, expected)``: the plan's probe steps alone and the reference's measured run of
    them, once per exercise and track (every sample of a track is judged against the same run)."""
    ex = get_exercise(exercise_id, track=track)
    plan = build_plan(ex, seed)
    checks = {p.check for p in ex.probes}
    plan.steps = [s for s in plan.steps if s.check in checks]  # measured steps and their set-up
    install_numpy_hooks()  # as the sandbox's runner does before importing the submission
    return ex, plan, run_in_process(plan.wire(), plan.arrays, ex.load_reference())


def _probe_outcomes(exercise_id: str, track: str | None, path: Path, seed: int = 0) -> dict:
    """Probe outcomes by check id: only the probe steps of the plan, run in-process, judged as the host does."""
    ex, plan, expected = _reference_probes(exercise_id, track, seed)
    install_numpy_hooks()
    module = load_submission(str(path), f"noise_{exercise_id}_{track}_{path.stem}")
    got = run_in_process(plan.wire(), plan.arrays, module, str(path))
    outcomes = {}
    for step in plan.steps:
        if step.judge is None:
            continue
        ctx = JudgeContext(step=step, plan=plan, got=got.steps.get(step.id), expected=expected.steps[step.id],
                           golden=expected.steps[step.id], candidate_steps=got.steps,
                           expected_steps=expected.steps, golden_steps=expected.steps)
        outcomes[step.check] = step.judge(ctx)
    assert {p.check for p in ex.probes} == set(outcomes)
    return outcomes


@pytest.mark.parametrize("exercise_id, track, path", _samples("correct"))
def test_every_correct_style_passes_every_probe_by_counting(busy_cores, exercise_id, track, path):
    first = _probe_outcomes(exercise_id, track, path)
    second = _probe_outcomes(exercise_id, track, path)
    for check, outcome in first.items():
        assert outcome.verdict == "passed", f"{check}: {outcome.message}"
        assert outcome.details["method"] == "count"
        if outcome.details["quantity"] != "peak_bytes":  # tracemalloc peaks may differ by a few bytes
            assert outcome.details["candidate"] == second[check].details["candidate"]
        assert second[check].verdict == "passed"


@pytest.mark.parametrize("exercise_id, track, path", _samples("bug"))
def test_complexity_mistakes_fail_with_a_2x_margin(exercise_id, track, path):
    ex = get_exercise(exercise_id, track=track)
    named = set(expected_failures(path)) & {p.check for p in ex.probes}
    if not named:
        pytest.skip("not a complexity mistake")
    outcomes = _probe_outcomes(exercise_id, track, path)
    for check in named:
        d = outcomes[check].details
        assert outcomes[check].verdict == "failed" and d["method"] == "count"
        margin = max(max(d["ratios"]) / d["max_ratio"], d["ratio_slope"] / d["max_ratio_slope"])
        assert margin >= 2.0, f"{check}: only {margin:.2f}x over the bound"
