"""grade batch on Ray: simulated nodes on this machine (ray.cluster_utils.Cluster) grade a cohort of
every exercise exactly as a local batch does, also when a node dies mid-batch, and a node whose
exercise files differ from the driver's is refused."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from grader.cohort.batch import batch  # noqa: E402
from grader.cohort.executors import LocalExecutor  # noqa: E402
from grader.cohort.ray_executor import RESOURCE, NodeRefused, RayExecutor  # noqa: E402
from grader.grading.exercise import exercise_ids, project_root  # noqa: E402
from grader.grading.scorecard import read_scorecard  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]

SAMPLES = project_root() / "submissions" / "samples"
NODE_STORE = 80 * 1024 * 1024
SIX = ("softmax", "attention_scores", "mha", "causal_mask", "kv_cache", "gqa")
SEED = 17


def _cohort(root: Path) -> Path:
    """One correct and one wrong sample of each of the six exercises: DIR/<exercise>/<candidate>.py."""
    for ex in SIX:
        samples = sorted((SAMPLES / ex).glob("*.py"))
        picks = [next(p for p in samples if p.name.startswith("correct_")),
                 next(p for p in samples if p.name.startswith("bug_"))]
        (root / ex).mkdir(parents=True)
        for p in picks:
            shutil.copyfile(p, root / ex / p.name)
    return root


def _essence(out: Path) -> dict:
    """(exercise, candidate) -> status, score and every check's verdict, points and message."""
    found = {}
    for path in sorted(out.glob("*/*.json")):
        card = read_scorecard(path)
        found[(path.parent.name, path.stem)] = (card.status, card.score, card.seed,
                                                [(c.id, c.verdict, c.points, c.message) for c in card.checks])
    return found


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    """The cohort and its local batch (one worker, its own reference cache): what Ray must reproduce."""
    root = _cohort(tmp_path_factory.mktemp("cohort"))
    out = tmp_path_factory.mktemp("local")
    old = os.environ.get("GRADER_CACHE_DIR")
    os.environ["GRADER_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache-local"))
    try:
        result = batch(root, out, jobs=1, sandbox="process", seed=SEED, executor=LocalExecutor(1))
    finally:
        if old is None:
            os.environ.pop("GRADER_CACHE_DIR", None)
        else:
            os.environ["GRADER_CACHE_DIR"] = old
    assert not result.interrupted and len(result.outcomes) == 2 * len(SIX)
    local = _essence(out)
    assert {s for s, *_ in local.values()} == {"graded"}
    # the samples grade as their names say, so the comparison below is between meaningful scorecards
    for (ex, cand), (_status, score, _seed, checks) in local.items():
        full = all(v == "passed" for _id, v, _p, _m in checks)
        assert full == cand.startswith("correct_"), (ex, cand, checks)
    return root, local


@pytest.fixture
def cluster(tmp_path):
    """A head that grades nothing (the driver's node) and two grading nodes of one CPU each, each with
    its own reference cache; shut down after the test."""
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": NODE_STORE,
                                                      "include_dashboard": False})
    nodes = [c.add_node(num_cpus=1, resources={RESOURCE: 1}, object_store_memory=NODE_STORE,
                        env_vars={"GRADER_CACHE_DIR": str(tmp_path / f"cache-node{i}")}) for i in range(2)]
    try:
        ray.init(address=c.address, log_to_driver=False)
        yield c, nodes
    finally:
        ray.shutdown()
        c.shutdown()


def test_a_cohort_on_two_nodes_gets_the_scorecards_of_a_local_batch(cohort, cluster, tmp_path):
    root, local = cohort
    ex = RayExecutor("auto", sandbox="process")
    assert ex.capacity == 2 and len(ex.nodes) == 2
    result = batch(root, tmp_path / "out", sandbox="process", seed=SEED, executor=ex)
    assert not result.interrupted
    assert _essence(tmp_path / "out") == local
    for i in range(2):  # each node filled its own reference cache
        assert list((tmp_path / f"cache-node{i}" / "references").glob("*.npz"))
    # resumable exactly as a local batch: a second run grades nothing
    again = batch(root, tmp_path / "out", sandbox="process", seed=SEED, executor=RayExecutor("auto", sandbox="process"))
    assert all(o.skipped for o in again.outcomes)


