"""The warm pool (grader/sandbox/pool.py): a pooled sandbox grades exactly as a fresh one, is used
once, and nothing of the pool outlives its shutdown or its grading process."""

from __future__ import annotations

import dataclasses
import json
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
    # the public part takes the waiting sandbox; the hidden part (a fresh sandbox, issue 20) takes the
    # replacement if it is ready by then, else starts cold
    assert pool.served in (1, 2), "the second grading did not take the waiting sandbox"
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
        taken = pool.take("numpy", exercise.limits, run=True)  # as PooledSandbox.run does: counted in flight at once
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


# -- the docker backend's warm containers ------------------------------------------------------------

PRINTS_50MB = b"import sys\nsys.stderr.write('x' * (50 * 1024 * 1024))\nsys.stderr.flush()\n"


def _labelled(client) -> list:
    from docker_helpers import labelled_containers  # noqa: PLC0415

    mine = f"attention-grader-{os.getpid()}-"
    return [c for c in labelled_containers(client) if c.name.startswith(mine)]


@pytest.fixture
def docker_pooled(docker_sandbox):
    """A docker-backend pool installed in this process for the test, closed and uninstalled after."""
    made = []

    def make(sizes):
        pool = WarmPool(docker_sandbox, sizes, poll_s=0.1)
        pool_mod.install(pool)
        made.append(pool)
        return pool

    yield make
    pool_mod.install(None)
    for pool in made:
        pool.close()


def _grade_cold_then_docker_pooled(docker_pooled, exercise_id, source, runtime, seed=11, limits=None):
    exercise = get_exercise(exercise_id)
    kw = {"limits": limits} if limits is not None else {}
    cold = grade_submission(exercise, "submission.py", sandbox="docker", seed=seed, source=source, **kw)
    pool = docker_pooled({runtime: 1})
    assert pool.wait_ready(runtime, limits or exercise.limits, timeout=240), "no warm container became ready"
    warm = grade_submission(exercise, "submission.py", sandbox="docker", seed=seed, source=source, **kw)
    assert pool.served in (1, 2), "the second grading did not take the waiting container"  # as above
    return cold, warm


@pytest.mark.docker
def test_docker_pooled_softmax_gets_the_same_scorecard_as_a_fresh_container(docker_pooled):
    source = (ROOT / "submissions/samples/softmax/correct_logsumexp.py").read_bytes()
    cold, warm = _grade_cold_then_docker_pooled(docker_pooled, "softmax", source, "numpy")
    assert cold.score == cold.max_score
    assert _essence(warm) == _essence(cold)
    assert warm.sandbox["backend"] == cold.sandbox["backend"] == "docker"
    assert warm.sandbox["isolation"] == cold.sandbox["isolation"]


@pytest.mark.docker
@pytest.mark.slow
def test_docker_pooled_mha_gets_the_same_scorecard_as_a_fresh_container(docker_pooled):
    source = (ROOT / "submissions/samples/mha/correct_einsum.py").read_bytes()
    cold, warm = _grade_cold_then_docker_pooled(docker_pooled, "mha", source, "torch")
    assert cold.score == cold.max_score
    assert _essence(warm) == _essence(cold)


@pytest.mark.docker
def test_docker_pooled_wrong_softmax_fails_the_same_checks(docker_pooled):
    source = (ROOT / "submissions/samples/softmax/bug_naive_exp.py").read_bytes()
    cold, warm = _grade_cold_then_docker_pooled(docker_pooled, "softmax", source, "numpy")
    assert cold.score < cold.max_score
    assert _essence(warm) == _essence(cold)


@pytest.mark.docker
@pytest.mark.parametrize("source, status", [(HANGS, "timeout"), (EXITS, "crashed"), (PRINTS_50MB, None)],
                         ids=["hangs", "exits", "prints-50MB"])
def test_hostile_imports_behave_the_same_in_a_pooled_container(docker_pooled, source, status):
    limits = dataclasses.replace(get_exercise("softmax").limits, wall_seconds=5.0, cpu_seconds=5)
    cold, warm = _grade_cold_then_docker_pooled(docker_pooled, "softmax", source, "numpy", seed=3, limits=limits)
    if status is not None:
        assert cold.status == status
    assert _essence(warm) == _essence(cold)


def _trivial_job(submission: bytes = b"def f():\n    return 1\n") -> SandboxJob:
    return SandboxJob(plan={"version": 1, "steps": [{"id": "s1", "op": "call", "target": "f", "args": [], "kwargs": {}}],
                            "forbidden_modules": [], "step_timeout_s": 5.0}, arrays={}, submission=submission)


