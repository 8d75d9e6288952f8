"""Eight submissions graded at once under docker (hostile and correct mixed) get the same verdicts as
one at a time, and leave no container, child process or temporary folder behind; the host's
temporary space returns to where it was."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission
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
    used_before = shutil.disk_usage(tempfile.gettempdir()).used

    one_at_a_time = [_grade(p) for p in MIX]
    with ThreadPoolExecutor(max_workers=len(MIX)) as pool:
        at_once = list(pool.map(_grade, MIX))

    for path, alone, together in zip(MIX, one_at_a_time, at_once):
        assert together == alone, f"{path.name}: {together[0]} vs {alone[0]}"
        assert alone[0] != "infrastructure_error", path.name
    assert one_at_a_time[0][0] == "graded" and set(one_at_a_time[0][1].values()) == {"passed"}
    assert list(scratch.iterdir()) == [], "temporary folders left behind"
    assert _children() <= children, "processes left behind"
    grown = shutil.disk_usage(tempfile.gettempdir()).used - used_before
    assert grown < 64 * 1024**2, f"host temporary space grew by {grown} bytes"
