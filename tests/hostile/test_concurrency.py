"""Eight submissions graded at once under docker (hostile and correct mixed) get the same verdicts as
one at a time, and leave no container, child process or temporary folder behind.

What is left is counted exactly (this process's temporary folder, its children, the containers its
grader owns), not as the growth of the disk's used space: with pytest-xdist the other worker writes
reference caches to the same disk meanwhile, and that growth said nothing of this test."""

from __future__ import annotations

import dataclasses
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker
import pytest

from docker_helpers import labelled_containers
from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission
from grader.sandbox.docker import OWNER_LABEL, _owner
from test_corpus import CASES, FAST, Expectation, _children

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "submissions" / "samples" / "softmax"
MIX = [SAMPLES / "correct_logsumexp.py", SAMPLES / "bug_ignores_axis.py", CASES / "cpu_spin.py",
       CASES / "memory_bomb.py", CASES / "fork_bomb.py", CASES / "os_exit_mid_plan.py", CASES / "bait_npy_shape.py",
       CASES / "nasty_line.py"]


def _grade(path: Path):
    limits = (Expectation.parse(path).make_limits() if path.parent == CASES
              else dataclasses.replace(get_exercise("softmax").limits, **FAST))
    card = grade_submission(get_exercise("softmax"), path, sandbox="docker", seed=5, limits=limits)
    return card.status, {c.id: c.verdict for c in card.checks}


@pytest.mark.docker
@pytest.mark.slow
def test_eight_at_once_match_one_at_a_time(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    children = _children()

    one_at_a_time = [_grade(p) for p in MIX]
    with ThreadPoolExecutor(max_workers=len(MIX)) as pool:
        at_once = list(pool.map(_grade, MIX))

    for path, alone, together in zip(MIX, one_at_a_time, at_once):
        assert together == alone, f"{path.name}: {together[0]} vs {alone[0]}"
        assert alone[0] != "infrastructure_error", path.name
    assert one_at_a_time[0][0] == "graded" and set(one_at_a_time[0][1].values()) == {"passed"}
    assert list(scratch.iterdir()) == [], "temporary folders left behind"
    assert _children() <= children, "processes left behind"
    client, deadline = docker.from_env(), time.monotonic() + 30   # a removal may still be finishing
    while (mine := [c.name for c in labelled_containers(client) if c.labels.get(OWNER_LABEL) == _owner()]) \
            and time.monotonic() < deadline:
        time.sleep(0.5)
    assert mine == [], f"containers left behind: {mine}"