@pytest.mark.docker
def test_a_pooled_container_runs_one_job_and_close_leaves_none(docker_sandbox):
    from docker.errors import NotFound  # noqa: PLC0415

    limits = get_exercise("softmax").limits
    pool = WarmPool(docker_sandbox, {"numpy": 1, "torch": 0}, poll_s=0.1)
    try:
        assert pool.wait_ready("numpy", limits, timeout=240)
        first = pool.take("numpy", limits)
        assert first is not None and first.ready.is_set()
        first_id, root = first.container.id, first.root
        run = docker_sandbox.run_warm(first, _trivial_job())
        assert run.infrastructure_error is None and run.exit_code == 0
        assert run.results.import_report["ok"] and run.results.done and run.results.steps["s1"].report["ok"]
        docker_sandbox.wait_removals()  # removed in the background once its run was read
        with pytest.raises(NotFound):
            docker_sandbox.client.containers.get(first_id)  # removed after its one run
        assert not os.path.exists(root)
        with pytest.raises(RuntimeError, match="one job"):
            docker_sandbox.run_warm(first, _trivial_job())
        assert pool.wait_ready("numpy", limits, timeout=240)  # replenished in the background
        deadline = time.monotonic() + 60
        while pool.waiting() < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        with pool._cond:
            waiting = [w for ready in pool._ready.values() for w in ready]
        assert waiting and all(w.container.id != first_id for w in waiting)  # a new container, never reused
        assert _labelled(docker_sandbox.client), "the waiting container should carry our label"
    finally:
        pool.close()
    assert _labelled(docker_sandbox.client) == []  # close() removed every container of ours
    assert not any(os.path.exists(w.root) for w in waiting)


@pytest.mark.docker
def test_pooled_container_has_the_hardening_of_a_cold_one(docker_sandbox, tmp_path):
    """HostConfig of a cold run's container (caught while it runs) equals a warm container's."""
    import threading  # noqa: PLC0415

    limits = get_exercise("softmax").limits
    seen: dict = {}
    stop = threading.Event()

    def catch():
        while not stop.is_set() and "cold" not in seen:
            for c in _labelled(docker_sandbox.client):
                seen.setdefault("cold", c.attrs)
            time.sleep(0.05)

    watcher = threading.Thread(target=catch, daemon=True)
    watcher.start()
    docker_sandbox.run(_trivial_job(b"import time\ntime.sleep(4)\ndef f():\n    return 1\n"), limits)
    stop.set()
    watcher.join()
    warm = docker_sandbox.start_warm("numpy", limits)
    try:
        warm.container.reload()
        hot = warm.container.attrs
    finally:
        warm.discard()
    assert "cold" in seen, "the cold container was not seen while it ran"
    cold_host, warm_host = dict(seen["cold"]["HostConfig"]), dict(hot["HostConfig"])
    for host in (cold_host, warm_host):
        assert [m["Target"] for m in host.pop("Mounts")] == ["/sandbox/input"]
    assert warm_host == cold_host
    assert warm_host["ReadonlyRootfs"] and warm_host["NetworkMode"] == "none" and warm_host["CapDrop"] == ["ALL"]
    assert hot["Config"]["User"] == seen["cold"]["Config"]["User"] == "65534:65534"
    assert hot["Config"]["Env"] == seen["cold"]["Config"]["Env"]
    assert hot["Config"]["OpenStdin"] and hot["Config"]["StdinOnce"]  # end of file when the grader goes
    assert set(hot["Config"]["Labels"]) == set(seen["cold"]["Config"]["Labels"])


@pytest.mark.docker
def test_cpu_spent_importing_before_the_job_is_not_the_jobs(docker_sandbox):
    """The host's cgroup observation of a warm torch container: torch's import (before ``go``) is not
    charged to the first step, whose observed CPU is that of returning a constant."""
    from grader.sandbox.observe import cgroup_cpu_source  # noqa: PLC0415

    limits = get_exercise("softmax").limits
    warm = docker_sandbox.start_warm("torch", limits)
    try:
        assert warm.ready.wait(240), "torch was not imported in time"
        before = cgroup_cpu_source(warm.container.id)()
    except BaseException:
        warm.discard()
        raise
    if before is None:
        warm.discard()
        pytest.skip("this engine's cgroup layout is not readable here (no observation, no cross-check)")
    run = docker_sandbox.run_warm(warm, _trivial_job())
    docker_sandbox.wait_removals()
    assert run.results.steps["s1"].report["ok"]
    observed = run.results.steps["s1"].observed_cpu_seconds
    assert before > 0.5  # importing torch cost the container at least this much CPU
    assert observed is not None and observed < before / 2


