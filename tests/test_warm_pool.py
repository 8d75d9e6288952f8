"""The warm pool (grader/sandbox/pool.py): a pooled sandbox grades exactly as a fresh one, is used
once, and nothing of the pool outlives its shutdown or its grading process."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission
from grader.sandbox import pool as pool_mod
from grader.sandbox import select_sandbox
from grader.sandbox.base import SandboxJob
from grader.sandbox.pool import PooledSandbox, WarmPool
from grader.sandbox.process import ProcessSandbox

ROOT = Path(__file__).resolve().parent.parent


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] == "Z"  # a zombie has ended
    except FileNotFoundError:
        return True


def _wait_gone(pids, timeout=30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(_gone(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if not _gone(p)]


def _essence(card) -> tuple:
    """What a scorecard says about the submission (no times, no sandbox timings)."""
    return (card.status, card.score, card.max_score,
            tuple((c.id, c.verdict, c.points) for c in card.checks))


@pytest.fixture
def pooled():
    """A process-backend pool installed in this process for the test, closed and uninstalled after."""
    made = []

    def make(sizes):
        pool = WarmPool(ProcessSandbox(), sizes, poll_s=0.1)
        pool_mod.install(pool)
        made.append(pool)
        return pool

    yield make
    pool_mod.install(None)
    for pool in made:
        pool.close()


def _grade_cold_then_pooled(pooled, exercise_id: str, source: bytes, runtime: str, seed: int = 11):
    exercise = get_exercise(exercise_id)
    cold = grade_submission(exercise, "submission.py", sandbox="process", seed=seed, source=source)
    pool = pooled({runtime: 1})
    assert pool.wait_ready(runtime, exercise.limits, timeout=180), "no warm sandbox became ready"
    warm = grade_submission(exercise, "submission.py", sandbox="process", seed=seed, source=source)
    assert pool.served == 1, "the second grading did not take the waiting sandbox"
    return cold, warm


def test_select_sandbox_wraps_the_backend_only_while_a_pool_is_installed(pooled):
    assert not isinstance(select_sandbox("process")[0], PooledSandbox)
    pooled({"numpy": 0, "torch": 0})
    backend, _why = select_sandbox("process")
    assert isinstance(backend, PooledSandbox)
    assert backend.info() == ProcessSandbox().info()  # the scorecard's sandbox section is unchanged


def test_pooled_softmax_gets_the_same_scorecard_as_a_fresh_sandbox(pooled):
    source = (ROOT / "submissions/samples/softmax/correct_logsumexp.py").read_bytes()
    cold, warm = _grade_cold_then_pooled(pooled, "softmax", source, "numpy")
    assert cold.score == cold.max_score  # a correct sample: full marks either way
    assert _essence(warm) == _essence(cold)
    assert warm.sandbox["backend"] == cold.sandbox["backend"] == "process"
    assert warm.sandbox["isolation"] == cold.sandbox["isolation"]


def test_pooled_softmax_wrong_sample_fails_the_same_checks(pooled):
    source = (ROOT / "submissions/samples/softmax").glob("bug_naive_exp.py")
    source = sorted(source)[0].read_bytes()
    cold, warm = _grade_cold_then_pooled(pooled, "softmax", source, "numpy")
    assert cold.score < cold.max_score
    assert _essence(warm) == _essence(cold)


@pytest.mark.slow
def test_pooled_mha_gets_the_same_scorecard_as_a_fresh_sandbox(pooled):
    source = (ROOT / "submissions/samples/mha/correct_einsum.py").read_bytes()
    cold, warm = _grade_cold_then_pooled(pooled, "mha", source, "torch")
    assert cold.score == cold.max_score
    assert _essence(warm) == _essence(cold)


def test_a_pooled_sandbox_runs_one_job_and_is_gone_after_it():
    backend = ProcessSandbox()
    exercise = get_exercise("softmax")
    pool = WarmPool(backend, {"numpy": 1, "torch": 0}, poll_s=0.1)
    try:
        assert pool.wait_ready("numpy", exercise.limits, timeout=120)
        first = pool.take("numpy", exercise.limits)
        assert first is not None and first.ready.is_set()
        pid, root = first.proc.pid, first.root
        job = SandboxJob(plan={"version": 1, "entry_module": "submission", "steps": [], "forbidden_modules": [],
                               "step_timeout_s": 5.0}, arrays={}, submission=b"x = 1\n")
        run = backend.run_warm(first, job)
        assert run.results.import_report and run.results.import_report["ok"] and run.results.done
        assert _wait_gone([pid], 10) == [] and not os.path.exists(root)
        with pytest.raises(RuntimeError, match="one job"):
            backend.run_warm(first, job)
        assert pool.wait_ready("numpy", exercise.limits, timeout=120)  # replenished in the background
        second = pool.take("numpy", exercise.limits)
        assert second is not None and second.proc.pid != pid
        second.discard()
    finally:
        pool.close()


def test_close_leaves_no_process_and_no_folder():
    exercise = get_exercise("softmax")
    pool = WarmPool(ProcessSandbox(), {"numpy": 2, "torch": 0}, poll_s=0.1)
    assert pool.wait_ready("numpy", exercise.limits, timeout=120)
    deadline = time.monotonic() + 120
    while pool.waiting() < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    with pool._cond:
        warm = [w for ready in pool._ready.values() for w in ready]
    assert len(warm) == 2
    pool.close()
    assert pool.waiting() == 0
    assert _wait_gone([w.proc.pid for w in warm], 10) == []
    assert not any(os.path.exists(w.root) for w in warm)
    assert pool.take("numpy", exercise.limits) is None  # closed: nothing more is started


def test_waiting_runners_end_when_their_grading_process_is_killed(tmp_path):
    """No atexit, no close: the runners see end of file on their stdin and exit by themselves."""
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from grader.grading.exercise import get_exercise
        from grader.sandbox.pool import WarmPool
        from grader.sandbox.process import ProcessSandbox
        lim = get_exercise("softmax").limits
        pool = WarmPool(ProcessSandbox(), {{"numpy": 1, "torch": 0}}, poll_s=0.1)
        assert pool.wait_ready("numpy", lim, timeout=120)
        with pool._cond:
            print(*[w.proc.pid for r in pool._ready.values() for w in r], flush=True)
        print(os.getpid(), file=sys.stderr, flush=True)
        os._exit(0)  # as if killed: no clean-up runs
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    pids = [int(p) for p in out.stdout.split()]
    assert pids, out.stderr
    assert _wait_gone(pids, 30) == []
    left = [p for p in Path(tempfile.gettempdir()).glob("grade-process-warm-*")
            if p.name.split("-")[3] in {str(pid) for pid in _owner_pids(out.stderr)}]
    assert left, "the killed grader's folder should still be there"
    WarmPool(ProcessSandbox(), {"numpy": 0, "torch": 0}).close()  # a new pool sweeps it
    assert not any(p.exists() for p in left)


def _owner_pids(stderr: str) -> list[int]:
    return [int(x) for x in stderr.split() if x.isdigit()]


HANGS = b"while True:\n    pass\n"
EXITS = b"import os\nos._exit(3)\n"


@pytest.mark.parametrize("source, status", [(HANGS, "timeout"), (EXITS, "crashed")], ids=["hangs", "exits"])
def test_hostile_imports_behave_the_same_in_a_pooled_sandbox(pooled, source, status):
    exercise = get_exercise("softmax")
    limits = dataclasses.replace(exercise.limits, wall_seconds=3.0, cpu_seconds=3)
    cold = grade_submission(exercise, "submission.py", sandbox="process", seed=3, source=source, limits=limits)
    pool = pooled({"numpy": 1})
    assert pool.wait_ready("numpy", limits, timeout=120)
    warm = grade_submission(exercise, "submission.py", sandbox="process", seed=3, source=source, limits=limits)
    assert pool.served == 1
    assert cold.status == status
    assert _essence(warm) == _essence(cold)


def test_a_key_that_still_has_a_sandbox_is_replenished_only_between_runs():
    exercise = get_exercise("softmax")
    pool = WarmPool(ProcessSandbox(), {"numpy": 2, "torch": 0}, poll_s=0.05)
    try:
        assert pool.wait_ready("numpy", exercise.limits, timeout=120)
        deadline = time.monotonic() + 120
        while pool.waiting() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        taken = pool.take("numpy", exercise.limits)
        pool.running(+1)  # as PooledSandbox.run does around the run
        time.sleep(1.0)
        assert pool.waiting() == 1 and pool.started == 2  # one left: no start during the run
        pool.running(-1)
        deadline = time.monotonic() + 60
        while pool.started < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.started == 3  # replaced once the run was over
        taken.discard()
    finally:
        pool.close()