def test_a_node_lost_mid_batch_is_retried_elsewhere_with_the_same_results(cohort, cluster, tmp_path):
    root, local = cohort
    c, nodes = cluster
    killed = []

    def kill_first_node_after_first_result(_outcome):
        if not killed:
            c.remove_node(nodes[0], allow_graceful=False)
            killed.append(nodes[0])

    result = batch(root, tmp_path / "out", sandbox="process", seed=SEED,
                   executor=RayExecutor("auto", sandbox="process"), on_done=kill_first_node_after_first_result)
    assert killed and not result.interrupted
    # the GCS marks a node killed without grace dead after its health checks fail; the batch may end
    # first (the other node graded the rest), so wait for that state rather than read it at once
    deadline = time.monotonic() + 120
    while True:
        alive = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get(RESOURCE)]
        if len(alive) <= 1 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(alive) == 1
    assert _essence(tmp_path / "out") == local  # no infrastructure_error: the lost task ran again


def test_a_node_with_another_exercise_version_is_refused(cluster, tmp_path):
    c, _nodes = cluster
    home = tmp_path / "home"
    shutil.copytree(project_root() / "exercises", home / "exercises",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(project_root() / "reference", home / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    toml = home / "exercises" / "softmax" / "exercise.toml"
    text = toml.read_text()
    version = re.search(r'^version = "([^"]+)"', text, re.M).group(1)
    major, minor, patch = version.split(".")
    skewed = f"{major}.{minor}.{int(patch) + 1}"
    toml.write_text(text.replace(f'version = "{version}"', f'version = "{skewed}"', 1))
    c.add_node(num_cpus=1, resources={RESOURCE: 1}, object_store_memory=NODE_STORE,
               env_vars={"GRADER_HOME": str(home)})
    with pytest.raises(NodeRefused) as refused:
        RayExecutor("auto", sandbox="process")
    message = str(refused.value)
    assert f"exercise softmax version {skewed} (driver: {version})" in message
    assert len(re.findall(r"node \S+ \([0-9a-f]{8}\):", message)) == 1  # only the skewed node; the two others agree
    assert set(exercise_ids()) >= set(SIX)


def _sandbox_processes(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmd and "grade-process-" in cmd:
                found.append(cmd)
    return found


def test_ctrl_c_on_ray_local_keeps_what_finished_and_leaves_no_sandbox(tmp_path):
    root = tmp_path / "cohort"
    root.mkdir()
    shutil.copyfile(SAMPLES / "softmax/correct_logsumexp.py", root / "fast.py")
    for name in ("slow1", "slow2", "slow3"):
        (root / f"{name}.py").write_text("import time\ntime.sleep(120)\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # Ray would put its session (and its socket paths, capped at 107 bytes) under TMPDIR: not there
    env = {**os.environ, "TMPDIR": str(scratch), "RAY_TMPDIR": "/tmp", "GRADER_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "out"
    log = tmp_path / "batch.log"  # a file, not a pipe nobody reads while Ray starts
    with open(log, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "grader.cli", "batch", str(root), "--exercise", "softmax",
                                 "--out", str(out), "--sandbox", "process", "--jobs", "2", "--ray", "local", "-q"],
                                env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline and not (out / "softmax" / "fast.json").exists():
            time.sleep(0.3)
        assert (out / "softmax" / "fast.json").exists(), log.read_text(errors="replace")[-3000:]
        while time.monotonic() < deadline and not _sandbox_processes(str(scratch)):
            time.sleep(0.3)
        assert _sandbox_processes(str(scratch)), "no slow submission is running"
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, log.read_text(errors="replace")[-3000:]
    assert read_scorecard(out / "softmax" / "fast.json").all_passed
    assert "fast" in (out / "summary.csv").read_text()
    assert not list((out / "softmax").glob("slow*.json"))
    time.sleep(1)
    assert _sandbox_processes(str(scratch)) == []