@pytest.mark.docker
def test_waiting_containers_end_when_their_grader_is_killed(docker_sandbox):
    """No atexit, no close: the attach connection closes, the runner reads end of file and exits;
    the next pool's sweep removes the container (its owner is gone)."""
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from grader.grading.exercise import get_exercise
        from grader.sandbox.docker import DockerSandbox
        from grader.sandbox.pool import WarmPool
        lim = get_exercise("softmax").limits
        pool = WarmPool(DockerSandbox.if_ready()[0], {{"numpy": 1, "torch": 0}}, poll_s=0.1)
        assert pool.wait_ready("numpy", lim, timeout=240)
        with pool._cond:
            print(*[w.container.id for r in pool._ready.values() for w in r], flush=True)
        os.kill(os.getpid(), 9)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    ids = out.stdout.split()
    assert ids, out.stderr
    from docker.errors import NotFound  # noqa: PLC0415

    client = docker_sandbox.client

    def state(container_id: str) -> str:
        try:
            return client.containers.get(container_id).status
        except NotFound:  # another grader's pool (a parallel test worker) swept it already: it ended
            return "removed"

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        states = [state(i) for i in ids]
        if all(s in ("exited", "removed") for s in states):
            break
        time.sleep(0.2)
    assert set(states) <= {"exited", "removed"}, states  # nothing of the killed grader runs on
    WarmPool(docker_sandbox, {"numpy": 0, "torch": 0}).close()  # a new pool sweeps it

    for i in ids:
        with pytest.raises(NotFound):
            client.containers.get(i)


@pytest.mark.docker
def test_select_sandbox_reuses_the_pools_docker_backend(docker_pooled):
    cold, cold_why = select_sandbox("docker")
    assert not isinstance(cold, PooledSandbox)
    pool = docker_pooled({"numpy": 0, "torch": 0})
    for name in ("docker", "auto"):
        backend, why = select_sandbox(name, require_isolation=True)
        assert isinstance(backend, PooledSandbox) and backend.backend is pool.backend  # no new probe of the engine
        assert backend.info() == cold.info()
    assert select_sandbox("docker")[1] == cold_why
    assert select_sandbox("auto")[1] == f"docker ({pool.backend.ready_reason})"
    from grader.sandbox import _docker_backend  # noqa: PLC0415

    assert _docker_backend()[0] is pool.backend
    pool.close()
    assert _docker_backend()[0] is not pool.backend  # closed: the engine is probed again


BOX_REPORT = b"""
import json, os
print("BOX " + json.dumps({"uid": os.getuid(), "pid": os.getpid(), "root": sorted(os.listdir("/")),
                           "cwd": os.getcwd(), "procs": sorted(p for p in os.listdir("/proc") if p.isdigit()),
                           "ns": {n: os.readlink("/proc/self/ns/" + n) for n in ("ipc", "mnt", "pid", "net")}}))

def softmax(x, axis=-1):
    raise NotImplementedError
"""


def test_a_pooled_process_sandbox_is_a_box_of_its_own_as_a_cold_run_is(pooled):
    # issue 20 item 5: a warm runner gets its own uid and namespaces (taken when it starts, given back
    # when it is discarded), not those of the run before or of another waiting runner
    from grader.sandbox.process import BOX_COUNT, BOX_UID_BASE  # noqa: PLC0415

    if ProcessSandbox().missing:
        pytest.skip(f"the process backend's box lacks {', '.join(ProcessSandbox().missing)} here")
    cold, warm = _grade_cold_then_pooled(pooled, "softmax", BOX_REPORT, "numpy")

    def box(card):
        line = next(ln for ln in card.output["text"].splitlines() if ln.startswith("BOX "))
        return json.loads(line[4:])

    c, w = box(cold), box(warm)
    for seen in (c, w):
        assert BOX_UID_BASE <= seen["uid"] < BOX_UID_BASE + BOX_COUNT
        assert seen["pid"] == 2 and seen["procs"] == ["2"]  # the runner alone (its init is hidden)
        assert seen["cwd"] == "/sandbox/scratch"
    assert c["root"] == w["root"] and "work" not in w["root"] and "home" not in w["root"]
    host = {n: os.readlink(f"/proc/self/ns/{n}") for n in c["ns"]}
    # none shared with the host (the cold run's were freed before the warm one started: their numbers may recur)
    assert all(c["ns"][n] != host[n] and w["ns"][n] != host[n] for n in host), (c["ns"], w["ns"], host)
